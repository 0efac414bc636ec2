"""aks: review traits (gpufleet/base/platforms/contract/review.py says what each one means).

Rows for pulumi-azure resources (pulumi-azure 6.40.1, bridged from terraform-provider-azurerm 4.x). Its generated SDK
docstrings say which inputs force a new resource ("Changing this forces a new resource to be created"), and which make
the provider rebuild a node pool through `temporary_name_for_rotation` ("Changing this property requires specifying
`temporary_name_for_rotation`"): azurerm then creates the temporary pool, deletes the pool and creates it again with
the change, so every node of the pool is replaced although the Pulumi resource keeps its URN. Both are replacements
for a reviewer (the pool's nodes, their local disks and running pods go). Read from
pulumi_azure/containerservice/kubernetes_cluster_node_pool.py and kubernetes_cluster.py, 2026-12-04.
"""

from __future__ import annotations

from typing import Any

from gpufleet.base.platforms.contract.review import ReplaceTable, ReviewTraits, VersionedPart
from gpufleet.base.platforms.contract.versions import CONTROL_PLANE, NODE_POOL

_AKS_POOL_ROTATION = ("vmSize", "osDiskSizeGb", "osDiskType", "vnetSubnetId", "podSubnetId", "zones", "kubeletDiskType",
                      "kubeletConfig", "linuxOsConfig", "maxPods", "fipsEnabled", "hostEncryptionEnabled",
                      "nodePublicIpEnabled", "ultraSsdEnabled", "snapshotId")
_AZURE_NAMED = "Terraform azurerm provider docs: name, group and location force a new resource"

_KEY = "cluster.kubernetesVersion"
"""The stack key that sets every version these parts run (gpufleet:cluster.kubernetesVersion)."""

class AksReview(ReviewTraits):
    replace_tables = {
        "azure:containerservice/kubernetesClusterNodePool:KubernetesClusterNodePool": ReplaceTable(
            paths=("name", "kubernetesClusterId", "priority", "evictionPolicy", "spotMaxPrice", "gpuDriver", "gpuInstance",
                   "osType", "capacityReservationGroupId", "hostGroupId", "nodePublicIpPrefixId", "proximityPlacementGroupId",
                   "windowsProfile", *_AKS_POOL_ROTATION),
            conditional=("osSku",),
            source="pulumi-azure 6.40.1 KubernetesClusterNodePool docstrings: name, cluster, priority, eviction policy, Spot max "
            "price, GPU driver and the placement ids force a new pool; vmSize, OS disk, subnets, zones, kubelet and OS config "
            "rebuild the pool through temporary_name_for_rotation (every node replaced); osSku forces one except between "
            "AzureLinux and Ubuntu",
            checked=True,
        ),
        "azure:containerservice/kubernetesCluster:KubernetesCluster": ReplaceTable(
            paths=("name", "resourceGroupName", "location", "dnsPrefix", "dnsPrefixPrivateCluster", "edgeZone",
                   "diskEncryptionSetId", "nodeResourceGroup", "privateClusterEnabled", "privateDnsZoneId",
                   "roleBasedAccessControlEnabled", "networkProfile",
                   *(f"defaultNodePool.{p}" for p in ("name", *_AKS_POOL_ROTATION))),
            source="pulumi-azure 6.40.1 KubernetesCluster docstrings: name, resource group, location, DNS prefix, private "
            "cluster, RBAC and network profile force a new cluster; the default (system) node pool's VM size, OS disk, subnet "
            "and zones rebuild it through temporary_name_for_rotation (every system node replaced)",
            checked=True,
        ),
        "azure:network/virtualNetwork:VirtualNetwork": ReplaceTable(
            paths=("name", "resourceGroupName", "location"), source=_AZURE_NAMED, checked=False),
        "azure:network/subnet:Subnet": ReplaceTable(
            paths=("name", "resourceGroupName", "virtualNetworkName"), source=_AZURE_NAMED, checked=False),
        "azure:core/resourceGroup:ResourceGroup": ReplaceTable(
            paths=("name", "location"), source=_AZURE_NAMED, checked=False),
    }

    # The cluster autoscaler profile's scale-down settings (components/aks/cluster.py; AksScaleDownSpec), cluster-wide.
    scale_down_settings = {
        "azure:containerservice/kubernetesCluster:KubernetesCluster": {
            "autoScalerProfile.scaleDownUnneeded": "how long a node stays unneeded before it goes",
            "autoScalerProfile.scaleDownUnready": "how long an unready node stays before it goes",
            "autoScalerProfile.scaleDownUtilizationThreshold": "below it a node is a scale-down candidate",
            "autoScalerProfile.scaleDown": "when the autoscaler removes a node",
        },
    }

    disruptive_kinds = {
        "azure:containerservice/kubernetesCluster:KubernetesCluster": "cluster",
        "azure:containerservice/kubernetesClusterNodePool:KubernetesClusterNodePool": "node pool",
        "azure:network/virtualNetwork:VirtualNetwork": "network",
    }

    stateful = {
        "azure:containerservice/kubernetesCluster:KubernetesCluster": "every Kubernetes object of the cluster (its etcd), and what runs on it",
    }

    def kubernetes_parts(self, type_: str, inputs: dict) -> list[VersionedPart]:
        """The cluster's `kubernetesVersion` and each node pool's `orchestratorVersion` (gpufleet sets both from
        cluster.kubernetesVersion)."""
        if type_ == "azure:containerservice/kubernetesCluster:KubernetesCluster" and inputs.get("kubernetesVersion"):
            return [VersionedPart(CONTROL_PLANE, str(inputs.get("name") or ""), str(inputs["kubernetesVersion"]), _KEY)]
        if (type_ == "azure:containerservice/kubernetesClusterNodePool:KubernetesClusterNodePool"
                and inputs.get("orchestratorVersion")):
            return [VersionedPart(NODE_POOL, str(inputs.get("name") or ""), str(inputs["orchestratorVersion"]), _KEY)]
        return []

    def versions(self, type_: str, inputs: dict) -> list[tuple[str, Any]]:
        if type_ == "azure:containerservice/kubernetesCluster:KubernetesCluster":
            return [("Kubernetes (AKS control plane)", inputs.get("kubernetesVersion")),
                    ("AKS pricing tier", inputs.get("skuTier")), ("AKS support plan", inputs.get("supportPlan"))]
        if type_ == "azure:containerservice/kubernetesClusterNodePool:KubernetesClusterNodePool":
            return [("Kubernetes (AKS node pools)", inputs.get("orchestratorVersion")), ("AKS GPU driver", inputs.get("gpuDriver"))]
        return []
