"""Kueue Topology Aware Scheduling per pool (`gpufleet:addons.kueue.topology`): the levels of each pool's Topology
and how big a domain of each level can be.

Levels come from what the platform labels the pool's machines with (facts and sources in
gpufleet/base/catalog/topology.yaml): EKS `topology.k8s.aws/network-node-layer-1..3` (-4 on four-layer types), GKE
`cloud.google.com/gce-topology-block/-subblock/-host`, k3s the hosts' declared `block`/`rack` (node labels written at
join). On a multi-node NVLink pool (GB200 NVL72) the NVLink domain, `nvidia.com/gpu.clique`, is a level. The last
level is always `kubernetes.io/hostname`: Kueue respects node taints only then (kueue at the pinned tag,
site/static/examples/tas/sample-gpu-queues.yaml)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from gpufleet.base import labels as L
from gpufleet.base import platforms
from gpufleet.base.catalog import dra as dra_facts
from gpufleet.base.catalog import topology as facts
from gpufleet.base.spec.shape import most_nodes, shaped


def host_labels(host: Any) -> dict[str, str]:
    """The node labels a k3s GPU host's declared block and rack become."""
    out = {}
    if host.block:
        out[L.TOPOLOGY_BLOCK_LABEL] = host.block
    if host.rack:
        out[L.TOPOLOGY_RACK_LABEL] = host.rack
    return out


def _traits(platform: str):
    return platforms.get(platform).scheduling


def machine_levels(pool: Any, platform: str) -> list[str]:
    """The topology labels the platform gives the pool's machines, coarsest first ([]: none)."""
    return _traits(platform).topology_levels(pool)


def nvlink(pool: Any, platform: str) -> Optional[dra_facts.NvlinkSystem]:
    from gpufleet.base.spec.features.dra_checks import nvlink as nvlink_system

    return nvlink_system(pool, platform)


def clique_labelled(spec: Any) -> bool:
    """Whether something writes the NVLink clique label (nvidia.com/gpu.clique) on the stack's nodes: GPU Feature
    Discovery, which the NVIDIA GPU Operator deploys. GKE's own GPU stack (cluster.gke.gpuStack: gke) runs no GPU
    Operator, so nothing writes it there: Google's A4X Topology has block, sub-block, node pool, host and hostname
    levels and no clique (cluster-toolkit v1.95.0 (079cf834) examples/gke-a4x/kueue-configuration.yaml.tftpl), and
    Kueue leaves out nodes that lack a level's label, so a clique level would admit no job."""
    return spec.gpu_operator.enabled and platforms.of(spec).addons.own_gpu_stack(spec) is None


def default_levels(pool: Any, platform: str, clique: bool = True) -> list[str]:
    """The pool's Topology levels when the stack names none. On an NVLink pool the clique comes where the platform
    places it among its machine levels (`nvlink_topology_levels`), where something writes it (`clique`:
    clique_labelled)."""
    levels = machine_levels(pool, platform)
    if clique and nvlink(pool, platform) is not None:
        levels = _traits(platform).nvlink_topology_levels(levels, facts.nvlink_label())
    return levels + [facts.hostname_label()]


def levels(tpool: Any, pool: Any, platform: str, clique: bool = True) -> list[str]:
    return list(tpool.levels) if tpool.levels else default_levels(pool, platform, clique)


def provided_labels(pool: Any, platform: str, clique: bool = True) -> set[str]:
    """Node labels every node of the pool carries that a topology level may name (the clique where something writes
    it: `clique`)."""
    out = set(machine_levels(pool, platform)) | {facts.hostname_label(), "topology.kubernetes.io/zone",
                                                   "topology.kubernetes.io/region", L.POOL_LABEL}
    if clique and nvlink(pool, platform) is not None:
        out.add(facts.nvlink_label())
    return out | set(pool.labels)


def gpus_per_node(pool: Any, platform: str) -> int:
    return shaped(pool, platform).gpus_per_node or 0


@dataclass(frozen=True)
class Domain:
    level: str
    nodes: int  # the most nodes one domain of this level can hold in this pool
    known: bool  # False: the platform does not say; `nodes` is then the pool's (or its reservation's) size
    gpus: int


def domains(tpool: Any, pool: Any, platform: str, clique: bool = True) -> list[Domain]:
    """The largest domain of each level, in nodes and GPUs, coarsest first. Bounded by the pool's size and, on a
    reservation with a known count, by it: blocks come from the reservation."""
    cap = most_nodes(pool, platform)
    r = pool.reservation if pool.capacity == "reserved" else None
    if r is not None and r.instance_count:
        cap = min(cap, r.instance_count)
    per = gpus_per_node(pool, platform)
    system = nvlink(pool, platform)
    out = []
    for level in levels(tpool, pool, platform, clique):
        size: Optional[int] = None
        if level == facts.hostname_label():
            size = 1
        elif level == facts.nvlink_label() and system is not None:
            size = system.largest
        else:
            size = _traits(platform).topology_domain_nodes(pool, level, system)
        nodes = cap if size is None else min(size, cap)
        out.append(Domain(level, nodes, size is not None, nodes * per))
    return out


def topology_pools(spec: Any) -> dict[str, Any]:
    """TAS pool name -> its `kueue.topology.pools` entry (only when Kueue is on)."""
    kueue = spec.addons.kueue
    if not kueue.enabled:
        return {}
    return {t.name: t for t in kueue.topology.pools}
