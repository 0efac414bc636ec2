"""Label, taint and annotation keys shared by components and policies, so they cannot drift."""

from __future__ import annotations

# The extended resource the NVIDIA device plugin advertises, and the taint key that keeps
# non-GPU work off GPU nodes (the GPU Operator's daemonsets tolerate it by default).
GPU_RESOURCE = "nvidia.com/gpu"
GPU_TAINT_KEY = "nvidia.com/gpu"
GPU_TAINT_VALUE = "true"
GPU_TAINT_EFFECT = "NoSchedule"

# Labels gpufleet puts on every GPU node so schedulers, queues and policies can select them.
POOL_LABEL = "gpufleet.io/pool"
GPU_MODEL_LABEL = "gpufleet.io/gpu-model"
CAPACITY_TYPE_LABEL = "gpufleet.io/capacity-type"  # on-demand | spot
GPU_NODE_LABEL = "gpufleet.io/gpu"  # "true" on GPU nodes

# Spot nodes carry this taint in addition to the GPU taint: only interruption-tolerant work lands.
SPOT_TAINT_KEY = "gpufleet.io/spot"

# Per-node selectors read by the GPU Operator (device plugin sharing config, MIG layout).
DEVICE_PLUGIN_CONFIG_LABEL = "nvidia.com/device-plugin.config"
MIG_CONFIG_LABEL = "nvidia.com/mig.config"

# Declarations the policy pack reads off a Kubernetes object (the GPU Operator's namespace), so
# `pulumi preview --policy-pack policies` judges driver/CUDA alignment without extra policy config.
CUDA_VERSIONS_ANNOTATION = "gpufleet.io/cuda-versions"  # "12.8,13.0"
PREINSTALLED_DRIVER_ANNOTATION = "gpufleet.io/preinstalled-driver-version"  # "580.95.05"

# Exemptions are visible: a label/tag `gpufleet.io/exempt-<policy>: "<reason>"`.
EXEMPT_PREFIX = "gpufleet.io/exempt-"


def exempt_key(policy_name: str) -> str:
    """The label/tag key that exempts a resource from one policy (its value is the reason)."""
    return f"{EXEMPT_PREFIX}{policy_name}"


def gpu_taint() -> dict[str, str]:
    """The GPU taint in Kubernetes' own shape."""
    return {"key": GPU_TAINT_KEY, "value": GPU_TAINT_VALUE, "effect": GPU_TAINT_EFFECT}


def taint_string(key: str, value: str, effect: str) -> str:
    """A taint as kubelet/k3s flags spell it: key=value:Effect."""
    return f"{key}={value}:{effect}"
