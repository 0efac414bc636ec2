"""The k3s platform: k3s on your own hosts over SSH. The worked example of the platform interface
(components/platform.py, docs/platforms.md).

- `build`: a K3sCluster control plane and one K3sNodePool per pool (the hosts join over SSH).
- GPU stack: the GPU Operator installs the driver or uses the hosts' (`gpuOperator.driver`); GPUDirect RDMA runs over
  the NVIDIA Network Operator's NICs, so the GPU Operator wires it for `rdma` pools; AMD's GPU Operator may run.
- `addons`: what bare-metal hosts lack and a cloud would give: the Network Operator for `rdma` pools and NFS storage.
- node health: node-problem-detector with the XID check on the NVIDIA GPU nodes (no cloud repairs nodes here), scraped
  by kube-prometheus-stack when the stack runs it.
"""

from __future__ import annotations

import dataclasses
from typing import Optional, Sequence

import pulumi

from gpufleet.base import versions
from gpufleet.base.node_labels import pool_taints
from gpufleet.base.sharing import is_amd
from gpufleet.base.spec import NodePoolSpec, StackSpec
from gpufleet.base.spec.shape import shaped_pools
from gpufleet.components.k3s.cluster import K3sCluster, K3sClusterArgs
from gpufleet.components.k3s.node_pool import K3sNodePool, K3sNodePoolArgs, server_node_settings
from gpufleet.components.image_mirror import mirrored_image
from gpufleet.components.platform import ClusterContext, Platform, PlatformBuild, PlatformInputs


class K3sPlatform(Platform):

    def build(self, name: str, inputs: PlatformInputs, opts: pulumi.ResourceOptions) -> PlatformBuild:
        spec = inputs.spec
        server_names = {h.name for h in spec.cluster.k3s.servers}
        gpu_servers = {h.name: server_node_settings(pool, h) for pool in spec.node_pools for h in pool.hosts
                       if h.name in server_names}
        control_plane = K3sCluster(
            f"{name}-k3s",
            K3sClusterArgs(
                spec.cluster.k3s, spec.cluster.kubernetes_version, inputs.ssh_private_key,
                local_storage_path=spec.storage.local_path.path, gpu_servers=gpu_servers,
                protection=spec.cluster.protection,
                etcd_s3_access_key=inputs.etcd_s3_access_key,
                etcd_s3_secret_key=inputs.etcd_s3_secret_key,
                registry_mirror=spec.registry.mirror, registry_username=spec.registry.username,
                registry_password=inputs.registry_password,
            ),
            opts=opts,
        )
        pools = [K3sNodePool(f"{name}-pool-{pool.name}",
                             K3sNodePoolArgs(pool, control_plane.join, provider=control_plane.provider), opts=opts)
                 for pool in spec.node_pools]
        access = dataclasses.replace(control_plane.access, ready=[*control_plane.access.ready, *pools])
        return PlatformBuild(control_plane=control_plane, access=access, node_pools=pools)

    def gpu_operator_rdma(self, nvidia_pools: Sequence[NodePoolSpec]) -> bool:
        """GPUDirect RDMA over the Network Operator's NICs (`addons`) whenever an NVIDIA pool asks for RDMA."""
        return any(p.rdma for p in nvidia_pools)

    def addons(self, ctx: ClusterContext) -> dict[str, pulumi.ComponentResource]:
        """RDMA (the Network Operator) for rdma pools and NFS storage: what bare-metal hosts lack."""
        spec, out = ctx.spec, {}
        rdma_pools = [p for p in spec.node_pools if p.rdma]
        if rdma_pools:
            from gpufleet.components.gpu_stack.network_operator import NetworkOperator, NetworkOperatorArgs

            taints = [t for pool in spec.node_pools for t in pool_taints(pool)]
            out["network-operator"] = NetworkOperator(
                f"{ctx.name}-network-operator", NetworkOperatorArgs(rdma_pools, taints), ctx.access, opts=ctx.opts
            )
        if spec.storage.nfs is not None:
            from gpufleet.components.k3s.storage import K3sStorage, K3sStorageArgs

            out["storage"] = K3sStorage(
                f"{ctx.name}-storage", K3sStorageArgs(spec.storage, protection=spec.cluster.protection), ctx.access,
                opts=ctx.opts,
            )
        return out

    def node_problem_detector(self, spec: StackSpec) -> bool:
        """With nodeHealth on and NVIDIA GPU pools: the GPU condition exists, so the alert on it is installed."""
        nvidia_gpu_pools = [p for p in shaped_pools(spec) if p.gpu and not is_amd(p)]
        return spec.observability.node_health.enabled and bool(nvidia_gpu_pools)

    def node_health(self, ctx: ClusterContext, observability: Optional[pulumi.ComponentResource]
                    ) -> Optional[pulumi.ComponentResource]:
        """node-problem-detector on every node, with the XID check on the NVIDIA GPU nodes; scraped (PodMonitor)
        when the stack runs kube-prometheus-stack, whose CRDs it waits for."""
        if not ctx.spec.observability.node_health.enabled:
            return None
        from gpufleet.components.k3s.node_health import K3sNodeHealth, K3sNodeHealthArgs

        args = K3sNodeHealthArgs(pod_monitor=observability is not None,
                                 image=mirrored_image(versions.NODE_PROBLEM_DETECTOR_IMAGE, ctx.access.facts))
        ready = [observability.release] if observability is not None else []
        return K3sNodeHealth(f"{ctx.name}-node-health", args, ctx.access, crds_ready=ready, opts=ctx.opts)


PLATFORM = K3sPlatform()
