"""K3sNodePool: a pool's GPU hosts joined as k3s agents, labelled and tainted for GPU work only."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pulumi

from gpufleet.components.k3s.cluster import K3sJoin, agent_command
from gpufleet.base.node_labels import pool_labels, pool_taints
from gpufleet.base.labels import AMD_GPU_TAINT_KEY, GPU_TAINT_KEY, taint_string
from gpufleet.base.spec import Host, NodePoolSpec
from gpufleet.base.spec.features.topology import host_labels


@dataclass(frozen=True)
class K3sNodePoolArgs:
    pool: NodePoolSpec
    """The pool's spec (hosts, GPU model, extra labels and taints)."""
    join: K3sJoin
    """How to join the cluster (from K3sCluster.join)."""


def server_node_settings(pool: NodePoolSpec, host: Optional[Host] = None) -> tuple[dict[str, str], list[str]]:
    """Labels and taints of a server that is also one of the pool's GPU hosts: the pool's labels (and the host's
    declared block and rack), and its taints
    without the GPU taint (the server must keep running system pods that do not tolerate it; the spec allows only
    PreferNoSchedule taints of the pool's own there)."""
    taints = [taint_string(t["key"], t["value"], t["effect"]) for t in pool_taints(pool) if t["key"] not in (GPU_TAINT_KEY, AMD_GPU_TAINT_KEY)]
    return {**pool_labels(pool), **(host_labels(host) if host is not None else {})}, taints


class K3sNodePool(pulumi.ComponentResource):
    """`gpufleet:k3s:K3sNodePool`: a pool's GPU hosts joined over SSH as k3s agents (one remote command per host),
    labelled and tainted so only GPU work lands there."""

    def __init__(self, name: str, args: K3sNodePoolArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:k3s:K3sNodePool", name, None, opts)
        pool = args.pool
        labels = pool_labels(pool)
        taints = [taint_string(t["key"], t["value"], t["effect"]) for t in pool_taints(pool)]
        # A host that is also a server already runs k3s (its labels travel in the server's config: server_node_settings).
        self.agents = [
            agent_command(f"{name}-agent-{host.name}", host, args.join, {**labels, **host_labels(host)}, taints, self)
            for host in pool.hosts if host.name not in args.join.server_names
        ]
        self.register_outputs({"nodes": [h.name for h in pool.hosts]})
