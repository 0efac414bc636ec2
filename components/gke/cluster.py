"""GkeCluster: a GKE Standard control plane (regional or zonal), its CPU system pool, and the kubeconfig.

Private nodes, optional private endpoint with authorized networks, Workload Identity, Dataplane V2
(ADVANCED_DATAPATH), a release channel and a daily maintenance window; the default node pool is removed
so every pool is declared. The kubeconfig authenticates with gke-gcloud-auth-plugin (no static credentials).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from gpufleet.components.cluster_access import ClusterAccess, exec_kubeconfig
from gpufleet.components.gke.network import GkeNetworkRef
from gpufleet.components.known import known
from gpufleet.components.protection import gcp_exemption, protect
from gpufleet.base import labels as L
from gpufleet.base.catalog import gcp_families
from gpufleet.base.spec import GkeSpec
from gpufleet.base.spec.features.protection import ProtectionSpec

AUTH_PLUGIN = "gke-gcloud-auth-plugin"
CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform"
SYSTEM_INITIAL_NODES = 1  # per zone of the system pool, at creation only


@dataclass(frozen=True)
class GkeClusterArgs:
    spec: GkeSpec
    """The gke block of the stack spec."""
    cluster_name: str
    """GKE cluster name (renaming replaces the cluster)."""
    kubernetes_version: str
    """Minimum control-plane version (a minor, e.g. "1.34"); the release channel picks patches."""
    project: str
    """GCP project."""
    network: GkeNetworkRef
    """VPC, subnet and secondary range names."""
    multi_networking: bool = False
    """Enable GKE multi-networking (GPUDirect pools attach extra VPCs); default off."""
    protection: ProtectionSpec = ProtectionSpec()
    """Protect the cluster (Pulumi `protect`; the provider's deletionProtection unless the gke block sets it); default: on."""
    gateway_api: bool = False
    """Turn on GKE's Gateway controller with the standard channel of the Gateway API CRDs (`gatewayApiConfig`), for
    gpufleet:serving: GKE then installs and upgrades the Gateway API and, from 1.34.0-gke.1626000, the Inference
    Extension's GA CRDs itself (cloud.google.com/kubernetes-engine/docs/how-to/deploy-gke-inference-gateway). Default:
    off (GKE's own default is left alone)."""
    managed_metrics: bool = False
    """GKE Managed Service for Prometheus with GKE's DCGM metrics package (gpufleet:observability.metrics backend
    gke-managed): monitoringConfig.managedPrometheus on and the `DCGM` component enabled, so GKE's own DCGM exporter
    publishes GPU metrics (GKE runs its own GPU stack, without the GPU Operator's exporter). Default: off (GKE's own
    default monitoring config is left alone)."""


def kubeconfig(name: str, endpoint: str, ca_certificate: str) -> str:
    """A kubeconfig that gets tokens from gke-gcloud-auth-plugin (as `gcloud container clusters get-credentials`)."""
    return exec_kubeconfig(name, f"https://{endpoint}", ca_certificate, {
        "apiVersion": "client.authentication.k8s.io/v1beta1",
        "command": AUTH_PLUGIN,
        "installHint": "Install gke-gcloud-auth-plugin: gcloud components install gke-gcloud-auth-plugin",
        "provideClusterInfo": True,
        "interactiveMode": "IfAvailable",
    })


class GkeCluster(pulumi.ComponentResource):
    """Exposes `access` (kubeconfig, provider) and `cluster` (id and location for node pools)."""

    access: ClusterAccess

    def __init__(self, name: str, args: GkeClusterArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:gke:GkeCluster", name, None, opts)
        spec = args.spec
        child = pulumi.ResourceOptions(parent=self)
        self.location = spec.zone or spec.region

        private = gcp.container.ClusterPrivateClusterConfigArgs(
            enable_private_nodes=spec.private_nodes,
            enable_private_endpoint=spec.private_endpoint,
            master_ipv4_cidr_block=spec.master_ipv4_cidr if spec.private_nodes else None,
        )
        authorized = None
        if spec.authorized_networks or spec.private_endpoint:
            authorized = gcp.container.ClusterMasterAuthorizedNetworksConfigArgs(
                cidr_blocks=[
                    gcp.container.ClusterMasterAuthorizedNetworksConfigCidrBlockArgs(cidr_block=n.cidr, display_name=n.name or None)
                    for n in spec.authorized_networks
                ]
            )
        storage = spec.storage
        self.cluster = gcp.container.Cluster(
            f"{name}-cluster",
            name=args.cluster_name,
            project=args.project,
            location=self.location,
            node_locations=spec.node_zones or None,
            network=args.network.network,
            subnetwork=args.network.subnetwork,
            networking_mode="VPC_NATIVE",
            **({"gateway_api_config": gcp.container.ClusterGatewayApiConfigArgs(channel="CHANNEL_STANDARD")}
               if args.gateway_api else {}),
            ip_allocation_policy=gcp.container.ClusterIpAllocationPolicyArgs(
                cluster_secondary_range_name=args.network.pods_range_name,
                services_secondary_range_name=args.network.services_range_name,
            ),
            # Every pool is declared by gpufleet: GKE's default pool is created and removed at once.
            remove_default_node_pool=True,
            initial_node_count=1,
            min_master_version=args.kubernetes_version,
            release_channel=gcp.container.ClusterReleaseChannelArgs(channel=spec.release_channel),
            # GKE's managed DCGM package (cloud.google.com/kubernetes-engine/docs/how-to/dcgm-metrics) needs managed
            # collection on; pulumi-gcp lists `DCGM` among enable_components (ClusterMonitoringConfigArgs docstring).
            monitoring_config=gcp.container.ClusterMonitoringConfigArgs(
                enable_components=["SYSTEM_COMPONENTS", "DCGM"],
                managed_prometheus=gcp.container.ClusterMonitoringConfigManagedPrometheusArgs(enabled=True),
            ) if args.managed_metrics else None,
            # Only when asked: GKE's default profile (balanced) is left alone otherwise, so existing clusters' inputs stay.
            # `enabled` is node auto-provisioning, which gpufleet does not use; it "must be supplied for GKE Standard
            # clusters" (pulumi-gcp ClusterClusterAutoscalingArgs docstring).
            cluster_autoscaling=gcp.container.ClusterClusterAutoscalingArgs(
                enabled=False,
                autoscaling_profile=spec.autoscaling_profile.replace("-", "_").upper(),
            ) if spec.autoscaling_profile else None,
            datapath_provider="ADVANCED_DATAPATH",  # Dataplane V2 (also needed by multi-networking)
            enable_multi_networking=args.multi_networking or None,
            private_cluster_config=private,
            master_authorized_networks_config=authorized,
            workload_identity_config=gcp.container.ClusterWorkloadIdentityConfigArgs(
                workload_pool=f"{args.project}.svc.id.goog"
            ) if spec.workload_identity else None,
            maintenance_policy=gcp.container.ClusterMaintenancePolicyArgs(
                daily_maintenance_window=gcp.container.ClusterMaintenancePolicyDailyMaintenanceWindowArgs(
                    start_time=spec.maintenance_window
                ),
                # Windows without upgrades, e.g. around a run on reserved GPUs (cluster-toolkit's gke-cluster
                # `maintenance_exclusions`, main.tf lines 278-289 at v1.95.0).
                maintenance_exclusions=[
                    gcp.container.ClusterMaintenancePolicyMaintenanceExclusionArgs(
                        exclusion_name=x.name,
                        start_time=x.start_time,
                        end_time=x.end_time,
                        exclusion_options=gcp.container.ClusterMaintenancePolicyMaintenanceExclusionExclusionOptionsArgs(
                            scope=x.scope, end_time_behavior="UNTIL_END_OF_SUPPORT" if x.until_end_of_support else None
                        ),
                    )
                    for x in spec.maintenance_exclusions
                ] or None,
            ),
            addons_config=gcp.container.ClusterAddonsConfigArgs(
                gce_persistent_disk_csi_driver_config=gcp.container.ClusterAddonsConfigGcePersistentDiskCsiDriverConfigArgs(enabled=True),
                gcp_filestore_csi_driver_config=gcp.container.ClusterAddonsConfigGcpFilestoreCsiDriverConfigArgs(enabled=storage.filestore),
                gcs_fuse_csi_driver_config=gcp.container.ClusterAddonsConfigGcsFuseCsiDriverConfigArgs(enabled=storage.gcs_fuse),
                # Only when asked: existing clusters' inputs stay as they were (the driver is off by default).
                lustre_csi_driver_config=gcp.container.ClusterAddonsConfigLustreCsiDriverConfigArgs(enabled=True)
                if storage.managed_lustre else None,
            ),
            # A stack's reason for no protection, as GCP labels allow it (the full reason stays in the stack file).
            resource_labels=gcp_exemption(args.protection) or None,
            deletion_protection=args.protection.enabled if spec.deletion_protection is None else spec.deletion_protection,
            # protect, not retain_on_delete: a retained cluster keeps billing unseen (a cost trap); a protected one
            # makes `pulumi destroy` or a replacing change stop and say so. Everything scheduled on it is its state.
            opts=protect(args.protection, parent=self),
        )

        system = spec.system_pool
        system_series = gcp_families.series(system.machine_type)
        self.system_pool = gcp.container.NodePool(
            f"{name}-system-pool",
            name="system",
            project=args.project,
            cluster=self.cluster.id,
            location=self.location,
            # Start with SYSTEM_INITIAL_NODES per zone: without it the provider creates the pool with 0 nodes, and
            # GKE's autoscaler uses the minimum only to stop scale-down, so system pods would wait for a scale-up.
            initial_node_count=SYSTEM_INITIAL_NODES,
            # The autoscaler owns the size between these totals; gpufleet never sets node_count.
            autoscaling=gcp.container.NodePoolAutoscalingArgs(
                total_min_node_count=system.min_nodes, total_max_node_count=system.max_nodes, location_policy="BALANCED"
            ),
            management=gcp.container.NodePoolManagementArgs(auto_repair=True, auto_upgrade=True),
            node_config=gcp.container.NodePoolNodeConfigArgs(
                machine_type=system.machine_type,
                disk_size_gb=system.disk_size_gb,
                # Per machine series (gpufleet/base/catalog/gcp_families.yaml): N4/C4 take Hyperdisk boot disks only. (No
                # gvnic setting: GKE's gVNIC option is for GPU nodes only; CPU series that need gVNIC get it from GKE.)
                disk_type=system_series.boot_disk if system_series else gcp_families.PERSISTENT_DISK,
                image_type="COS_CONTAINERD",
                service_account=spec.service_account,
                oauth_scopes=[CLOUD_PLATFORM_SCOPE],
                labels={L.POOL_LABEL: "system"},
                workload_metadata_config=gcp.container.NodePoolNodeConfigWorkloadMetadataConfigArgs(mode="GKE_METADATA")
                if spec.workload_identity else None,
                metadata={"disable-legacy-endpoints": "true"},
                shielded_instance_config=gcp.container.NodePoolNodeConfigShieldedInstanceConfigArgs(
                    enable_secure_boot=True, enable_integrity_monitoring=True
                ),
            ),
            # initialNodeCount forces replacement and GKE rewrites it on resize (hashicorp/terraform-provider-google#6354).
            opts=pulumi.ResourceOptions(parent=self, ignore_changes=["initialNodeCount"]),
        )

        ca = self.cluster.master_auth.apply(known(lambda auth: auth.cluster_ca_certificate))
        self.kubeconfig = pulumi.Output.secret(
            pulumi.Output.all(self.cluster.endpoint, ca).apply(known(lambda v: kubeconfig(args.cluster_name, v[0], v[1])))
        )
        self.provider = k8s.Provider(f"{name}-k8s", kubeconfig=self.kubeconfig, opts=child)
        self.access = ClusterAccess(
            name=args.cluster_name,
            platform="gke",
            kubernetes_version=args.kubernetes_version,
            kubeconfig=self.kubeconfig,
            provider=self.provider,
            facts={"project": args.project, "location": self.location, "gpu_stack": spec.gpu_stack,
                   # GKE admits system-node-critical / system-cluster-critical pods outside kube-system only up to a
                   # ResourceQuota for those classes (NVIDIA GPU Operator docs, google-gke.rst): the operator adds one.
                   "critical_pods_need_quota": True,
                   # NVIDIA's DRA driver for GPUs docs/install.md: "On GKE, include --set nvidiaDriverRoot=/home/kubernetes/bin/nvidia"
                   # (where GKE's COS installer puts the driver); with the GPU Operator's driver the DRA driver uses its root.
                   **({"nvidia_driver_root": "/home/kubernetes/bin/nvidia"} if spec.gpu_stack == "gke" else {})},
            ready=[self.system_pool],
        )
        self.register_outputs({"kubeconfig": self.kubeconfig, "endpoint": self.cluster.endpoint, "clusterName": args.cluster_name})
