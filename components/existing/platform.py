"""The existing platform: a Kubernetes cluster gpufleet does not create (GPU clouds' managed clusters, clusters made
elsewhere), reached through the secret kubeconfig `gpufleet:kubeconfig` (docs/existing-cluster.md).

- `build`: an ExistingCluster (the kubernetes provider on that kubeconfig) and one ExistingNodePool per pool: nodes
  as facts, labelled with gpufleet's pool labels when the stack names them. Nothing in a cloud is created.
- GPU stack: the GPU Operator installs or uses the nodes' driver as `gpuOperator.driver` says; GPUDirect RDMA over
  the NVIDIA Network Operator's NICs for `rdma` pools, as on bare metal (a GPU cloud that wires its own fabric
  declares no `rdma` pools). AMD's GPU Operator is not offered: it loads a kernel driver on hosts the stack does
  not own.
- `addons`: the Network Operator for rdma pools. Storage is the cluster's own (its provider's CSI drivers).
"""

from __future__ import annotations

from typing import Sequence

import pulumi

from gpufleet.base.node_labels import pool_taints
from gpufleet.base.spec import NAMESPACE, NodePoolSpec
from gpufleet.base.spec.platforms.existing import KUBECONFIG_KEY
from gpufleet.base.spec.shape import shaped
from gpufleet.components.existing.cluster import ExistingCluster, ExistingClusterArgs
from gpufleet.components.existing.node_pool import ExistingNodePool, ExistingNodePoolArgs
from gpufleet.components.platform import ClusterContext, Platform, PlatformBuild, PlatformInputs


class ExistingPlatform(Platform):
    def build(self, name: str, inputs: PlatformInputs, opts: pulumi.ResourceOptions) -> PlatformBuild:
        spec = inputs.spec
        # The kubeconfig arrives as a secret input (the program reads the secret `gpufleet:kubeconfig`, the component
        # package takes it as an input), and the spec has checked it is given as a secret (gpufleet/base/spec/__init__.py
        # _secret_checks); it reaches no other component than the provider, and no output but the secret `kubeconfig`.
        if inputs.kubeconfig is None:
            raise pulumi.RunError(f"platform existing needs the cluster's kubeconfig: the secret {NAMESPACE}:"
                                  f"{KUBECONFIG_KEY} (GpuClusterArgs.kubeconfig)")
        control_plane = ExistingCluster(
            f"{name}-cluster", ExistingClusterArgs(inputs.kubeconfig, spec.cluster.kubernetes_version), opts=opts,
        )
        pools = [ExistingNodePool(f"{name}-pool-{pool.name}", ExistingNodePoolArgs(shaped(pool, "existing")),
                                  control_plane.access, opts=opts)
                 for pool in spec.node_pools]
        return PlatformBuild(control_plane=control_plane, access=control_plane.access, node_pools=pools)

    def gpu_operator_rdma(self, nvidia_pools: Sequence[NodePoolSpec]) -> bool:
        """GPUDirect RDMA over the Network Operator's NICs (`addons`) whenever an NVIDIA pool asks for RDMA."""
        return any(p.rdma for p in nvidia_pools)

    def addons(self, ctx: ClusterContext) -> dict[str, pulumi.ComponentResource]:
        """The Network Operator for rdma pools; nothing else (the cluster brings its own storage)."""
        rdma_pools = [p for p in ctx.spec.node_pools if p.rdma]
        if not rdma_pools:
            return {}
        from gpufleet.components.gpu_stack.network_operator import NetworkOperator, NetworkOperatorArgs

        taints = [t for pool in ctx.spec.node_pools for t in pool_taints(pool)]
        return {"network-operator": NetworkOperator(
            f"{ctx.name}-network-operator", NetworkOperatorArgs(rdma_pools, taints), ctx.access, opts=ctx.opts)}


PLATFORM = ExistingPlatform()
