"""ExistingNodePool: a pool of nodes an existing cluster already has. It creates no node: when the stack lists the
pool's nodes by name, it writes gpufleet's pool labels onto each (pool, GPU model, capacity type and the GPU
Operator's sharing selectors: gpufleet/base/node_labels.py), so Kueue flavors, sharing configs and DRA select them as
on every other platform."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pulumi
import pulumi_kubernetes as k8s

from gpufleet.base.node_labels import pool_labels
from gpufleet.base.spec import NodePoolSpec
from gpufleet.components.cluster_access import ClusterAccess


@dataclass(frozen=True)
class ExistingNodePoolArgs:
    pool: NodePoolSpec
    """The pool as the stack describes it, shaped (its GPU model filled in from its catalog offering)."""


class ExistingNodePool(pulumi.ComponentResource):
    """`labels` holds one NodePatch per listed node (`existing.nodes`); none when the stack lists no names."""

    def __init__(self, name: str, args: ExistingNodePoolArgs, access: ClusterAccess,
                 opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:existing:ExistingNodePool", name, None, opts)
        pool = args.pool
        child = pulumi.ResourceOptions(parent=self, provider=access.provider)
        self.node_selector = dict(pool.existing.node_selector) if pool.existing else {}
        self.labels = [
            # Server-side apply of the labels only: the node and every other field stay its provider's. patchForce: the
            # kubelet and the provider's node controller own labels they set (Pulumi kubernetes provider, NodePatch).
            k8s.core.v1.NodePatch(
                f"{name}-labels-{node}",
                metadata={"name": node, "labels": pool_labels(pool),
                          "annotations": {"pulumi.com/patchForce": "true"}},
                opts=child,
            )
            for node in (pool.existing.nodes if pool.existing else [])
        ]
        self.register_outputs({"nodeSelector": self.node_selector, "labelledNodes": len(self.labels)})
