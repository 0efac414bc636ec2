"""The toy platform's resources: what a new platform's `components/<name>/` folder would hold, kept under tests/.

A control plane that is one cloud resource of a made-up provider (`toycloud`) plus the kubernetes provider on its
kubeconfig, and one `toycloud:index:NodePool` per stack pool, carrying the pool's size, taints and labels as a cloud's
node pool would. Nothing here is imported by gpufleet: the toy's traits (tests/toy_platform/__init__.py) name this
module, and GpuCluster imports it when a stack says `platform: toy`.
"""

from __future__ import annotations

from typing import Optional

import pulumi
import pulumi_kubernetes as k8s

from gpufleet.base.node_labels import pool_labels, pool_taints
from gpufleet.base.spec.pools import NodePoolSpec
from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.components.platform import Platform, PlatformBuild, PlatformInputs

CLUSTER_TYPE = "toycloud:index:Cluster"
NODE_POOL_TYPE = "toycloud:index:NodePool"


class ToyCluster(pulumi.ComponentResource):
    """The cluster (`<name>-cluster`, a toycloud Cluster) and the kubernetes provider on its kubeconfig."""

    def __init__(self, name: str, kubernetes_version: str, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:toy:ToyCluster", name, None, opts)
        self.cluster = pulumi.CustomResource(CLUSTER_TYPE, f"{name}-cluster", {"version": kubernetes_version,
                                                                                "kubeconfig": None},
                                             opts=pulumi.ResourceOptions(parent=self))
        self.kubeconfig = pulumi.Output.secret(self.cluster.kubeconfig.apply(lambda k: k or "apiVersion: v1\n"))
        provider = k8s.Provider(f"{name}-k8s", kubeconfig=self.kubeconfig, opts=pulumi.ResourceOptions(parent=self))
        self.access = ClusterAccess(name=name, platform="toy", kubernetes_version=kubernetes_version,
                                    kubeconfig=self.kubeconfig, provider=provider, facts={}, ready=[])
        self.register_outputs({"kubeconfig": self.kubeconfig})


def node_pool(name: str, pool: NodePoolSpec, opts: pulumi.ResourceOptions) -> pulumi.CustomResource:
    """One cloud node pool: size, machine facts, and the labels and taints gpufleet gives a GPU pool."""
    return pulumi.CustomResource(NODE_POOL_TYPE, name, {
        "minSize": pool.min_nodes,
        "maxSize": pool.max_nodes,
        "gpu": pool.gpu,
        "gpusPerNode": pool.gpus_per_node,
        "spot": pool.capacity == "spot",
        "labels": pool_labels(pool),
        "taints": pool_taints(pool),
    }, opts=opts)


class ToyPlatform(Platform):
    """Only `build`: every other hook keeps the default (no add-ons, no node health, no managed observability)."""

    def build(self, name: str, inputs: PlatformInputs, opts: pulumi.ResourceOptions) -> PlatformBuild:
        spec = inputs.spec
        control_plane = ToyCluster(f"{name}-toy", spec.cluster.kubernetes_version, opts=opts)
        pools = [node_pool(f"{name}-pool-{pool.name}", pool, opts) for pool in spec.node_pools]
        return PlatformBuild(control_plane=control_plane, access=control_plane.access, node_pools=pools)


PLATFORM = ToyPlatform()
