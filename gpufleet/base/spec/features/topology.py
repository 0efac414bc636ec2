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
from gpufleet.base.catalog import dra as dra_facts
from gpufleet.base.catalog import topology as facts
from gpufleet.base.spec.shape import most_nodes, shaped


GKE_HOST_LABEL = "cloud.google.com/gce-topology-host"


def host_labels(host: Any) -> dict[str, str]:
    """The node labels a k3s GPU host's declared block and rack become."""
    out = {}
    if host.block:
        out[L.TOPOLOGY_BLOCK_LABEL] = host.block
    if host.rack:
        out[L.TOPOLOGY_RACK_LABEL] = host.rack
    return out


def machine_levels(pool: Any, platform: str) -> list[str]:
    """The topology labels the platform gives the pool's machines, coarsest first ([]: none)."""
    if platform == "eks":
        from gpufleet.base.spec.platforms.eks import pool_instance_types

        layers = [facts.eks_layers(t) for t in pool_instance_types(pool)]
        if not layers or None in layers:
            return []
        return facts.eks_levels(min(layers))
    if platform == "gke":
        return facts.gke_levels() if pool.machine_type and facts.gke_labelled(pool.machine_type) else []
    hosts = list(pool.hosts)
    out = []
    if hosts and any(h.block for h in hosts):
        out.append(L.TOPOLOGY_BLOCK_LABEL)
    if hosts and any(h.rack for h in hosts):
        out.append(L.TOPOLOGY_RACK_LABEL)
    return out


def nvlink(pool: Any, platform: str) -> Optional[dra_facts.NvlinkSystem]:
    from gpufleet.base.spec.features.dra_checks import nvlink as nvlink_system

    return nvlink_system(pool, platform)


def default_levels(pool: Any, platform: str) -> list[str]:
    """The pool's Topology levels when the stack names none. On an NVLink pool the clique comes below the machine
    levels where those nest it (a GKE A4X sub-block is one NVLink domain; a declared k3s rack is the NVL72 rack), and
    alone above the hostname on EKS, where no AWS document says an UltraServer sits under one network node."""
    levels = machine_levels(pool, platform)
    if nvlink(pool, platform) is not None:
        # The clique spans machines: above GKE's per-host level, below block and sub-block.
        coarse = [lv for lv in levels if lv != GKE_HOST_LABEL] if platform != "eks" else []
        levels = coarse + [facts.nvlink_label()] + [lv for lv in levels if lv == GKE_HOST_LABEL]
    return levels + [facts.hostname_label()]


def levels(tpool: Any, pool: Any, platform: str) -> list[str]:
    return list(tpool.levels) if tpool.levels else default_levels(pool, platform)


def provided_labels(pool: Any, platform: str) -> set[str]:
    """Node labels every node of the pool carries that a topology level may name."""
    out = set(machine_levels(pool, platform)) | {facts.hostname_label(), "topology.kubernetes.io/zone",
                                                   "topology.kubernetes.io/region", L.POOL_LABEL}
    if nvlink(pool, platform) is not None:
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


def domains(tpool: Any, pool: Any, platform: str) -> list[Domain]:
    """The largest domain of each level, in nodes and GPUs, coarsest first. Bounded by the pool's size and, on a
    reservation with a known count, by it: blocks come from the reservation."""
    cap = most_nodes(pool, platform)
    r = pool.reservation if pool.capacity == "reserved" else None
    if r is not None and r.instance_count:
        cap = min(cap, r.instance_count)
    per = gpus_per_node(pool, platform)
    system = nvlink(pool, platform)
    out = []
    for level in levels(tpool, pool, platform):
        size: Optional[int] = None
        if level == facts.hostname_label():
            size = 1
        elif level == facts.nvlink_label() and system is not None:
            size = system.largest
        elif level == "cloud.google.com/gce-topology-subblock" and system is not None:
            size = system.largest  # an A4X sub-block is one NVLink domain (catalog dra.yaml gcp_subblock)
        elif platform == "k3s" and level in (L.TOPOLOGY_BLOCK_LABEL, L.TOPOLOGY_RACK_LABEL):
            size = _k3s_largest(pool, level)
        nodes = cap if size is None else min(size, cap)
        out.append(Domain(level, nodes, size is not None, nodes * per))
    return out


def _k3s_largest(pool: Any, level: str) -> int:
    """Most hosts sharing one value of the level (a rack is identified within its block, as Kueue builds domains)."""
    counts: dict[tuple, int] = {}
    for h in pool.hosts:
        key = (h.block,) if level == L.TOPOLOGY_BLOCK_LABEL else (h.block, h.rack)
        counts[key] = counts.get(key, 0) + 1
    return max(counts.values(), default=0)


def topology_pools(spec: Any) -> dict[str, Any]:
    """TAS pool name -> its `kueue.topology.pools` entry (only when Kueue is on)."""
    kueue = spec.addons.kueue
    if not kueue.enabled:
        return {}
    return {t.name: t for t in kueue.topology.pools}
