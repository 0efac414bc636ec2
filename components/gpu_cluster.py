"""GpuCluster: composes a control plane, one component per GPU pool, and the add-ons. Stays thin."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Optional

import pulumi

from components.cluster_access import ClusterAccess
from components.node_labels import pool_taints
from gpufleet.spec import StackSpec


@dataclass(frozen=True)
class GpuClusterArgs:
    spec: StackSpec
    """The validated stack spec."""
    ssh_private_key: Optional[pulumi.Input[str]] = None
    """k3s: SSH private key for the hosts (a secret config value)."""


class GpuCluster(pulumi.ComponentResource):
    access: ClusterAccess

    def __init__(self, name: str, args: GpuClusterArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:index:GpuCluster", name, None, opts)
        spec = args.spec
        child = pulumi.ResourceOptions(parent=self)
        self.node_pools: list[pulumi.ComponentResource] = []

        if spec.cluster.platform == "k3s":
            # Imported here so a stack loads only its own platform's SDKs.
            from components.k3s_cluster import K3sCluster, K3sClusterArgs
            from components.k3s_node_pool import K3sNodePool, K3sNodePoolArgs

            control_plane = K3sCluster(
                f"{name}-k3s",
                K3sClusterArgs(spec.cluster.k3s, spec.cluster.kubernetes_version, args.ssh_private_key),
                opts=child,
            )
            self.node_pools = [
                K3sNodePool(f"{name}-pool-{pool.name}", K3sNodePoolArgs(pool, control_plane.join), opts=child)
                for pool in spec.node_pools
            ]
            self.access = dataclasses.replace(
                control_plane.access, ready=[*control_plane.access.ready, *self.node_pools]
            )
        else:  # the spec admits only implemented platforms
            raise NotImplementedError(spec.cluster.platform)

        self.gpu_operator = None
        if spec.gpu_operator.enabled:
            from components.gpu_operator import GpuOperator, GpuOperatorArgs

            taints = [t for pool in spec.node_pools for t in pool_taints(pool)]
            self.gpu_operator = GpuOperator(
                f"{name}-gpu-operator", GpuOperatorArgs(spec.gpu_operator, taints), self.access, opts=child
            )

        self.kubeconfig = self.access.kubeconfig
        self.register_outputs({"kubeconfig": self.kubeconfig})
