"""gpu-sharing-valid: GPU sharing settings that the GPU and the software can actually honour.

- GKE node pools (guestAccelerators): gpuPartitionSize (MIG) only on MIG-capable GPUs and only with a
  profile that GPU has; no MPS together with MIG; maxSharedClientsPerGpu >= 2 (one client is not
  sharing) and <= 48 (GKE's limit).
- NVIDIA device plugin configs in ConfigMaps (any key whose YAML has `sharing:`): time-slicing and MPS
  replicas >= 2; MPS not combined with a MIG strategy (k8s-device-plugin README: MPS is not supported
  together with MIG).
- AMD Device Config Manager ConfigMaps (`config.json` with "gpu-config-profiles"): known compute/memory modes, NPS4
  only with CPX, NPS1 and NPS4 not mixed in one profile (ROCm/gpu-operator device-config-manager-configmap.md);
  AMD DeviceConfigs: no operand tolerates the DCM's `amd-dcm` NoExecute taint (applying-partition-profiles.rst:
  operands must restart after partitioning to see the new partitions). Which pair a given GPU runs is checked
  when the stack is read (gpufleet/base/spec/features/amd_checks.py, exit 2): the pack does not see the pool's GPU here.
MIG facts: gpufleet/base/catalog/gpus.yaml (mig-parted v0.15.0 layouts).
"""

from __future__ import annotations

import functools

import yaml
from pulumi_policy import EnforcementLevel, ResourceValidationPolicy

from gpufleet.base import catalog
from gpufleet.base import labels
from gpufleet.base.catalog import gcp
from gpufleet.policies import amd_inputs as A
from gpufleet.policies import inputs as I

NAME = "gpu-sharing-valid"
GKE_MAX_SHARED_CLIENTS = 48


def _gke(props) -> list[str]:
    out = []
    for i, acc in enumerate(I.gke_accelerators(props)):
        where = f"nodeConfig.guestAccelerators[{i}]"
        acc_type = I.text(I.get(acc, "type")) or ""
        partition = I.text(I.get(acc, "gpuPartitionSize"))
        sharing = I.get(acc, "gpuSharingConfig")
        strategy = I.text(I.get(sharing, "gpuSharingStrategy"))
        clients = I.number(I.get(sharing, "maxSharedClientsPerGpu"))
        if partition:
            model = gcp.accelerator_gpu(acc_type)
            gpu = catalog.gpu_models().get(model) if model else None
            if gpu is None:
                out.append(f"{where}: MIG partition {partition} on accelerator '{acc_type}', which the catalog does not know: cannot confirm MIG support")
            elif not gpu.mig_capable:
                out.append(f"{where}: gpuPartitionSize {partition} on {gpu.name} ({acc_type}), which has no MIG (MIG GPUs: {', '.join(n for n, g in catalog.gpu_models().items() if g.mig_capable)})")
            elif partition not in gpu.mig.profiles:
                out.append(f"{where}: MIG profile {partition} does not exist on {gpu.name} (profiles: {', '.join(gpu.mig.profiles)})")
            if strategy == "MPS":
                out.append(f"{where}: MPS sharing together with MIG partition {partition} is not supported")
        if I.mapping(sharing):
            if clients is None:
                out.append(f"{where}: gpuSharingConfig without maxSharedClientsPerGpu")
            elif clients < 2:
                out.append(f"{where}: maxSharedClientsPerGpu is {clients:g}: sharing needs at least 2 clients per GPU")
            elif clients > GKE_MAX_SHARED_CLIENTS:
                out.append(f"{where}: maxSharedClientsPerGpu is {clients:g}; GKE allows at most {GKE_MAX_SHARED_CLIENTS}")
    return out


def _device_plugin_config(key: str, doc) -> list[str]:
    out = []
    sharing = I.get(doc, "sharing")
    for mode in ("timeSlicing", "mps"):
        for j, res in enumerate(I.items(I.get(sharing, mode, "resources"))):
            replicas = I.number(I.get(res, "replicas"))
            if replicas is None or replicas < 2:
                got = "missing" if replicas is None else f"{replicas:g}"
                out.append(f"data.{key}: sharing.{mode}.resources[{j}].replicas is {got}: sharing needs at least 2 replicas")
    mig = I.text(I.get(doc, "flags", "migStrategy"))
    if I.mapping(I.get(sharing, "mps")) and mig and mig != "none":
        out.append(f"data.{key}: MPS sharing with migStrategy '{mig}': MPS is not supported together with MIG")
    return out


@functools.lru_cache(maxsize=256)
def _parsed(text: str):
    """The YAML document (None when it does not parse); a stack repeats the same config in many places.
    Callers only read the result."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return None


def _config_map(props) -> list[str]:
    out = []
    for key, value in sorted(I.mapping(I.get(props, "data")).items()):
        if not isinstance(value, str) or "sharing" not in value:
            continue
        doc = _parsed(value)
        if isinstance(doc, dict) and isinstance(doc.get("sharing"), dict):
            out += _device_plugin_config(key, doc)
    return out


def _dcm(props) -> list[str]:
    profiles = A.dcm_profiles(props)
    if profiles is None:
        return []
    if not profiles:
        return [f"data.{A.DCM_KEY}: no DCM profiles (gpu-config-profiles) could be read"]
    return [f"data.{A.DCM_KEY}: {m}" for name, p in sorted(profiles.items()) for m in A.profile_problems(name, p)]


def _device_config(props) -> list[str]:
    return [
        f"the {what} tolerates the {labels.AMD_DCM_TAINT_KEY} taint: it keeps running while the Device Config Manager "
        "partitions the GPUs and never sees the new partitions; remove that toleration"
        for what, tolerations in A.operands(I.get(props, "spec"))
        if what != "Device Config Manager" and any(I.get(t, "key") == labels.AMD_DCM_TAINT_KEY for t in tolerations)
    ]


def check(resource_type: str, props) -> list[str]:
    if resource_type == I.GKE_NODE_POOL:
        return _gke(props)
    if resource_type == I.CONFIG_MAP:
        return _config_map(props) + _dcm(props)
    if resource_type == A.DEVICE_CONFIG:
        return _device_config(props)
    return []


POLICY = ResourceValidationPolicy(
    name=NAME,
    description="GPU sharing (MIG, MPS, time-slicing) is configured the way the GPU and the device plugin support.",
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=I.resource_validator(NAME, check, types=(I.GKE_NODE_POOL, I.CONFIG_MAP, A.DEVICE_CONFIG)),
    config_schema=I.exemptions_schema(),
)
