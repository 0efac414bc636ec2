"""Defensive readers for AMD GPU Operator resources (issue 17), shared by the rules that know AMD.

What reaches the pack: the operator's Helm release (chart `gpu-operator-charts`), one `amd.com/v1alpha1`
DeviceConfig per AMD pool (custom resource inputs: apiVersion, kind, metadata, spec), the Device Config Manager's
ConfigMap (`data["config.json"]`, "gpu-config-profiles"), and the operator namespace's annotations
(`gpufleet.io/rocm-versions`, `gpufleet.io/amd-driver-version`). Upstream facts: ROCm/gpu-operator docs
(device_plugin/device-plugin.md, dcm/device-config-manager-configmap.md, dcm/applying-partition-profiles.rst).
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Optional

from gpufleet.base import labels, versions
from gpufleet.base.catalog import amd
from gpufleet.policies import inputs as I

DEVICE_CONFIG = "kubernetes:amd.com/v1alpha1:DeviceConfig"
AMD_OPERATOR_CHART = versions.AMD_GPU_OPERATOR.name
DCM_KEY = "config.json"
ROCM_VERSIONS_ANNOTATION = labels.ROCM_VERSIONS_ANNOTATION
AMD_DRIVER_ANNOTATION = labels.AMD_DRIVER_ANNOTATION
# (block, enable field, its default when unset, tolerations field, what it is) of each DeviceConfig operand.
OPERANDS = (
    ("devicePlugin", "enableDevicePlugin", True, "devicePluginTolerations", "device plugin"),
    ("devicePlugin", "enableNodeLabeller", True, "nodeLabellerTolerations", "node labeller"),
    ("metricsExporter", "enable", False, "tolerations", "metrics exporter"),
    ("configManager", "enable", False, "configManagerTolerations", "Device Config Manager"),
)


def releases(resources: Iterable[Any]) -> list[Any]:
    return [r for r in I.helm_charts(resources) if I.chart_of(r.props) == AMD_OPERATOR_CHART]


def device_configs(resources: Iterable[Any]) -> list[Any]:
    return I.of_type(resources, DEVICE_CONFIG)


def operands(spec: Any) -> list[tuple[str, list]]:
    """(what, tolerations) of every operand the DeviceConfig spec turns on."""
    out = []
    for block, enable, default, field, what in OPERANDS:
        on = I.get(spec, block, enable, default=default)
        if on is True:
            out.append((what, I.items(I.get(spec, block, field))))
    return out


def tolerates(tolerations: list, key: str, effect: str) -> bool:
    for t in tolerations:
        if I.get(t, "effect") not in (None, "", effect):
            continue
        if I.get(t, "operator") == "Exists" and I.get(t, "key") in (None, "", key):
            return True
        if I.get(t, "key") == key:
            return True
    return False


def dcm_profiles(props: Any) -> Optional[dict]:
    """The ConfigMap's DCM profiles ("gpu-config-profiles"), None when it is not a DCM config."""
    text = I.text(I.get(props, "data", DCM_KEY))
    if not text or "gpu-config-profiles" not in text:
        return None
    try:
        doc = json.loads(text)
    except ValueError:
        return {}
    profiles = doc.get("gpu-config-profiles") if isinstance(doc, dict) else None
    return profiles if isinstance(profiles, dict) else {}


def profile_problems(name: str, profile: Any) -> list[str]:
    """The DCM ConfigMap's own rules (device-config-manager-configmap.md, 'Supported Partition Modes'), which hold
    on every GPU: known modes, NPS4 only with CPX, NPS1 and NPS4 not mixed in one profile, numGPUsAssigned >= 1."""
    out = []
    parts = profile.get("profiles") if isinstance(profile, dict) else None
    if not isinstance(parts, list) or not parts:
        return [f"DCM profile '{name}' has no profiles list"]
    memories = set()
    for j, p in enumerate(parts):
        p = p if isinstance(p, dict) else {}
        compute, memory, count = p.get("computePartition"), p.get("memoryPartition"), p.get("numGPUsAssigned")
        where = f"DCM profile '{name}' profiles[{j}]"
        if compute not in amd.COMPUTE_MODES:
            out.append(f"{where}: computePartition {compute!r} is not one of {', '.join(amd.COMPUTE_MODES)}")
        if memory not in amd.MEMORY_MODES:
            out.append(f"{where}: memoryPartition {memory!r} is not one of {', '.join(amd.MEMORY_MODES)}")
        elif memory == "NPS4" and compute != "CPX":
            out.append(f"{where}: memoryPartition NPS4 runs only with computePartition CPX (got {compute})")
        memories.add(memory)
        if "numGPUsAssigned" in p and not (isinstance(count, (int, float)) and count >= 1):
            out.append(f"{where}: numGPUsAssigned is {count!r}: at least 1")
    if {"NPS1", "NPS4"} <= memories:
        out.append(f"DCM profile '{name}' mixes NPS1 and NPS4, which one profile cannot")
    return out


def driver_of(props: Any) -> Optional[str]:
    """The AMD GPU Driver a DeviceConfig has the operator load (None: inbox, or no version given)."""
    if I.get(props, "spec", "driver", "enable", default=True) is False:
        return None
    return I.text(I.get(props, "spec", "driver", "version"))


def known_release(version: Any) -> bool:
    return version in amd.operator_releases()
