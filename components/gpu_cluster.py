"""GpuCluster: composes a platform's control plane and GPU pools, then the add-ons. Stays thin."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pulumi

from gpufleet.components import platform
from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.node_labels import pool_taints
from gpufleet.spec import StackSpec
from gpufleet.spec.shape import shaped_pools


@dataclass(frozen=True)
class GpuClusterArgs:
    spec: StackSpec
    """The validated stack spec."""
    ssh_private_key: Optional[pulumi.Input[str]] = None
    """k3s: SSH private key for the hosts (a secret config value)."""
    etcd_s3_access_key: Optional[pulumi.Input[str]] = None
    """k3s: access key of the etcd snapshot bucket (a secret config value), when snapshots go to S3."""
    etcd_s3_secret_key: Optional[pulumi.Input[str]] = None
    """k3s: secret key of the etcd snapshot bucket (a secret config value)."""


class GpuCluster(pulumi.ComponentResource):
    access: ClusterAccess

    def __init__(self, name: str, args: GpuClusterArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:index:GpuCluster", name, None, opts)
        spec = args.spec
        child = pulumi.ResourceOptions(parent=self)
        built = platform.build(
            spec.cluster.platform, name, platform.PlatformInputs(spec, args.ssh_private_key, args.etcd_s3_access_key, args.etcd_s3_secret_key),
            child,
        )
        self.control_plane = built.control_plane
        self.node_pools = built.node_pools
        self.access = built.access

        self.gpu_operator = None
        if spec.gpu_operator.enabled and built.install_gpu_operator:
            from gpufleet.components.gpu_stack.operator import GpuOperator, GpuOperatorArgs

            from gpufleet.components.gpu_stack.sharing import GpuSharing, GpuSharingArgs, operator_settings

            taints = [t for pool in spec.node_pools for t in pool_taints(pool)]
            # GPUDirect RDMA over the Network Operator's NICs (k3s); cloud RDMA (EFA) is wired by its platform.
            k3s_rdma = spec.cluster.platform == "k3s" and any(p.rdma for p in spec.node_pools)
            extra = dict(operator_settings(shaped_pools(spec)), rdma=k3s_rdma)
            self.gpu_operator = GpuOperator(
                f"{name}-gpu-operator",
                GpuOperatorArgs(spec.gpu_operator, taints, cuda_versions=tuple(spec.workloads.cuda_versions), **extra),
                self.access,
                opts=child,
            )
            self.gpu_sharing = None
            if extra.get("device_plugin_config"):
                sharing_args = GpuSharingArgs(shaped_pools(spec), self.gpu_operator.namespace.metadata["name"])
                self.gpu_sharing = GpuSharing(f"{name}-gpu-sharing", sharing_args, self.access, opts=child)
        self.network_operator = self.storage = None
        if spec.cluster.platform == "k3s":
            self._k3s_addons(name, spec, child)

        from gpufleet.components.workloads.layer import build_workloads

        self.workloads = build_workloads(name, spec, self.access, child)

        self.kubeconfig = self.access.kubeconfig
        self.register_outputs({"kubeconfig": self.kubeconfig})

    def _k3s_addons(self, name: str, spec: StackSpec, child: pulumi.ResourceOptions) -> None:
        """RDMA (Network Operator) for rdma pools and CSI storage: what bare-metal hosts lack."""
        rdma_pools = [p for p in spec.node_pools if p.rdma]
        if rdma_pools:
            from gpufleet.components.gpu_stack.network_operator import NetworkOperator, NetworkOperatorArgs

            taints = [t for pool in spec.node_pools for t in pool_taints(pool)]
            self.network_operator = NetworkOperator(
                f"{name}-network-operator", NetworkOperatorArgs(rdma_pools, taints), self.access, opts=child
            )
        if spec.storage.nfs is not None:
            from gpufleet.components.k3s.storage import K3sStorage, K3sStorageArgs

            self.storage = K3sStorage(f"{name}-storage", K3sStorageArgs(spec.storage, protection=spec.cluster.protection), self.access, opts=child)
