"""AksNodePool: one AKS user node pool for a GPU pool: the VM size, on-demand or Spot (eviction policy Delete, a
maximum price), the cluster autoscaler between minNodes (0: scale to zero) and maxNodes, gpufleet's labels and taints,
who installs the driver, and, for policy exemptions, node labels the policy pack reads."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pulumi
import pulumi_azure as azure

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


def rotation_name(pool_name: str) -> str:
    """The temporary pool azurerm cycles this pool through when its VM size, OS disk or zones change (a valid AKS pool
    name, at most 12 characters; pool names are at most 12 too, so the prefix keeps it distinct from any of them
    that does not itself start with 'r')."""
    return ("r" + pool_name)[:12]


def taint_strings(taints: list[dict]) -> list[str]:
    """AKS node taints as `key=value:Effect` strings."""
    return [f"{t['key']}={t['value']}:{t['effect']}" for t in taints]


@dataclass(frozen=True)
class AksNodePoolArgs:
    pool: NodePoolSpec
    """The GPU pool of the stack spec."""
    vm: AzureVm
    """Its VM size's catalog facts (GPU model and count)."""
    cluster_id: pulumi.Input[str]
    """The AKS cluster's ARM id."""
    subnet_id: pulumi.Input[str]
    """The node subnet."""
    install_driver: bool = False
    """AKS installs the NVIDIA driver (gpu_driver Install, cluster.aks.gpuDriver: aks); default: no (the GPU Operator
    installs it: gpu_driver None)."""
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
        self.node_pool = azure.containerservice.KubernetesClusterNodePool(
            f"{name}-pool",
            name=pool.name,
            kubernetes_cluster_id=args.cluster_id,
            mode="User",
            vm_size=args.vm.name,
            auto_scaling_enabled=True,
            min_count=pool.min_nodes,
            max_count=pool.max_nodes,
            node_count=pool.min_nodes,
            priority="Spot" if spot else "Regular",
            eviction_policy=SPOT_EVICTION_POLICY if spot else None,
            spot_max_price=opts_aks.spot_max_price if spot else None,
            # gpu_driver: Install (AKS's driver) or None (the GPU Operator's): exactly one side installs it (docs/aks.md).
            gpu_driver="Install" if args.install_driver else "None",
            os_type="Linux",
            os_sku=opts_aks.os_sku,
            os_disk_size_gb=opts_aks.os_disk_size_gb,
            vnet_subnet_id=args.subnet_id,
            zones=zones or None,
            node_labels=labels,
            node_taints=taint_strings(node_taints(pool, "aks")),
            orchestrator_version=args.kubernetes_version,
            temporary_name_for_rotation=rotation_name(pool.name),
            # "There are no surge nodes available for Spot node pool upgrades" (articles/aks/spot-node-pool.md).
            upgrade_settings=None if spot else azure.containerservice.KubernetesClusterNodePoolUpgradeSettingsArgs(
                max_surge="1"),
            # The cluster autoscaler owns the pool's size: node_count is its size at creation only.
            opts=pulumi.ResourceOptions(parent=self, ignore_changes=["nodeCount"], depends_on=list(args.waits_for)),
        )
        self.register_outputs({"nodePoolId": self.node_pool.id})
