"""K3sNodePool: a pool's GPU hosts joined as k3s agents, labelled and tainted for GPU work only.

k3s applies `node-label` and `node-taint` from a host's config only when the node registers (docs.k3s.io/cli/agent,
"Node Labels and Taints for Agents": they "only add labels and/or taints at registration time", and later changes go
through the Kubernetes API), so a later change to a pool's GPU model, labels or
taints would never reach the nodes that already exist. With the cluster's Kubernetes provider, each host's labels and
taints are also applied through the API (a server-side-apply NodePatch on its Node, as the existing-cluster platform
labels its nodes): the change lands on registered nodes, and the review shows it as an update of that object.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pulumi
import pulumi_kubernetes as k8s

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
    provider: Optional[k8s.Provider] = None
    """The cluster's Kubernetes provider (K3sCluster.provider): each host's labels and taints are then applied to its
    Node through the API too, so changes reach registered nodes. Default: none (registration only)."""


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
        agents = {
            host.name: agent_command(f"{name}-agent-{host.name}", host, args.join, {**labels, **host_labels(host)},
                                     taints, self)
            for host in pool.hosts if host.name not in args.join.server_names
        }
        self.agents = list(agents.values())
        self.nodes = [] if args.provider is None else [
            node_patch(f"{name}-node-{host.name}", host, pool, args.provider,
                       agents[host.name] if host.name in agents else None, args.join.servers, self)
            for host in pool.hosts
        ]
        self.register_outputs({"nodes": [h.name for h in pool.hosts]})


def node_patch(name: str, host: Host, pool: NodePoolSpec, provider: k8s.Provider, agent: Optional[pulumi.Resource],
               servers: list[pulumi.Resource], parent: pulumi.Resource) -> k8s.core.v1.NodePatch:
    """The host's labels (and, on an agent, its taints) applied to its registered Node by server-side apply, after the
    install that registers it.

    Labels are a map: the patch owns only gpufleet's keys, and the kubelet's and the operators' stay theirs.
    `spec.taints` is an atomic list (k8s.io/api core/v1 NodeSpec, `+listType=atomic`): applying it sets the whole list,
    so it is applied only on agents, whose registered taints are exactly gpufleet's (`node-taint`); taints the node
    lifecycle controller adds (not-ready, unreachable, unschedulable) it adds again from the node's conditions. A
    server that is also a GPU host keeps its taints from registration (it may carry k3s's CriticalAddonsOnly)."""
    if agent is not None:
        labels = {**pool_labels(pool), **host_labels(host)}
        spec = {"taints": pool_taints(pool)}
    else:
        labels, _ = server_node_settings(pool, host)
        spec = None
    return k8s.core.v1.NodePatch(
        name,
        # patchForce: the k3s agent registered these labels and taints (field manager k3s); gpufleet takes them over.
        metadata={"name": host.name, "labels": labels, "annotations": {"pulumi.com/patchForce": "true"}},
        spec=spec,
        opts=pulumi.ResourceOptions(parent=parent, provider=provider,
                                    depends_on=[agent] if agent is not None else list(servers)),
    )
