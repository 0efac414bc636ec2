"""aks: review traits (gpufleet/base/platforms/contract/review.py says what each one means).

Rows for pulumi-azure-native resources (3.29.0, AKS REST API 2025-09-01). Azure Native replaces a resource when an
input marked `willReplaceOnChanges` in its schema changes: the URL's path parameters (the ARM names: resource group,
cluster, pool) and the properties in the provider's force-new table (pulumi/pulumi-azure-native
provider/pkg/gen/replacement.go `forceNewMap` @1b7112af: AgentPool `vmSize`, `gpuInstanceProfile`,
`networkProfile.nodePublicIPTags`, added by PR #3655 citing "You can't change the VM size of a node pool after you
create it"; ManagedCluster `dnsPrefix`, `location`, `nodeResourceGroup`, `diskEncryptionSetID`, `fqdnSubdomain`,
`linuxProfile`, `windowsProfile` and `networkProfile`, which provider/pkg/gen/__snapshots__/gen_managedcluster_test.snap
@080cda17 shows as `willReplaceOnChanges` whole; the forceNewMap copy read narrows it to its address, plugin, data plane,
policy and outbound fields, so the whole profile is listed, the stricter reading). gpufleet adds its own
`replace_on_changes` on the agent pools for what AKS cannot change in place (components/aks/node_pool.py
REPLACE_ON_CHANGES, with their sources): a replacement deletes the pool first (its name is fixed), so every node of the
pool goes. Unlike the classic provider, Azure Native has no temporary rotation pool.
"""

from __future__ import annotations

from typing import Any

from gpufleet.base.platforms.contract.review import ReplaceTable, ReviewTraits, VersionedPart
from gpufleet.base.platforms.contract.versions import CONTROL_PLANE, NODE_POOL

AKS_CLUSTER = "azure-native:containerservice:ManagedCluster"
AKS_AGENT_POOL = "azure-native:containerservice:AgentPool"
# components/aks/node_pool.py REPLACE_ON_CHANGES (the base layer does not import components: kept equal by
# tests/unit/test_review_aks.py).
GPUFLEET_POOL_REPLACES = ("scaleSetPriority", "scaleSetEvictionPolicy", "spotMaxPrice", "gpuProfile", "availabilityZones",
                          "osDiskSizeGB", "vnetSubnetID")
_NATIVE = "pulumi-azure-native 3.29.0: the ARM names in the resource's URL (path parameters) force a new resource"

_KEY = "cluster.kubernetesVersion"
"""The stack key that sets every version these parts run (gpufleet:cluster.kubernetesVersion)."""

class AksReview(ReviewTraits):
    replace_tables = {
        AKS_AGENT_POOL: ReplaceTable(
            paths=("agentPoolName", "resourceName", "resourceGroupName", "vmSize", "gpuInstanceProfile",
                   "networkProfile.nodePublicIPTags", *GPUFLEET_POOL_REPLACES),
            conditional=("osSKU",),
            source="pulumi-azure-native 3.29.0 AgentPool: the pool, cluster and group names (path parameters), vmSize, "
            "gpuInstanceProfile and networkProfile.nodePublicIPTags force a new pool (provider/pkg/gen/replacement.go "
            "forceNewMap, PR #3655); gpufleet replaces it on a change of Spot priority, eviction policy or max price "
            "(articles/aks/spot-node-pool.md: they can't be changed after creation), GPU driver, zones, OS disk size or "
            "subnet (create-only in AKS: pulumi-azure 6.40.1 docstrings, components/aks/node_pool.py); the pool is "
            "deleted first, so every node goes; osSku: only some moves are in place (AzureLinux and Ubuntu, per azurerm)",
            checked=True,
        ),
        AKS_CLUSTER: ReplaceTable(
            paths=("resourceName", "resourceGroupName", "location", "dnsPrefix", "fqdnSubdomain", "diskEncryptionSetID",
                   "nodeResourceGroup", "linuxProfile", "windowsProfile", "networkProfile"),
            source="pulumi-azure-native 3.29.0 ManagedCluster: the cluster and group names (path parameters), location, "
            "DNS prefix, FQDN subdomain, disk encryption set, node resource group, Linux and Windows profiles and the "
            "network profile force a new cluster (provider/pkg/gen/replacement.go forceNewMap, gen_managedcluster_test."
            "snap); the system pool (agentPoolProfiles) is updated in place, and AKS refuses a change of its VM size",
            checked=True,
        ),
        "azure-native:network:VirtualNetwork": ReplaceTable(
            paths=("virtualNetworkName", "resourceGroupName", "location"), source=_NATIVE + "; location (forceNewMap)",
            checked=True),
        "azure-native:network:Subnet": ReplaceTable(
            paths=("subnetName", "resourceGroupName", "virtualNetworkName"), source=_NATIVE, checked=True),
        "azure-native:resources:ResourceGroup": ReplaceTable(
            paths=("resourceGroupName", "location"), source=_NATIVE + "; location (forceNewMap)", checked=True),
    }

    # The cluster autoscaler profile's scale-down settings (components/aks/cluster.py; AksScaleDownSpec), cluster-wide.
    scale_down_settings = {
        AKS_CLUSTER: {
            "autoScalerProfile.scaleDownUnneededTime": "how long a node stays unneeded before it goes",
            "autoScalerProfile.scaleDownUnreadyTime": "how long an unready node stays before it goes",
            "autoScalerProfile.scaleDownUtilizationThreshold": "below it a node is a scale-down candidate",
            "autoScalerProfile.scaleDown": "when the autoscaler removes a node",
        },
    }

    disruptive_kinds = {
        AKS_CLUSTER: "cluster",
        AKS_AGENT_POOL: "node pool",
        "azure-native:network:VirtualNetwork": "network",
    }

    stateful = {
        AKS_CLUSTER: "every Kubernetes object of the cluster (its etcd), and what runs on it",
    }

    def kubernetes_parts(self, type_: str, inputs: dict) -> list[VersionedPart]:
        """The cluster's `kubernetesVersion` and each node pool's `orchestratorVersion` (gpufleet sets both from
        cluster.kubernetesVersion)."""
        if type_ == AKS_CLUSTER and inputs.get("kubernetesVersion"):
            return [VersionedPart(CONTROL_PLANE, str(inputs.get("resourceName") or ""), str(inputs["kubernetesVersion"]),
                                  _KEY)]
        if type_ == AKS_AGENT_POOL and inputs.get("orchestratorVersion"):
            return [VersionedPart(NODE_POOL, str(inputs.get("agentPoolName") or ""), str(inputs["orchestratorVersion"]),
                                  _KEY)]
        return []

    def versions(self, type_: str, inputs: dict) -> list[tuple[str, Any]]:
        if type_ == AKS_CLUSTER:
            return [("Kubernetes (AKS control plane)", inputs.get("kubernetesVersion")),
                    ("AKS pricing tier", (inputs.get("sku") or {}).get("tier")),
                    ("AKS support plan", inputs.get("supportPlan"))]
        if type_ == AKS_AGENT_POOL:
            return [("Kubernetes (AKS node pools)", inputs.get("orchestratorVersion")),
                    ("AKS GPU driver", (inputs.get("gpuProfile") or {}).get("driver"))]
        return []
