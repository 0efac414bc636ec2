"""What a pool's `sharing` block means on its GPU: MIG layouts, device-plugin entries, advertised resources.

Pure functions over the spec and the catalog, shared by the spec's cross checks, the GpuSharing component
and the plan's capacity section, so the three cannot disagree.
"""

from __future__ import annotations

import re
from typing import Optional

from gpufleet.base import catalog, labels
from gpufleet.base.catalog import amd as amd_catalog

_PROFILE = re.compile(r"^(\d+)g\.(\d+)gb$")
# mig-parted's always-present layout: nodes without a layout label keep MIG off.
MIG_DISABLED = "all-disabled"
# Prefix of the mig-parted layout gpufleet writes for a pool with an explicit `profiles` map.
CUSTOM_LAYOUT_PREFIX = "gpufleet-"
# Device-plugin config entry for nodes without a `nvidia.com/device-plugin.config` label.
DEFAULT_ENTRY = "gpufleet-default"
# Memory of a MIG-capable GPU is cut into 8 slices (MIG user guide, "Supported GPUs").
MEMORY_SLICES = 8


def named_layouts(gpu: catalog.GpuModel) -> dict[str, dict[str, int]]:
    """The upstream mig-parted layouts for one GPU model: all-<profile> and all-balanced."""
    if gpu.mig is None:
        return {}
    out = {f"all-{p}": {p: n} for p, n in gpu.mig.profiles.items()}
    out["all-balanced"] = dict(gpu.mig.all_balanced)
    return out


def mig_devices(sharing, gpu: catalog.GpuModel) -> dict[str, int]:
    """profile -> instances on each GPU of the pool (call after the spec validated)."""
    if sharing.profiles:
        return dict(sharing.profiles)
    if sharing.profile:
        return {sharing.profile: gpu.mig.profiles[sharing.profile]}
    return named_layouts(gpu)[sharing.layout]


def layout_name(pool) -> str:
    """The `nvidia.com/mig.config` label value: an upstream layout name, or gpufleet-<pool> for a custom one."""
    s = pool.sharing
    if s.layout:
        return s.layout
    if s.profile:
        return f"all-{s.profile}"
    return f"{CUSTOM_LAYOUT_PREFIX}{pool.name}"


def layout_problems(devices: dict[str, int], gpu: catalog.GpuModel) -> list[str]:
    """Why a profile -> count map does not fit one GPU ([] when it fits).

    Checks each profile exists on the GPU, its count is at most the homogeneous maximum, and the
    compute slices (the `<n>g`) and memory slices (of 8) add up within the GPU. mig-parted checks the
    exact placement when it applies the layout.
    """
    mig = gpu.mig
    out = []
    unknown = [p for p in devices if p not in mig.profiles]
    if unknown:
        return [
            f"profile {', '.join(map(repr, unknown))} does not exist on {gpu.name} "
            f"(allowed: {', '.join(mig.profiles)})"
        ]
    for p, n in devices.items():
        if n > mig.profiles[p]:
            out.append(f"at most {mig.profiles[p]} x {p} fit on one {gpu.name} (got {n})")
    compute = sum(int(_PROFILE.match(p).group(1)) * n for p, n in devices.items())
    if compute > mig.max_instances:
        out.append(f"the layout uses {compute} compute slices; {gpu.name} has {mig.max_instances}")
    memory = sum(memory_slices(p, gpu) * n for p, n in devices.items())
    if memory > MEMORY_SLICES:
        out.append(f"the layout uses {memory} memory slices; {gpu.name} has {MEMORY_SLICES}")
    return out


def memory_slices(profile: str, gpu: catalog.GpuModel) -> int:
    """Memory slices (of 8) a profile takes on a GPU: 1g.10gb on an 80 GB GPU -> 1, 3g.40gb -> 4."""
    gb = int(_PROFILE.match(profile).group(2))
    return max(1, round(gb * MEMORY_SLICES / gpu.memory_gb))


def shared_resource(sharing) -> str:
    return f"{labels.GPU_RESOURCE}.shared" if sharing.rename_by_default else labels.GPU_RESOURCE


def is_amd(pool) -> bool:
    """Whether the pool's GPU is an AMD Instinct model (catalog vendor amd)."""
    model = catalog.gpu_models().get(pool.gpu or "")
    return model is not None and model.amd


def amd_devices_per_gpu(pool) -> int:
    """amd.com/gpu one physical GPU of an AMD pool advertises: its compute partitions (SPX 1, DPX 2, QPX 4, CPX 8),
    times the dies the package shows (MI250X: 2 GCDs)."""
    facts = amd_catalog.amd_facts()[pool.gpu]
    s = pool.sharing
    parts = facts.partitions.compute.get(s.compute, 1) if s.mode == "partition" and facts.partitions and s.compute else 1
    return facts.devices_per_gpu * parts


def dcm_profile_name(pool) -> str:
    """The Device Config Manager profile of a partitioned AMD pool (`dcm.amd.com/gpu-config-profile` label value):
    one profile per pool, named after it, like the NVIDIA device-plugin config entries."""
    return pool.name


def dcm_profile(pool) -> dict:
    """The pool's DCM profile (ROCm/gpu-operator docs/dcm/device-config-manager-configmap.md): every GPU of the node
    in one compute/memory partition pair (`numGPUsAssigned` = the node's GPUs, no skipped GPUs)."""
    s = pool.sharing
    return {
        "skippedGPUs": {"ids": []},
        "profiles": [{"computePartition": s.compute, "memoryPartition": s.memory or "NPS1",
                      "numGPUsAssigned": pool.gpus_per_node or 0}],
    }


def advertised(pool) -> dict[str, int]:
    """Extended resource -> count one node of the pool advertises."""
    gpus = pool.gpus_per_node or 0
    s = pool.sharing
    if pool.gpu and is_amd(pool):
        return {labels.AMD_GPU_RESOURCE: gpus * amd_devices_per_gpu(pool)}
    if s.mode in ("time-slicing", "mps"):
        return {shared_resource(s): gpus * s.replicas}
    if s.mode == "mig" and pool.gpu:
        devices = mig_devices(s, catalog.gpu(pool.gpu))
        if s.strategy == "single" and not _dra(pool):
            return {labels.GPU_RESOURCE: gpus * sum(devices.values())}
        return {f"{labels.MIG_RESOURCE_PREFIX}{p}": gpus * n for p, n in devices.items()}
    return {labels.GPU_RESOURCE: gpus}


def _dra(pool) -> bool:
    """A DRA pool claims MIG devices per profile (mig.nvidia.com devices carry gpu.nvidia.com/profile:
    dra-driver-nvidia-gpu demo/specs/quickstart/v1/gpu-test4.yaml), whatever the device plugin's MIG strategy says."""
    return getattr(pool, "allocation", "device-plugin") == "dra"


def explain(pool) -> str:
    """How the advertised count comes about, e.g. "8 GPUs x 4 replicas = 32 nvidia.com/gpu (time-slicing)"."""
    gpus = pool.gpus_per_node or 0
    s = pool.sharing
    if pool.gpu and is_amd(pool):
        n = amd_devices_per_gpu(pool)
        if s.mode == "partition":
            return (f"{gpus} GPUs x {n} {s.compute} partitions = {gpus * n} {labels.AMD_GPU_RESOURCE} "
                    f"({s.compute}/{s.memory or 'NPS1'}, DCM profile {dcm_profile_name(pool)})")
        if n > 1:
            return f"{gpus} GPUs x {n} dies = {gpus * n} {labels.AMD_GPU_RESOURCE} (not partitioned)"
        return f"{gpus} x {labels.AMD_GPU_RESOURCE} (not partitioned)"
    if s.mode in ("time-slicing", "mps"):
        return f"{gpus} GPUs x {s.replicas} replicas = {gpus * s.replicas} {shared_resource(s)} ({s.mode})"
    if s.mode == "mig" and pool.gpu:
        devices = mig_devices(s, catalog.gpu(pool.gpu))
        if s.strategy == "single" and not _dra(pool):
            (profile, n), = devices.items()
            counts = f"{gpus} GPUs x {n} = {gpus * n} {labels.GPU_RESOURCE} (each a {profile})"
        else:
            counts = ", ".join(f"{gpus} GPUs x {n} = {gpus * n} {labels.MIG_RESOURCE_PREFIX}{p}" for p, n in devices.items())
        return f"{counts} (MIG {layout_name(pool)}, {s.strategy} strategy)"
    return f"{gpus} x {labels.GPU_RESOURCE} (not shared)"


def device_plugin_entry(pool) -> dict:
    """The pool's device-plugin config (upstream `version: v1` format, api/config/v1)."""
    s = pool.sharing
    flags = {"migStrategy": s.strategy if s.mode == "mig" else "none"}
    entry: dict = {"version": "v1", "flags": flags}
    if s.mode == "time-slicing":
        entry["sharing"] = {"timeSlicing": {
            "renameByDefault": s.rename_by_default,
            "failRequestsGreaterThanOne": s.fail_requests_greater_than_one,
            "resources": [{"name": labels.GPU_RESOURCE, "replicas": s.replicas}],
        }}
    elif s.mode == "mps":
        entry["sharing"] = {"mps": {
            "renameByDefault": s.rename_by_default,
            "resources": [{"name": labels.GPU_RESOURCE, "replicas": s.replicas}],
        }}
    return entry


def shares(pool) -> bool:
    """Whether the pool needs an NVIDIA device-plugin config entry (AMD partitions go through the DCM instead)."""
    return pool.sharing.mode not in ("none", "partition")


def partitioned_amd_pools(pools) -> list:
    return [p for p in pools if p.sharing.mode == "partition" and p.gpu and is_amd(p)]


def mig_pools(pools) -> list:
    return [p for p in pools if p.sharing.mode == "mig"]


def mig_strategy(pools) -> Optional[str]:
    """The cluster-wide `mig.strategy` (the spec checks every MIG pool agrees), None without MIG pools."""
    found = mig_pools(pools)
    return found[0].sharing.strategy if found else None


def needs_custom_mig_config(pools) -> bool:
    """True when a pool uses an explicit `profiles` map (not an upstream layout the MIG manager knows)."""
    return any(p.sharing.profiles for p in mig_pools(pools))


def mig_parted_config(pools) -> dict:
    """A mig-parted `version: v1` config holding all-disabled plus every MIG pool's layout for its GPU.

    With a custom config the MIG manager no longer uses its generated one, so the upstream layouts other
    pools name must be in it too (rendered for their GPU; the spec rejects one name meaning two layouts).
    """
    configs: dict = {MIG_DISABLED: [{"devices": "all", "mig-enabled": False}]}
    for pool in mig_pools(pools):
        devices = mig_devices(pool.sharing, catalog.gpu(pool.gpu))
        configs[layout_name(pool)] = [{"devices": "all", "mig-enabled": True, "mig-devices": dict(devices)}]
    return {"version": "v1", "mig-configs": configs}
