"""AksCluster: an AKS control plane and its CPU system pool, and the kubeconfig.

Private API server, Microsoft Entra ID with Azure RBAC and local accounts off (every user signs in through Entra ID:
the kubeconfig runs kubelogin), workload identity with the OIDC issuer, Azure CNI Overlay, the Azure Disk, Files and
(on request) Blob CSI drivers, the pricing tier and support plan the stack names. The system pool (mode System, tainted
CriticalAddonsOnly) runs the operators; GPU pools are separate node pools (components/aks/node_pool.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pulumi
import pulumi_azure as azure
import pulumi_kubernetes as k8s

from gpufleet.base import labels as L
from gpufleet.base.spec.platforms.aks import AksSpec
from gpufleet.base.spec.features.protection import ProtectionSpec
from gpufleet.components.aks.network import AksNetworkRef
from gpufleet.components.cluster_access import ClusterAccess, exec_kubeconfig
from gpufleet.components.protection import azure_exemption, protect

# kubelogin: the exec credential plugin for AKS clusters with Entra ID, and the Entra application every AKS cluster's
# API server accepts tokens for (Azure/kubelogin README, "Exec plugin format" and --server-id
# 6dae42f8-4368-4678-94ff-3960e28e3630, the "Azure Kubernetes Service AAD Server" application; read 2026-12-04).
KUBELOGIN = "kubelogin"
AKS_AAD_SERVER_APP_ID = "6dae42f8-4368-4678-94ff-3960e28e3630"
SYSTEM_POOL_NAME = "system"
# azurerm cycles a node pool through a temporary pool to change its VM size, OS disk or subnet; the name must be a
# valid pool name too (terraform-provider-azurerm, kubernetes_cluster `temporary_name_for_rotation`).
SYSTEM_ROTATION_NAME = "systemtmp"


@dataclass(frozen=True)
class AksClusterArgs:
    spec: AksSpec
    """The aks block of the stack spec."""
    cluster_name: str
    """AKS cluster name (renaming replaces the cluster)."""
    kubernetes_version: str
    """Kubernetes minor (an alias minor version: AKS runs its latest GA patch)."""
    network: AksNetworkRef
    """Resource group and node subnet."""
    protection: ProtectionSpec = ProtectionSpec()
    """Protect the cluster from `pulumi destroy` and replacement (Pulumi `protect`); default: on."""
    tags: Optional[dict] = None
    """Azure tags on the cluster; default: none."""


def kubeconfig(name: str, server: str, ca_certificate: str) -> str:
    """A kubeconfig that gets Entra ID tokens from kubelogin (as `az aks get-credentials` + `kubelogin convert-kubeconfig
    -l azurecli`): local accounts are off, so there is no static credential to hand out."""
    return exec_kubeconfig(name, server, ca_certificate, {
        "apiVersion": "client.authentication.k8s.io/v1beta1",
        "command": KUBELOGIN,
        "args": ["get-token", "--login", "azurecli", "--server-id", AKS_AAD_SERVER_APP_ID],
        "installHint": "Install kubelogin: az aks install-cli (or github.com/Azure/kubelogin releases)",
        "interactiveMode": "IfAvailable",
    })


class AksCluster(pulumi.ComponentResource):
    """Exposes `access` (kubeconfig, provider), `cluster` (its id for node pools) and `oidc_issuer_url`."""

    access: ClusterAccess

    def __init__(self, name: str, args: AksClusterArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:aks:AksCluster", name, None, opts)
        spec = args.spec
        child = pulumi.ResourceOptions(parent=self)
        system = spec.system_pool
        net = spec.network
        cs = azure.containerservice
        self.cluster = cs.KubernetesCluster(
            f"{name}-cluster",
            name=args.cluster_name,
            resource_group_name=args.network.resource_group_name,
            location=spec.location,
            dns_prefix=args.cluster_name,
            kubernetes_version=args.kubernetes_version,
            sku_tier=spec.tier,
            support_plan=spec.support_plan,
            private_cluster_enabled=spec.private_cluster,
            api_server_access_profile=cs.KubernetesClusterApiServerAccessProfileArgs(
                authorized_ip_ranges=list(spec.authorized_ip_ranges)) if spec.authorized_ip_ranges else None,
            identity=cs.KubernetesClusterIdentityArgs(type="SystemAssigned"),
            # Entra ID with Azure RBAC; local accounts off, so no static admin credential exists
            # (articles/aks/manage-local-accounts-managed-azure-ad.md).
            azure_active_directory_role_based_access_control=cs.KubernetesClusterAzureActiveDirectoryRoleBasedAccessControlArgs(
                azure_rbac_enabled=True,
                admin_group_object_ids=list(spec.entra.admin_group_object_ids) or None,
                tenant_id=spec.entra.tenant_id,
            ),
            local_account_disabled=True,
            role_based_access_control_enabled=True,
            oidc_issuer_enabled=spec.workload_identity,
            workload_identity_enabled=spec.workload_identity,
            network_profile=cs.KubernetesClusterNetworkProfileArgs(
                network_plugin="azure", network_plugin_mode="overlay", network_data_plane="cilium", network_policy="cilium",
                pod_cidr=net.pod_cidr, service_cidr=net.service_cidr, dns_service_ip=net.dns_service_ip,
                load_balancer_sku="standard", outbound_type="loadBalancer",
            ),
            storage_profile=cs.KubernetesClusterStorageProfileArgs(
                disk_driver_enabled=True, file_driver_enabled=True, blob_driver_enabled=spec.storage.blob,
                snapshot_controller_enabled=True,
            ),
            # least-waste: of the pools that fit a pending pod, scale the one left with the least idle CPU and memory
            # (kubernetes/autoscaler cluster-autoscaler FAQ, "What are Expanders?").
            # Scale-down that fits GPU jobs, for the whole cluster: AKS has no per-pool setting (AksScaleDownSpec).
            auto_scaler_profile=cs.KubernetesClusterAutoScalerProfileArgs(
                expander="least-waste",
                scale_down_unneeded=spec.scale_down.unneeded_time,
                scale_down_unready=spec.scale_down.unready_time,
                scale_down_utilization_threshold=format(spec.scale_down.utilization_threshold, "g"),
            ),
            automatic_upgrade_channel="patch",
            node_os_upgrade_channel="NodeImage",
            default_node_pool=cs.KubernetesClusterDefaultNodePoolArgs(
                name=SYSTEM_POOL_NAME,
                vm_size=system.vm_size,
                auto_scaling_enabled=True,
                min_count=system.min_nodes,
                max_count=system.max_nodes,
                node_count=system.min_nodes,
                os_disk_size_gb=system.os_disk_size_gb,
                # Ubuntu 24.04: 22.04 is retired on 2027-06-30 (docs/aks.md).
                os_sku="Ubuntu2404",
                vnet_subnet_id=args.network.subnet_id,
                zones=list(spec.zones) or None,
                # System pods only: the CriticalAddonsOnly=true:NoSchedule taint (articles/aks/use-system-pools.md).
                only_critical_addons_enabled=True,
                node_labels={L.POOL_LABEL: SYSTEM_POOL_NAME},
                temporary_name_for_rotation=SYSTEM_ROTATION_NAME,
                upgrade_settings=cs.KubernetesClusterDefaultNodePoolUpgradeSettingsArgs(max_surge="10%"),
            ),
            # A stack's reason for no protection, as an Azure tag allows it (policy stateful-resource-protection).
            tags={**(args.tags or {}), **azure_exemption(args.protection)} or None,
            # The autoscaler owns the system pool's size: node_count is its size at creation only
            # (terraform-provider-azurerm kubernetes_cluster docs, default_node_pool.node_count with auto-scaling).
            opts=protect(args.protection, parent=self, ignore_changes=["defaultNodePool.nodeCount"]),
        )
        if net.existing_subnet_id is None:
            # With a subnet of its own, the cluster's identity manages the subnet's load balancer and route settings:
            # it needs Network Contributor on it (articles/aks/configure-azure-cni.md, prerequisites).
            self.subnet_role = azure.authorization.Assignment(
                f"{name}-subnet-role", scope=args.network.subnet_id, role_definition_name="Network Contributor",
                principal_id=self.cluster.identity.apply(lambda i: i.principal_id if i else None),
                principal_type="ServicePrincipal", opts=child)
        self.oidc_issuer_url = self.cluster.oidc_issuer_url
        server = pulumi.Output.all(self.cluster.private_fqdn, self.cluster.fqdn).apply(
            lambda v: f"https://{v[0] if spec.private_cluster and v[0] else v[1]}:443")
        ca = self.cluster.kube_configs.apply(lambda cfgs: cfgs[0].cluster_ca_certificate if cfgs else "")
        self.kubeconfig = pulumi.Output.secret(
            pulumi.Output.all(server, ca).apply(lambda v: kubeconfig(args.cluster_name, v[0], v[1])))
        self.provider = k8s.Provider(f"{name}-k8s", kubeconfig=self.kubeconfig, opts=child)
        self.access = ClusterAccess(
            name=args.cluster_name,
            platform="aks",
            kubernetes_version=args.kubernetes_version,
            kubeconfig=self.kubeconfig,
            provider=self.provider,
            facts={"location": spec.location, "oidc_issuer_url": self.oidc_issuer_url,
                   **_driver_facts(spec)},
            ready=[self.cluster],
        )
        self.register_outputs({"kubeconfig": self.kubeconfig, "clusterName": args.cluster_name,
                               "oidcIssuerUrl": self.oidc_issuer_url})


def _driver_facts(spec: AksSpec) -> dict:
    """What the GPU Operator must leave alone (components/gpu_stack/operator.py): with gpuDriver aks, AKS's GPU node
    image ships the driver and the NVIDIA container toolkit (NVIDIA GPU Operator docs, 'NVIDIA GPU Operator with Azure
    Kubernetes Service': 'AKS images include a preinstalled NVIDIA GPU Driver and preinstalled NVIDIA Container
    Toolkit'), and a second toolkit would rewrite AKS's containerd configuration (azure.github.io/aks-rdma-infiniband,
    configurations/gpu-operator). With gpuDriver operator, AKS installs neither: the operator installs both."""
    if spec.gpu_driver == "aks":
        return {"driver_preinstalled": True, "toolkit_preinstalled": True}
    return {}
