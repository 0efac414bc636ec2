"""What a scheduler needs to know about a GPU pool: its node labels, its taints, what it advertises."""

from __future__ import annotations

from dataclasses import dataclass

from gpufleet.base.node_labels import node_taints, pool_labels
from gpufleet.base import labels as L
from gpufleet.base.capacity import pool_capacity
from gpufleet.base.spec import StackSpec
from gpufleet.base.spec.features import topology as tas

# The labels a flavor selects on: the pool, and what a queue must know (GPU model, spot or on-demand).
FLAVOR_LABEL_KEYS = (L.POOL_LABEL, L.GPU_MODEL_LABEL, L.CAPACITY_TYPE_LABEL)


@dataclass(frozen=True)
class PoolFlavor:
    pool: str
    """Pool name (also the Kueue ResourceFlavor's and the Volcano Queue's name)."""
    node_labels: dict[str, str]
    """gpufleet's pool, GPU model and capacity-type labels of the pool's nodes."""
    tolerations: list[dict[str, str]]
    """One toleration per taint the pool's nodes carry (GPU, spot, the pool's own), with the value the platform
    really sets (GKE: nvidia.com/gpu=present), so pods of an admitted workload that ask for no GPU still fit."""
    per_node: dict[str, int]
    """Extended resource -> count each node advertises (GPUs, or shared replicas / MIG slices)."""
    max_nodes: int
    """The pool's maximum size (k3s: its number of hosts)."""
    capacity: str = "on-demand"
    """The pool's capacity kind (gpufleet/base/spec/features/reservation.py): queued pools admit work through ProvisioningRequests."""
    allocation: str = "device-plugin"
    """How pods claim the pool's GPUs: device-plugin (extended resources) or dra (ResourceClaims; Kueue counts them through
    its deviceClassMappings, components/workloads/kueue.py)."""
    topology_levels: tuple[str, ...] = ()
    """Node labels of the pool's Kueue Topology levels, coarsest first (gpufleet/base/spec/features/topology.py). Default: none,
    the pool's flavor names no Topology."""

    @property
    def at_max_size(self) -> dict[str, int]:
        """What the pool advertises at its maximum size: the most any quota on it can ever use."""
        return {resource: count * self.max_nodes for resource, count in self.per_node.items()}


def toleration(taint: dict[str, str]) -> dict[str, str]:
    return {"key": taint["key"], "operator": "Equal", "value": taint["value"], "effect": taint["effect"]}


def pool_flavors(spec: StackSpec) -> dict[str, PoolFlavor]:
    """Every pool of the stack, by name."""
    out = {}
    topology = tas.topology_pools(spec)
    for pool in spec.node_pools:
        cap = pool_capacity(pool, spec.cluster.platform)
        labels = pool_labels(pool, cap.gpu)
        out[pool.name] = PoolFlavor(
            pool=pool.name,
            node_labels={k: labels[k] for k in FLAVOR_LABEL_KEYS if k in labels},
            tolerations=[toleration(t) for t in node_taints(pool, spec.cluster.platform)],
            per_node=dict(cap.advertised),
            max_nodes=cap.max_nodes,
            capacity=pool.capacity,
            allocation=pool.allocation,
            topology_levels=tuple(tas.levels(topology[pool.name], pool, spec.cluster.platform, tas.clique_labelled(spec)))
            if pool.name in topology else (),
        )
    return out
