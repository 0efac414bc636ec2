"""The labels and taints every GPU pool's nodes carry: gpufleet's own, and as a platform's nodes really carry them
(its NodeTraits, gpufleet/base/platforms/contract/nodes.py)."""

from __future__ import annotations

from gpufleet.base import labels as L
from gpufleet.base import platforms, sharing
from gpufleet.base.spec import NodePoolSpec


def pool_labels(pool: NodePoolSpec, gpu_model: str | None = None) -> dict[str, str]:
    """gpufleet's own labels (pool, GPU model, capacity type) plus the pool's extra labels."""
    out = {
        L.POOL_LABEL: pool.name,
        L.GPU_NODE_LABEL: "true",
        L.CAPACITY_TYPE_LABEL: pool.capacity,
    }
    model = gpu_model or pool.gpu
    if model:
        out[L.GPU_MODEL_LABEL] = model
    out.update(sharing_labels(pool))
    out.update(pool.labels)
    return out


def sharing_labels(pool: NodePoolSpec) -> dict[str, str]:
    """GPU Operator selectors: the pool's device-plugin config entry, its MIG layout or AMD partition profile, and
    the RDMA label."""
    out = {}
    if sharing.shares(pool):
        out[L.DEVICE_PLUGIN_CONFIG_LABEL] = pool.name
    if pool.sharing.mode == "mig":
        out[L.MIG_CONFIG_LABEL] = sharing.layout_name(pool)
    if pool.sharing.mode == "partition":
        # The AMD Device Config Manager applies the profile this label names (docs/dcm/applying-partition-profiles.rst).
        out[L.AMD_DCM_PROFILE_LABEL] = sharing.dcm_profile_name(pool)
    if pool.rdma:
        out[L.RDMA_NODE_LABEL] = "true"
    if pool.allocation == "dra":
        out[L.GPU_ALLOCATION_LABEL] = "dra"
        out[L.DEVICE_PLUGIN_DEPLOY_LABEL] = "false"
    return out


def pool_taints(pool: NodePoolSpec) -> list[dict[str, str]]:
    """The GPU taint (amd.com/gpu on AMD pools), the spot taint on spot pools, then the pool's extra taints."""
    out = [L.gpu_taint("amd" if pool.gpu and sharing.is_amd(pool) else "nvidia")]
    if pool.capacity == "spot":
        out.append({"key": L.SPOT_TAINT_KEY, "value": "true", "effect": "NoSchedule"})
    out += [{"key": t.key, "value": t.value, "effect": t.effect} for t in pool.taints]
    return out


def node_taints(pool: NodePoolSpec, platform: str) -> list[dict[str, str]]:
    """The pool's taints as its nodes really carry them: gpufleet's own (pool_taints) as the platform adjusts them
    (its NodeTraits.taints: GKE's own value for the GPU taint, AKS's own Spot taint on Spot pools)."""
    return platforms.get(platform).nodes.taints(pool, pool_taints(pool))


def node_tolerations(pool: NodePoolSpec, platform: str) -> list[dict[str, str]]:
    """Tolerations that match the pool's taints exactly (key, value, effect), for pods that must land on its nodes."""
    return [{"key": t["key"], "operator": "Equal", "value": t["value"], "effect": t["effect"]}
            for t in node_taints(pool, platform)]
