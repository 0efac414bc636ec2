"""Grace superchip facts (GB200, GB300) against the stack (issue 49). The catalog says what a node of these GPUs is
(gpufleet/base/catalog/gpus.yaml `host`, source grace_trays): one compute tray with 4 GPUs and an Arm Grace CPU.

- A pool that states its own GPU count (k3s hosts, an existing cluster) must state the tray's: with more GPUs per node
  than a tray has, capacity, quotas and the DRA domain sizes would all be wrong (gpus.yaml host.gpus_per_node).
- Precompiled driver containers are built for x86_64 only (GPU Operator, "Precompiled Driver Containers",
  Limitations: docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/precompiled-drivers.html; see
  cold_start.PRECOMPILED_KERNEL_VARIANTS), so a Grace node never finds its image and gets no driver.
The k3s air-gap files of the right architecture: gpufleet/base/spec/platforms/k3s_checks.py (`_airgap_arch`).
"""

from __future__ import annotations

from typing import Any, Optional

from gpufleet.base import catalog
from gpufleet.base.spec.errors import Problem
from gpufleet.base.spec.shape import shaped

NS = "gpufleet"


def host_model(pool: Any, platform: str) -> Optional[catalog.GpuModel]:
    """The pool's GPU model when it fixes the node (a superchip: `host_arch` set), else None."""
    model = catalog.gpu_models().get(shaped(pool, platform).gpu or "")
    return model if model is not None and model.host_arch else None


def check(stack: str, spec: Any) -> list[Problem]:
    platform = spec.cluster.platform
    problems: list[Problem] = []
    arm = []
    for i, pool in enumerate(spec.node_pools):
        model = host_model(pool, platform)
        if model is None:
            continue
        if model.host_arch == "arm64":
            arm.append(pool.name)
        given = pool.gpus_per_node if "gpus_per_node" in pool.model_fields_set else None
        if model.host_gpus and given is not None and given != model.host_gpus:
            problems.append(Problem(stack, f"{NS}:nodePools[{i}].gpusPerNode", f"a {model.name} node is one compute "
                                    f"tray with {model.host_gpus} GPUs (two Grace superchips; gpufleet/base/catalog/"
                                    f"gpus.yaml grace_trays): use {model.host_gpus}", given))
    driver = spec.gpu_operator.driver
    if arm and driver.precompiled and driver.source == "operator" and spec.gpu_operator.enabled:
        problems.append(Problem(stack, f"{NS}:gpuOperator.driver.precompiled", f"pools {', '.join(arm)} run on Arm "
                                "(Grace) and NVIDIA builds precompiled driver containers for x86_64 only (GPU Operator, "
                                "Precompiled Driver Containers, Limitations): their nodes would get no driver; set "
                                "precompiled: false (the driver is compiled on the node)", True))
    return problems
