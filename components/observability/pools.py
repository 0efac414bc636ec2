"""What the alerts and dashboards need to know about each GPU pool, derived from the spec and the catalog."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from gpufleet.base import platforms
from gpufleet.base.capacity import pool_capacity
from gpufleet.base.spec import StackSpec


@dataclass(frozen=True)
class PoolFacts:
    pool: str
    """Pool name (node label gpufleet.io/pool)."""
    gpus_per_node: int
    """Physical GPUs per node (the DCGM exporter reports one series per physical GPU, whatever the sharing)."""
    max_nodes: int
    """The pool's maximum size (the autoscaler stops there)."""
    autoscaled: bool = True
    """False where a pool is a fixed set of machines (the platform's PricingTraits.autoscaled; k3s: its hosts), so
    there is no maximum to reach."""
    price_per_gpu_hour: Optional[float] = None
    """On-demand/spot price of one GPU-hour (node price / GPUs per node) from the catalog; None when unpriced."""


def pool_facts(spec: StackSpec) -> list[PoolFacts]:
    platform = spec.cluster.platform
    autoscaled = platforms.get(platform).pricing.autoscaled
    out = []
    for pool in spec.node_pools:
        cap = pool_capacity(pool, platform)
        per_gpu = (cap.price_per_node_hour / cap.gpus_per_node) if cap.price_per_node_hour is not None and cap.gpus_per_node else None
        out.append(PoolFacts(pool.name, cap.gpus_per_node, cap.max_nodes, autoscaled, per_gpu))
    return out
