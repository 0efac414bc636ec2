"""AksNodePool: one AKS user node pool for a GPU pool: the VM size, on-demand or Spot (eviction policy Delete, a
maximum price), the cluster autoscaler between minNodes (0: scale to zero) and maxNodes, gpufleet's labels and taints,
who installs the driver, and, for policy exemptions, node labels the policy pack reads."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pulumi
import pulumi_azure_native.containerservice as cs

from gpufleet.base import labels as L
from gpufleet.base.catalog.azure import AzureVm
from gpufleet.base.node_labels import node_taints, pool_labels
from gpufleet.base.spec import NodePoolSpec
from gpufleet.base.spec.platforms.aks import AksPoolSpec

# Spot pools: evicted nodes are deleted, not deallocated: deallocated nodes still count against the VM quota and keep
# their disks (billed), and the autoscaler cannot scale such a pool back cleanly (articles/aks/spot-node-pool.md:
# "Nodes in the stopped-deallocated state count against your compute quota and can cause issues with cluster scaling
# or upgrading"). Fixed: gpufleet offers no Deallocate.
SPOT_EVICTION_POLICY = "Delete"


# Inputs AKS does not change on an existing agent pool, which Azure Native would otherwise try to update in place (and
# fail): gpufleet replaces the pool instead (Pulumi `replace_on_changes`), as the classic provider did. Sources:
# scaleSetPriority and spotMaxPrice "can't be changed after creation" (articles/aks/spot-node-pool.md, Limitations);
# the eviction policy, GPU driver, zones, OS disk size and subnet are create-only or rebuilt through a temporary pool in
# terraform-provider-azurerm (pulumi-azure 6.40.1 KubernetesClusterNodePool docstrings: "Changing this forces a new
# resource to be created" / "requires specifying temporary_name_for_rotation"). vmSize and gpuInstanceProfile Azure
# Native replaces itself (pulumi-azure-native provider/pkg/gen/replacement.go forceNewMap, PR #3655).
REPLACE_ON_CHANGES = ("scaleSetPriority", "scaleSetEvictionPolicy", "spotMaxPrice", "gpuProfile", "availabilityZones",
                      "osDiskSizeGB", "vnetSubnetID")


def taint_strings(taints: list[dict]) -> list[str]:
    """AKS node taints as `key=value:Effect` strings."""
    return [f"{t['key']}={t['value']}:{t['effect']}" for t in taints]


@dataclass(frozen=True)
class AksNodePoolArgs:
    pool: NodePoolSpec
    """The GPU pool of the stack spec."""
    vm: AzureVm
    """Its VM size's catalog facts (GPU model and count)."""
    cluster_name: pulumi.Input[str]
    """The AKS cluster's name (the agent pool's parent in ARM)."""
    resource_group_name: pulumi.Input[str]
    """The cluster's resource group."""
    subnet_id: pulumi.Input[str]
    """The node subnet."""
    install_driver: bool = False
    """AKS installs the NVIDIA driver (gpuProfile.driver Install, cluster.aks.gpuDriver: aks); default: no (the GPU
    Operator installs it: gpuProfile.driver None)."""
    default_zones: tuple[str, ...] = ()
    """The cluster's zones, when the pool names none."""
    kubernetes_version: Optional[str] = None
    """The pool's Kubernetes minor (orchestrator version); default: the control plane's."""
    waits_for: tuple[pulumi.Resource, ...] = ()
    """Resources the node pool is created after (an InfiniBand pool: the subscription's InfiniBand feature); default:
    none."""


class AksNodePool(pulumi.ComponentResource):
    """`gpufleet:aks:AksNodePool`: one AKS user node pool (`<name>-pool`) for a GPU pool: its VM size, on-demand or
    Spot, the cluster autoscaler between minNodes (0: scale to zero) and maxNodes, gpufleet's labels and taints,
    and who installs the driver."""

    def __init__(self, name: str, args: AksNodePoolArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:aks:AksNodePool", name, None, opts)
        pool = args.pool
        opts_aks = pool.aks or AksPoolSpec()
        spot = pool.capacity == "spot"
        labels = pool_labels(pool, args.vm.gpu)
        if spot:
            labels[L.AKS_SPOT_KEY] = L.AKS_SPOT_VALUE  # AKS sets it on Spot pools itself; declared, so no drift
        # Exemptions are visible: a node label per policy, `gpufleet.io/exempt-<policy>: <reason>` as a label value
        # (Azure tag names may not contain '/': docs/aks.md), which the policy pack reads from nodeLabels.
        labels.update({L.exempt_key(p): L.label_safe(why) for p, why in sorted(pool.exemptions.items())})
        zones = list(opts_aks.zones or args.default_zones)
        self.node_pool = cs.AgentPool(
            f"{name}-pool",
            agent_pool_name=pool.name,
            resource_name_=args.cluster_name,
            resource_group_name=args.resource_group_name,
            mode="User",
            vm_size=args.vm.name,
            enable_auto_scaling=True,
            min_count=pool.min_nodes,
            max_count=pool.max_nodes,
            count=pool.min_nodes,
            scale_set_priority="Spot" if spot else "Regular",
            scale_set_eviction_policy=SPOT_EVICTION_POLICY if spot else None,
            spot_max_price=opts_aks.spot_max_price if spot else None,
            # gpuProfile.driver: Install (AKS's driver) or None (the GPU Operator's): exactly one side installs it
            # (docs/aks.md; AKS REST API GPUProfile.driver, "When it's not specified, default is Install").
            gpu_profile=cs.GPUProfileArgs(driver="Install" if args.install_driver else "None"),
            os_type="Linux",
            os_sku=opts_aks.os_sku,
            os_disk_size_gb=opts_aks.os_disk_size_gb,
            vnet_subnet_id=args.subnet_id,
            availability_zones=zones or None,
            node_labels=labels,
            node_taints=taint_strings(node_taints(pool, "aks")),
            orchestrator_version=args.kubernetes_version,
            # "There are no surge nodes available for Spot node pool upgrades" (articles/aks/spot-node-pool.md).
            upgrade_settings=None if spot else cs.AgentPoolUpgradeSettingsArgs(max_surge="1"),
            # The cluster autoscaler owns the pool's size: count is its size at creation only. The pool's name is fixed
            # (its nodes' pool label, and Azure Native refuses to create a pool that exists), so a replacement deletes
            # the old pool first.
            opts=pulumi.ResourceOptions(parent=self, ignore_changes=["count"], depends_on=list(args.waits_for),
                                        replace_on_changes=list(REPLACE_ON_CHANGES), delete_before_replace=True),
        )
        self.register_outputs({"nodePoolId": self.node_pool.id})
