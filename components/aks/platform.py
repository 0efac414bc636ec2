"""The AKS platform: resource group and network, a private AKS control plane (Microsoft Entra ID, workload identity)
with its system pool, one AksNodePool per GPU pool and the StorageClasses on AKS's CSI drivers (`build`); the NVIDIA
Network Operator with InfiniBand for ND-series rdma pools (`addons`), whose GPUDirect RDMA the GPU Operator wires
(`gpu_operator_rdma`) or, with AKS's own driver, the nvidia-peermem reloader (`addons`). The cluster autoscaler is AKS's own (each pool's min/max count).

Who installs the NVIDIA driver is `cluster.aks.gpuDriver` (default operator: the GPU Operator; aks: AKS's node image),
never both (gpufleet/base/spec/platforms/aks_checks.py); the choice reaches the GPU Operator as the cluster's facts."""

from __future__ import annotations

import dataclasses
import json
from typing import Sequence

import pulumi

from gpufleet.base.platforms.aks.nodes import vm_of
from gpufleet.base.node_labels import node_taints, node_tolerations
from gpufleet.base.spec import NodePoolSpec
from gpufleet.components.aks.cluster import AksCluster, AksClusterArgs
from gpufleet.components.aks.infiniband_feature import AksInfinibandFeature
from gpufleet.components.aks.network import AksNetwork, AksNetworkArgs
from gpufleet.components.aks.node_pool import AksNodePool, AksNodePoolArgs
from gpufleet.components.aks.peermem_reloader import AksPeermemReloader, AksPeermemReloaderArgs
from gpufleet.components.aks.storage import AksStorage, AksStorageArgs
from gpufleet.components.platform import ClusterContext, Platform, PlatformBuild, PlatformInputs


class AksPlatform(Platform):
    def build(self, name: str, inputs: PlatformInputs, opts: pulumi.ResourceOptions) -> PlatformBuild:
        spec = inputs.spec
        aks = spec.cluster.aks
        network = AksNetwork(f"{name}-network", AksNetworkArgs(aks, name), opts=opts)
        control_plane = AksCluster(
            f"{name}-aks",
            AksClusterArgs(spec=aks, cluster_name=name, kubernetes_version=spec.cluster.kubernetes_version,
                           network=network.ref, protection=spec.cluster.protection),
            opts=opts,
        )
        feature: tuple[pulumi.Resource, ...] = ()
        if aks.infiniband_feature == "register" and any(p.rdma for p in spec.node_pools):
            # An InfiniBand pool's nodes land on one InfiniBand network only once the feature is registered.
            feature = (AksInfinibandFeature(f"{name}-infiniband-feature", opts=opts).registration,)
        pools = [
            AksNodePool(
                f"{name}-pool-{pool.name}",
                AksNodePoolArgs(pool=pool, vm=vm_of(pool), cluster_name=control_plane.cluster.name,
                                resource_group_name=network.ref.resource_group_name,
                                subnet_id=network.ref.subnet_id, install_driver=aks.gpu_driver == "aks",
                                default_zones=tuple(aks.zones), kubernetes_version=spec.cluster.kubernetes_version,
                                waits_for=feature if pool.rdma else ()),
                opts=opts,
            )
            for pool in spec.node_pools
        ]
        facts = dict(control_plane.access.facts)
        if any(p.rdma for p in spec.node_pools):
            facts["ofed_driver_container"] = True  # the Network Operator's DOCA driver (`addons`), not the host's
        access = dataclasses.replace(control_plane.access, facts=facts, ready=[*control_plane.access.ready, *pools])
        AksStorage(f"{name}-storage", AksStorageArgs(aks.storage), control_plane.access, opts=opts)
        return PlatformBuild(control_plane=control_plane, access=access, node_pools=pools)

    def gpu_operator_rdma(self, nvidia_pools: Sequence[NodePoolSpec]) -> bool:
        """GPUDirect RDMA over the Network Operator's InfiniBand ports whenever an NVIDIA pool asks for RDMA. It takes
        effect only with the operator's driver (driver.rdma); with AKS's driver (gpuDriver: aks) the operator's driver
        is off and the peermem reloader (`addons`) loads nvidia-peermem instead."""
        return any(p.rdma for p in nvidia_pools)

    def addons(self, ctx: ClusterContext) -> dict[str, pulumi.ComponentResource]:
        """The NVIDIA Network Operator for InfiniBand pools (ND series): DOCA driver and the RDMA shared device plugin;
        with AKS's own driver (cluster.aks.gpuDriver: aks), the nvidia-peermem reloader on those pools' nodes."""
        rdma_pools = [p for p in ctx.spec.node_pools if p.rdma]
        if not rdma_pools:
            return {}
        from gpufleet.components.gpu_stack.network_operator import NetworkOperator, NetworkOperatorArgs

        taints = [t for pool in ctx.spec.node_pools for t in node_taints(pool, "aks")]
        network_operator = NetworkOperator(
            f"{ctx.name}-network-operator", NetworkOperatorArgs(rdma_pools, taints, infiniband=True), ctx.access,
            opts=ctx.opts)
        out: dict[str, pulumi.ComponentResource] = {"network-operator": network_operator}
        if ctx.spec.cluster.aks.gpu_driver == "aks":
            # AKS's driver does not load nvidia-peermem (the GPU Operator's driver would, with driver.rdma): the AKS
            # InfiniBand guide's reloader, after the DOCA driver is up (components/aks/peermem_reloader.py).
            tolerations = {json.dumps(t, sort_keys=True): t for p in rdma_pools for t in node_tolerations(p, "aks")}
            out["peermem-reloader"] = AksPeermemReloader(
                f"{ctx.name}-peermem-reloader",
                AksPeermemReloaderArgs(pools=tuple(p.name for p in rdma_pools), tolerations=list(tolerations.values())),
                ctx.access, opts=ctx.opts, depends_on=[network_operator.policy])
        return out


PLATFORM = AksPlatform()
