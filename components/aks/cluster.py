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
import base64

import pulumi_azure_native.authorization as authorization
import pulumi_azure_native.containerservice as cs
import yaml
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
# Network Contributor, an Azure built-in role, by its role definition id (the same GUID in every subscription:
# learn.microsoft.com/azure/role-based-access-control/built-in-roles/networking, "Network Contributor"). Azure Native's
# RoleAssignment takes the definition's id, not its name.
NETWORK_CONTRIBUTOR_ROLE = "4d97b98b-1d4f-4787-a291-c67834d212e7"
CRITICAL_ADDONS_ONLY_TAINT = "CriticalAddonsOnly=true:NoSchedule"
# The system pool's node count inside the cluster's inputs (Pulumi ignoreChanges path): the autoscaler owns it.
SYSTEM_POOL_COUNT = "agentPoolProfiles[0].count"


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


def cluster_ca(kubeconfig_b64: str) -> str:
    """The base64 CA of the first cluster in a base64-encoded kubeconfig (what listClusterUserCredential returns, AKS
    REST API CredentialResult.value); "" when there is none."""
    if not kubeconfig_b64:
        return ""
    doc = yaml.safe_load(base64.b64decode(kubeconfig_b64)) or {}
    clusters = doc.get("clusters") or [{}]
    return (clusters[0].get("cluster") or {}).get("certificate-authority-data", "")


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
        self.cluster = cs.ManagedCluster(
            f"{name}-cluster",
            resource_name_=args.cluster_name,
            resource_group_name=args.network.resource_group_name,
            location=spec.location,
            dns_prefix=args.cluster_name,
            kubernetes_version=args.kubernetes_version,
            sku=cs.ManagedClusterSKUArgs(name="Base", tier=spec.tier),
            support_plan=spec.support_plan,
            api_server_access_profile=cs.ManagedClusterAPIServerAccessProfileArgs(
                enable_private_cluster=spec.private_cluster,
                authorized_ip_ranges=list(spec.authorized_ip_ranges) or None),
            identity=cs.ManagedClusterIdentityArgs(type="SystemAssigned"),
            # Entra ID with Azure RBAC; local accounts off, so no static admin credential exists
            # (articles/aks/manage-local-accounts-managed-azure-ad.md).
            aad_profile=cs.ManagedClusterAADProfileArgs(
                managed=True,
                enable_azure_rbac=True,
                admin_group_object_ids=list(spec.entra.admin_group_object_ids) or None,
                tenant_id=spec.entra.tenant_id,
            ),
            disable_local_accounts=True,
            enable_rbac=True,
            oidc_issuer_profile=cs.ManagedClusterOIDCIssuerProfileArgs(enabled=spec.workload_identity),
            security_profile=cs.ManagedClusterSecurityProfileArgs(
                workload_identity=cs.ManagedClusterSecurityProfileWorkloadIdentityArgs(enabled=spec.workload_identity)),
            network_profile=cs.ContainerServiceNetworkProfileArgs(
                network_plugin="azure", network_plugin_mode="overlay", network_dataplane="cilium", network_policy="cilium",
                pod_cidr=net.pod_cidr, service_cidr=net.service_cidr, dns_service_ip=net.dns_service_ip,
                load_balancer_sku="standard", outbound_type="loadBalancer",
            ),
            storage_profile=cs.ManagedClusterStorageProfileArgs(
                disk_csi_driver=cs.ManagedClusterStorageProfileDiskCSIDriverArgs(enabled=True),
                file_csi_driver=cs.ManagedClusterStorageProfileFileCSIDriverArgs(enabled=True),
                blob_csi_driver=cs.ManagedClusterStorageProfileBlobCSIDriverArgs(enabled=spec.storage.blob),
                snapshot_controller=cs.ManagedClusterStorageProfileSnapshotControllerArgs(enabled=True),
            ),
            # least-waste: of the pools that fit a pending pod, scale the one left with the least idle CPU and memory
            # (kubernetes/autoscaler cluster-autoscaler FAQ, "What are Expanders?").
            # Scale-down that fits GPU jobs, for the whole cluster: AKS has no per-pool setting (AksScaleDownSpec).
            auto_scaler_profile=cs.ManagedClusterPropertiesAutoScalerProfileArgs(
                expander="least-waste",
                scale_down_unneeded_time=spec.scale_down.unneeded_time,
                scale_down_unready_time=spec.scale_down.unready_time,
                scale_down_utilization_threshold=format(spec.scale_down.utilization_threshold, "g"),
            ),
            auto_upgrade_profile=cs.ManagedClusterAutoUpgradeProfileArgs(
                upgrade_channel="patch", node_os_upgrade_channel="NodeImage"),
            agent_pool_profiles=[cs.ManagedClusterAgentPoolProfileArgs(
                name=SYSTEM_POOL_NAME,
                mode="System",
                os_type="Linux",
                vm_size=system.vm_size,
                enable_auto_scaling=True,
                min_count=system.min_nodes,
                max_count=system.max_nodes,
                count=system.min_nodes,
                os_disk_size_gb=system.os_disk_size_gb,
                # Ubuntu 24.04: 22.04 is retired on 2027-06-30 (docs/aks.md).
                os_sku="Ubuntu2404",
                vnet_subnet_id=args.network.subnet_id,
                availability_zones=list(spec.zones) or None,
                # System pods only: the CriticalAddonsOnly=true:NoSchedule taint (articles/aks/use-system-pools.md;
                # the classic provider's only_critical_addons_enabled wrote the same taint).
                node_taints=[CRITICAL_ADDONS_ONLY_TAINT],
                node_labels={L.POOL_LABEL: SYSTEM_POOL_NAME},
                upgrade_settings=cs.AgentPoolUpgradeSettingsArgs(max_surge="10%"),
            )],
            # A stack's reason for no protection, as an Azure tag allows it (policy stateful-resource-protection).
            tags={**(args.tags or {}), **azure_exemption(args.protection)} or None,
            # The autoscaler owns the system pool's size: count is its size at creation only (AKS REST API,
            # ManagedClusterAgentPoolProfile.count with enableAutoScaling; articles/aks/cluster-autoscaler.md).
            opts=protect(args.protection, parent=self, ignore_changes=[SYSTEM_POOL_COUNT]),
        )
        if net.existing_subnet_id is None:
            # With a subnet of its own, the cluster's identity manages the subnet's load balancer and route settings:
            # it needs Network Contributor on it (articles/aks/configure-azure-cni.md, prerequisites).
            # The role's id in the subnet's subscription (/subscriptions/<id>/providers/Microsoft.Authorization/
            # roleDefinitions/<guid>), read from the subnet's own id: no client-config lookup.
            role_id = pulumi.Output.from_input(args.network.subnet_id).apply(
                lambda sid: "/".join(sid.split("/")[:3])
                + f"/providers/Microsoft.Authorization/roleDefinitions/{NETWORK_CONTRIBUTOR_ROLE}")
            self.subnet_role = authorization.RoleAssignment(
                f"{name}-subnet-role", scope=args.network.subnet_id, role_definition_id=role_id,
                principal_id=self.cluster.identity.apply(lambda i: i.principal_id if i else None),
                principal_type="ServicePrincipal", opts=child)
        self.oidc_issuer_url = self.cluster.oidc_issuer_profile.apply(lambda p: (p.issuer_url if p else None) or "")
        server = pulumi.Output.all(self.cluster.private_fqdn, self.cluster.fqdn).apply(
            lambda v: f"https://{v[0] if spec.private_cluster and v[0] else v[1]}:443")
        # The cluster's CA from the user kubeconfig AKS hands out (listClusterUserCredential, which works with local
        # accounts off: it carries no credential, only the server and its CA). ManagedCluster has no CA output.
        creds = cs.list_managed_cluster_user_credentials_output(
            resource_group_name=args.network.resource_group_name, resource_name=self.cluster.name)
        ca = creds.apply(lambda c: cluster_ca(c.kubeconfigs[0].value if c.kubeconfigs else ""))
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
