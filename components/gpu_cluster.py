"""GpuCluster: composes a platform's control plane and GPU pools, then the add-ons. Stays thin."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pulumi

from components import platform
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
        built = platform.build(
            spec.cluster.platform, name, platform.PlatformInputs(spec, args.ssh_private_key), child
        )
        self.control_plane = built.control_plane
        self.node_pools = built.node_pools
        self.access = built.access

        self.gpu_operator = None
        if spec.gpu_operator.enabled:
            from components.gpu_operator import GpuOperator, GpuOperatorArgs

            taints = [t for pool in spec.node_pools for t in pool_taints(pool)]
            self.gpu_operator = GpuOperator(
                f"{name}-gpu-operator",
                GpuOperatorArgs(spec.gpu_operator, taints, cuda_versions=tuple(spec.workloads.cuda_versions)),
                self.access,
                opts=child,
            )

        self.kubeconfig = self.access.kubeconfig
        self.register_outputs({"kubeconfig": self.kubeconfig})
