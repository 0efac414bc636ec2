"""The GKE platform: network, GKE Standard control plane with its system pool, one GkeNodePool per GPU
pool (with GPUDirect VPCs where asked), COS's driver installer for DRA pools (GKE's own is off there) and the CSI
StorageClasses. With the gke-managed metrics backend and KEDA
on, the Google identity KEDA's operator queries Managed Service for Prometheus with (components/gke/keda_identity.py)."""

from __future__ import annotations

import dataclasses
from typing import Optional

import pulumi

from gpufleet.components.gke.cluster import GkeCluster, GkeClusterArgs
from gpufleet.components.gke.driver_installer import GkeDriverInstaller, GkeDriverInstallerArgs, installer_kind
from gpufleet.components.gke.gpudirect_network import GkeGpuDirectNetwork, GkeGpuDirectNetworkArgs
from gpufleet.components.gke.keda_identity import KedaWorkloadIdentity, KedaWorkloadIdentityArgs
from gpufleet.components.gke.gpudirect_wiring import GkeGpuDirectWiring, GkeGpuDirectWiringArgs, GpuDirectPool
from gpufleet.components.gke.network import GkeNetwork, GkeNetworkArgs
from gpufleet.components.gke.node_pool import GkeNodePool, GkeNodePoolArgs
from gpufleet.components.gke.lustre_access import GkeLustreAccess, GkeLustreAccessArgs
from gpufleet.components.gke.storage import GkeStorage, GkeStorageArgs
from gpufleet.components.observability.gke_managed import (
    GkeManagedObservability, GkeManagedObservabilityArgs, managed_prometheus_url,
)
from gpufleet.components.observability.pools import pool_facts
from gpufleet.components.platform import ClusterContext, Platform, PlatformBuild, PlatformInputs
from gpufleet.components.workloads import keda as keda_addon
from gpufleet.base.catalog import gcp as gcp_catalog
from gpufleet.base.platforms.gke.nodes import machine_of
from gpufleet.base.spec.platforms.gke import GkePoolSpec, initial_node_count, local_ssd, pool_sysctls, project_of
from gpufleet.base.spec.features.serving import needs_proxy_only_subnet


class GkePlatform(Platform):
    """Google Kubernetes Engine: everything in the module docstring is made in `build`; with `metrics.backend:
    gke-managed`, gpufleet's alerts, dashboard and PodMonitorings come after the workload layer they watch."""

    def build(self, name: str, inputs: PlatformInputs, opts: pulumi.ResourceOptions) -> PlatformBuild:
        spec = inputs.spec
        gke = spec.cluster.gke
        project = project_of(spec, {"gcp:project": pulumi.Config("gcp").get("project")})
        network = GkeNetwork(f"{name}-network", GkeNetworkArgs(gke, project, proxy_only_subnet=needs_proxy_only_subnet(spec)),
                             opts=opts)
        gpudirect_pools = [p for p in spec.node_pools if p.rdma]
        control_plane = GkeCluster(
            f"{name}-gke",
            GkeClusterArgs(
                spec=gke,
                cluster_name=name,
                kubernetes_version=spec.cluster.kubernetes_version,
                project=project,
                network=network.ref,
                multi_networking=bool(gpudirect_pools),
                protection=spec.cluster.protection,
                managed_metrics=spec.observability.backend("gke") == "gke-managed",
                gateway_api=spec.serving.enabled,
            ),
            opts=opts,
        )
        pools = []
        extra_networks = []
        next_block = 0  # GPUDirect pools take consecutive subnets of gpuDirectCidr: no two pod networks overlap
        for pool in spec.node_pools:
            machine = machine_of(pool)  # the catalog's row, or the stack's own facts (issue 49)
            node_networks = []
            if pool.rdma:
                zones = (pool.gke or GkePoolSpec()).zones
                direct = GkeGpuDirectNetwork(
                    f"{name}-pool-{pool.name}-gpudirect",
                    GkeGpuDirectNetworkArgs(
                        gpudirect=machine.gpudirect,
                        project=project,
                        region=gke.region,
                        cidr=gke.network.gpu_direct_cidr,
                        prefix=gke.network.gpu_direct_subnet_prefix,
                        zone=zones[0] if zones else None,
                        first_block=next_block,
                    ),
                    opts=opts,
                )
                next_block += machine.gpudirect.additional_node_networks
                extra_networks.append(GpuDirectPool(pool.name, machine.gpudirect.kind, direct.nics,
                                                    machine.gpudirect.manifests_key))
                node_networks = direct.node_networks
            pools.append(
                GkeNodePool(
                    f"{name}-pool-{pool.name}",
                    GkeNodePoolArgs(
                        pool=pool,
                        machine=machine,
                        cluster_id=control_plane.cluster.id,
                        location=control_plane.location,
                        project=project,
                        gpu_stack=gke.gpu_stack,
                        private_nodes=gke.private_nodes,
                        workload_identity=gke.workload_identity,
                        service_account=gke.service_account,
                        node_networks=node_networks,
                        initial_node_count=initial_node_count(pool, gke),
                        local_ssd=local_ssd(pool),
                        sysctls=pool_sysctls(pool),
                    ),
                    opts=opts,
                )
            )
        access = dataclasses.replace(control_plane.access, ready=[*control_plane.access.ready, *pools])
        if extra_networks:
            GkeGpuDirectWiring(f"{name}-gpudirect", GkeGpuDirectWiringArgs(extra_networks), control_plane.access, opts=opts)
        dra_machines = [p.machine_type for p in spec.node_pools if p.allocation == "dra"]
        if dra_machines and gke.gpu_stack == "gke":
            # One installer (the spec refuses DRA pools needing both: they share a DaemonSet name).
            for kind in sorted(installer_kind(dra_machines)):
                GkeDriverInstaller(f"{name}-nvidia-driver", GkeDriverInstallerArgs(kind), access, opts=opts)
        if gke.storage.managed_lustre and gke.network.existing is None:
            GkeLustreAccess(f"{name}-lustre-access", GkeLustreAccessArgs(project, network.ref.network), opts=opts)
        GkeStorage(f"{name}-storage", GkeStorageArgs(gke.storage, network.ref.network_name), control_plane.access, opts=opts)
        query_url = keda_identity = None
        if spec.observability.backend("gke") == "gke-managed":
            query_url = managed_prometheus_url(project)
            if spec.addons.keda.enabled:
                # The spec requires Workload Identity here (gpufleet/base/spec/platforms/gke.py): KEDA's gcp pod identity needs it.
                identity = KedaWorkloadIdentity(
                    f"{name}-keda-identity",
                    KedaWorkloadIdentityArgs(name, project, keda_addon.NAMESPACE, keda_addon.OPERATOR_SERVICE_ACCOUNT),
                    opts=opts,
                )
                keda_identity = keda_addon.KedaPodIdentity("gcp", gcp_service_account=identity.email)
        return PlatformBuild(
            control_plane=control_plane,
            access=access,
            node_pools=pools,
            prometheus_query_url=query_url,
            keda_identity=keda_identity,
        )

    def observability_after_workloads(self, ctx: ClusterContext, workloads: dict[str, pulumi.ComponentResource]
                                      ) -> Optional[pulumi.ComponentResource]:
        """GKE Managed Service for Prometheus (collection and GKE's DCGM exporter are the cluster's monitoringConfig):
        gpufleet's alert policies, dashboard and the PodMonitorings that feed KEDA's and Kueue's metrics to it."""
        if ctx.spec.observability.backend("gke") != "gke-managed":
            return None
        keda, kueue = workloads.get("keda"), workloads.get("kueue")
        return GkeManagedObservability(
            f"{ctx.name}-observability",
            GkeManagedObservabilityArgs(
                cluster=ctx.access.name, project=ctx.access.facts["project"], spec=ctx.spec.observability,
                pools=pool_facts(ctx.spec), keda_namespace=keda.namespace_name if keda else None,
                kueue_namespace=kueue.namespace_name if kueue else None,
                depends_on=[addon.release for addon in (keda, kueue) if addon],
            ),
            ctx.access,
            opts=ctx.opts,
        )


PLATFORM = GkePlatform()
