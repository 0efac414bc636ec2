"""AksNetwork: the stack's resource group (created, or an existing one named), and unless the stack names an existing
subnet, a virtual network with one node subnet. Pods take addresses from Azure CNI Overlay's range, not the subnet."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pulumi
# Submodules only: the top-level pulumi_azure_native package lists every Azure service (docs/aks.md, import time).
import pulumi_azure_native.network as network
import pulumi_azure_native.resources as resources

from gpufleet.base.spec.platforms.aks import AksSpec


@dataclass(frozen=True)
class AksNetworkArgs:
    spec: AksSpec
    """The aks block of the stack spec."""
    cluster_name: str
    """The cluster's name: the created resource group is `<cluster>-rg`, the network `<cluster>-vnet`."""
    tags: Optional[dict] = None
    """Azure tags on what is created; default: none."""


@dataclass(frozen=True)
class AksNetworkRef:
    """What the cluster and node pools need: the resource group's name and the node subnet's id."""

    resource_group_name: pulumi.Input[str]
    subnet_id: pulumi.Input[str]


class AksNetwork(pulumi.ComponentResource):
    """`gpufleet:aks:AksNetwork`: the stack's resource group (`<name>-rg`, or an existing one named) and, unless the
    stack names an existing subnet, a virtual network (`<name>-vnet`) with one node subnet (`<name>-nodes`).
    Pods take addresses from Azure CNI Overlay's range, not the subnet."""

    ref: AksNetworkRef

    def __init__(self, name: str, args: AksNetworkArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:aks:AksNetwork", name, None, opts)
        spec = args.spec
        child = pulumi.ResourceOptions(parent=self)
        if spec.resource_group:
            group: pulumi.Input[str] = spec.resource_group
        else:
            self.resource_group = resources.ResourceGroup(
                f"{name}-rg", resource_group_name=f"{args.cluster_name}-rg", location=spec.location, tags=args.tags,
                opts=child)
            group = self.resource_group.name
        net = spec.network
        if net.existing_subnet_id:
            subnet_id: pulumi.Input[str] = net.existing_subnet_id
        else:
            # No inline `subnets`: Azure Native then leaves the network's subnets to the Subnet resources (its
            # VirtualNetwork keeps sub-resources it is not given: pulumi-azure-native provider/pkg/gen/properties.go,
            # maintainSubResourceIfUnset).
            self.vnet = network.VirtualNetwork(
                f"{name}-vnet", virtual_network_name=f"{args.cluster_name}-vnet", resource_group_name=group,
                location=spec.location, address_space=network.AddressSpaceArgs(address_prefixes=[net.vnet_cidr]),
                tags=args.tags, opts=child)
            self.subnet = network.Subnet(
                f"{name}-nodes", subnet_name="nodes", resource_group_name=group, virtual_network_name=self.vnet.name,
                address_prefixes=[net.node_subnet_cidr], opts=child)
            subnet_id = self.subnet.id
        self.ref = AksNetworkRef(group, subnet_id)
        self.register_outputs({"resourceGroupName": group, "subnetId": subnet_id})
