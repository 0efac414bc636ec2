"""A pool's GPU shape on any platform: k3s pools state `gpu` and `gpusPerNode`; where a cloud shape (an instance,
machine or VM type, a GPU cloud's offering) decides them, the platform says so (NodeTraits.gpu_shape, from
gpufleet/base/catalog). Sharing checks, the sharing configs and the plan's capacity all read the shaped pool, so
they agree on every platform."""

from __future__ import annotations

from gpufleet.base import platforms
from gpufleet.base import sharing
from gpufleet.base.spec.pools import NodePoolSpec


def shaped(pool: NodePoolSpec, platform: str) -> NodePoolSpec:
    """The pool with `gpu` and `gpus_per_node` filled in from the catalog where the platform derives them.
    An unknown instance or machine type leaves the pool as it is (the platform's checks report it)."""
    found = platforms.get(platform).nodes.gpu_shape(pool)
    if found is None:
        return pool
    return pool.model_copy(update={"gpu": found.gpu, "gpus_per_node": found.gpus_per_node})


def shaped_pools(spec) -> list[NodePoolSpec]:
    return [shaped(p, spec.cluster.platform) for p in spec.node_pools]


def advertised(pool: NodePoolSpec, platform: str) -> dict[str, int]:
    """Extended resource -> count one node of the pool advertises for its GPUs: the platform's own device plugin's
    count where it has one (NodeTraits.advertised: GKE's), else the GPU Operator's device plugin or the AMD GPU
    Operator, per the pool's `sharing` (gpufleet/base/sharing.py). The plan's capacity (gpufleet/base/capacity.py)
    and the spec's quota checks both read this."""
    own = platforms.get(platform).nodes.advertised(pool)
    return own if own is not None else sharing.advertised(shaped(pool, platform))


def most_nodes(pool: NodePoolSpec, platform: str) -> int:
    """The most nodes the pool can have (PricingTraits.node_count: a k3s pool's hosts, a cloud pool's maxNodes)."""
    return platforms.get(platform).pricing.node_count(pool)[1]
