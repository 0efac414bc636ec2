"""gpufleet:cluster.aks and nodePools[*].aks — Azure Kubernetes Service: resource group, network, a private control
plane with Microsoft Entra ID and workload identity, the system pool, storage, and who installs the GPU driver.
The checks against the rest of the stack: aks_checks.py."""

from __future__ import annotations

import ipaddress
import re
from decimal import Decimal
from typing import Literal, Optional

from pydantic import Field, field_validator, model_validator

from gpufleet.base.spec.base import Model, check_cidr

# Azure region names as ARM spells them (eastus, westeurope, southcentralus).
LOCATION = r"^[a-z][a-z0-9]{1,39}$"
# Resource group names: 1-90 letters, digits, '_', '-', '.', '(' and ')', not ending in '.' (Azure Resource Manager,
# "Naming rules and restrictions for Azure resources", Microsoft.Resources/resourcegroups).
RESOURCE_GROUP = r"^[-\w\.\(\)]{0,89}[-\w\(\)]$"
SUBNET_ID = r"^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\.Network/virtualNetworks/[^/]+/subnets/[^/]+$"
GUID = r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
# Availability zones of a zonal Azure region.
ZONE = Literal["1", "2", "3"]


def _cidr(value: str) -> str:
    return check_cidr(value, "10.224.0.0/16")


class AksNetworkSpec(Model):
    """The nodes' virtual network: created by gpufleet (default) or an existing subnet. Pods get addresses from an
    overlay range (Azure CNI Overlay), so the node subnet needs one address per node only."""

    existing_subnet_id: Optional[str] = Field(default=None, pattern=SUBNET_ID)
    """Put every node pool in this subnet (its ARM id); default: create a virtual network and a node subnet."""
    vnet_cidr: str = "10.224.0.0/12"
    """Address space of the created virtual network (AKS's own default)."""
    node_subnet_cidr: str = "10.224.0.0/16"
    """Node subnet of the created virtual network."""
    pod_cidr: str = "10.244.0.0/16"
    """Azure CNI Overlay pod range (not routable outside the cluster)."""
    service_cidr: str = "10.0.0.0/16"
    """Kubernetes service range; must not overlap the node subnet."""
    dns_service_ip: str = "10.0.0.10"
    """Cluster DNS address, inside serviceCidr."""

    _check_cidrs = field_validator("vnet_cidr", "node_subnet_cidr", "pod_cidr", "service_cidr")(
        classmethod(lambda cls, v: _cidr(v))
    )

    @field_validator("dns_service_ip")
    @classmethod
    def _address(cls, v: str) -> str:
        try:
            ipaddress.ip_address(v)
        except ValueError:
            raise ValueError(f"'{v}' is not an IP address such as 10.0.0.10") from None
        return v

    @model_validator(mode="after")
    def _dns_in_services(self) -> "AksNetworkSpec":
        if ipaddress.ip_address(self.dns_service_ip) not in ipaddress.ip_network(self.service_cidr):
            raise ValueError(f"dnsServiceIp {self.dns_service_ip} must lie inside serviceCidr {self.service_cidr}")
        return self


class AksEntraSpec(Model):
    """Microsoft Entra ID integration with Azure RBAC for Kubernetes authorization; local accounts are disabled, so
    every user signs in with Entra ID (kubelogin)."""

    admin_group_object_ids: list[str] = []
    """Entra ID groups whose members are cluster administrators (their object ids); default: none (grant access with
    Azure role assignments such as 'Azure Kubernetes Service RBAC Cluster Admin')."""
    tenant_id: Optional[str] = Field(default=None, pattern=GUID)
    """The Entra tenant; default: the tenant of the deploying identity."""

    @field_validator("admin_group_object_ids")
    @classmethod
    def _guids(cls, v: list[str]) -> list[str]:
        import re

        bad = [g for g in v if not re.match(GUID, g)]
        if bad:
            raise ValueError(f"not Entra object ids (GUIDs): {', '.join(bad)}")
        return v


class AksSystemPoolSpec(Model):
    """The CPU system node pool (mode System) for operators and system add-ons: GPU pools are tainted."""

    vm_size: str = Field(default="Standard_D4ds_v5", pattern=r"^Standard_[A-Za-z0-9_]+$")
    """VM size of the system nodes."""
    min_nodes: int = Field(default=1, ge=1)
    """Minimum nodes; a system pool needs at least one (AKS: system node pools need at least one node)."""
    max_nodes: int = Field(default=3, ge=1, le=1000)
    """Maximum nodes the cluster autoscaler may reach."""
    os_disk_size_gb: int = Field(default=128, ge=30, le=2048)
    """OS disk size of each system node."""

    @model_validator(mode="after")
    def _max_at_least_min(self) -> "AksSystemPoolSpec":
        if self.max_nodes < self.min_nodes:
            raise ValueError(f"maxNodes ({self.max_nodes}) must be >= minNodes ({self.min_nodes})")
        return self


class AksStorageSpec(Model):
    """StorageClasses on AKS's built-in CSI drivers (Azure Disk and Azure Files always run; Blob on request)."""

    disk_sku: Literal["Premium_LRS", "StandardSSD_LRS", "Premium_ZRS", "StandardSSD_ZRS"] = "Premium_LRS"
    """SKU of the `gpufleet-rwo` StorageClass (Azure Disk CSI, disk.csi.azure.com), the cluster default."""
    files: bool = False
    """Create the `gpufleet-rwx` StorageClass (Azure Files CSI, file.csi.azure.com, Premium_LRS NFS shares): shared
    ReadWriteMany volumes for datasets and checkpoints."""
    blob: bool = False
    """Turn on AKS's Blob CSI driver and create `gpufleet-blob` (blob.csi.azure.com, BlobFuse2): mount Blob
    containers in pods."""
    reclaim_policy: Literal["Retain", "Delete"] = "Retain"
    """What happens to an Azure Files share or Blob container when its claim is deleted; default: Retain (datasets
    and checkpoints survive a deleted claim)."""
    managed_lustre: bool = False
    """Azure Managed Lustre: refused (gpufleet does not deploy it yet; docs/aks.md says why and what to use)."""


# A duration as AKS's cluster autoscaler profile takes it: whole minutes ("10m"; Microsoft Learn, "Use the cluster
# autoscaler in AKS", cluster autoscaler profile settings: scale-down-unneeded-time "10m" etc.).
AKS_MINUTES = r"^[0-9]+m$"


class AksScaleDownSpec(Model):
    """AKS's cluster autoscaler profile, its scale-down part. AKS runs the autoscaler itself and offers these settings
    only for the whole cluster: the profile "affects all node pools that use the cluster autoscaler" and has no
    per-pool or GPU utilization setting (Microsoft Learn, "Use the cluster autoscaler in AKS", cluster autoscaler
    profile; azurerm `auto_scaler_profile`). docs/upgrades.md."""

    unneeded_time: str = Field(default="30m", json_schema_extra={"pattern": AKS_MINUTES})
    """scale-down-unneeded-time: how long a node must be unneeded before it goes. Default 30m, not AKS's 10m: a GPU
    node takes minutes to boot, load its driver and pull a CUDA image, and the next job of a queue often arrives within
    that (the same delay as gpufleet's EKS GPU groups and Karpenter GPU NodePools). The system pool, at its minimum,
    is not affected."""
    unready_time: str = Field(default="20m", json_schema_extra={"pattern": AKS_MINUTES})
    """scale-down-unready-time: how long an unready node must be unneeded before it goes. Default 20m, AKS's own,
    written out so the review shows a change."""
    utilization_threshold: float = Field(default=0.5, gt=0, le=1)
    """scale-down-utilization-threshold: a node below this requested/allocatable ratio is a scale-down candidate.
    Default 0.5, AKS's own. Training pods gpufleet creates carry `safe-to-evict: "false"`, which keeps their node."""

    @field_validator("unneeded_time", "unready_time")
    @classmethod
    def _minutes(cls, v: str) -> str:
        if not re.fullmatch(AKS_MINUTES, v):
            raise ValueError(f"'{v}' is not a whole number of minutes such as \"30m\" (AKS's cluster autoscaler profile "
                             "takes minutes: write 120m for two hours)")
        return v


class AksSpec(Model):
    """An AKS cluster: private API server, Microsoft Entra ID with Azure RBAC, workload identity (OIDC issuer)."""

    location: str = Field(pattern=LOCATION)
    """Azure region of the cluster and its resource group, e.g. eastus."""
    resource_group: Optional[str] = Field(default=None, pattern=RESOURCE_GROUP)
    """An existing resource group to put the cluster in; default: create `<cluster>-rg`."""
    tier: Literal["Free", "Standard", "Premium"] = "Standard"
    """Cluster management pricing tier (sku_tier): Free (no uptime SLA, under 10 nodes), Standard (uptime SLA: the
    default, for production), Premium (Standard plus long-term support). Priced in the plan."""
    support_plan: Literal["KubernetesOfficial", "AKSLongTermSupport"] = "KubernetesOfficial"
    """KubernetesOfficial: community support, 12 months per minor. AKSLongTermSupport: a further 12 months (Premium
    tier only)."""
    private_cluster: bool = True
    """Private API server (private endpoint in the node network); default on. Off needs `authorizedIpRanges`."""
    authorized_ip_ranges: list[str] = []
    """Public API server only: the CIDR ranges allowed to reach it."""
    entra: AksEntraSpec = AksEntraSpec()
    workload_identity: bool = True
    """Workload identity with the cluster's OIDC issuer (pods federate to Entra ID managed identities); default on."""
    network: AksNetworkSpec = AksNetworkSpec()
    system_pool: AksSystemPoolSpec = AksSystemPoolSpec()
    storage: AksStorageSpec = AksStorageSpec()
    gpu_driver: Literal["operator", "aks"] = "operator"
    """Who installs the NVIDIA driver on GPU nodes. operator (default): the GPU Operator (gpu_driver None on the node
    pools), as Microsoft's 'Use the NVIDIA GPU Operator on AKS' and the AKS InfiniBand guides require. aks: AKS's
    node image driver (gpu_driver Install) with the operator's driver and toolkit off. Exactly one side installs it:
    docs/aks.md."""
    scale_down: AksScaleDownSpec = AksScaleDownSpec()
    """The cluster autoscaler's scale-down settings (AKS's cluster autoscaler profile, cluster-wide)."""
    zones: list[ZONE] = []
    """Availability zones of the system pool and the default zones of GPU pools; default: none (regional)."""
    infiniband_feature: Literal["manual", "register"] = "manual"
    """The subscription's `Microsoft.ContainerService/AKSInfinibandSupport` feature, which the AKS InfiniBand guides
    register so an InfiniBand pool's nodes land on one InfiniBand network (Azure/aks-rdma-infiniband
    getting-started/02-prerequisites.md @700dabb4). manual (default): you register it once per subscription (`az feature
    register ...`; the plan's warning gives the commands). register: the stack declares it (a subscription-wide
    feature registration, kept when the stack is destroyed): only where the subscription has not registered it yet.
    docs/aks.md, "InfiniBand"."""

    _check_ranges = field_validator("authorized_ip_ranges")(classmethod(lambda cls, v: [_cidr(c) for c in v]))

    @property
    def managed_driver(self) -> bool:
        """AKS's node image installs the NVIDIA driver (gpuDriver: aks), not the GPU Operator."""
        return self.gpu_driver != "operator"


class AksPoolSpec(Model):
    """The AKS-only settings of a GPU node pool."""

    zones: list[ZONE] = []
    """Availability zones of this pool; default: the cluster's `zones`. InfiniBand pools run in one zone."""
    spot_max_price: float = Field(default=-1, ge=-1)
    """Spot pools: the most USD per VM-hour to pay; -1 (default): up to the on-demand price, never evicted for price
    (only for capacity)."""
    os_disk_size_gb: int = Field(default=256, ge=30, le=4095)
    """OS disk of each node: container images of CUDA workloads are large."""
    os_sku: Literal["Ubuntu2404", "Ubuntu2204"] = "Ubuntu2404"
    """Node image. Ubuntu only: the NVIDIA GPU Operator does not support Azure Linux with OS Guard or Flatcar on AKS
    (Microsoft, 'Use the NVIDIA GPU Operator on AKS', Limitations), and the AKS InfiniBand guides require Ubuntu.
    Default Ubuntu 24.04: AKS stops supporting Ubuntu 22.04 on 2027-06-30 and LTS on 1.33+ needs 24.04
    (MicrosoftDocs/azure-aks-docs @fb060abe includes/ubuntu-22-04-retirement.md, read 2026-12-04)."""

    @field_validator("spot_max_price")
    @classmethod
    def _price(cls, v: float) -> float:
        if -1 < v <= 0:
            raise ValueError(f"must be -1 (up to the on-demand price) or a price above 0 USD per hour (got {v})")
        # "When setting SpotMaxPrice, the value must be -1 or a positive value with up to five decimal places" (AKS,
        # "Add an Azure Spot node pool", learn.microsoft.com/azure/aks/spot-node-pool, Limitations).
        if v != -1 and Decimal(repr(v)).as_tuple().exponent < -5:
            raise ValueError(f"AKS takes at most five decimal places (got {v}); e.g. {round(v, 5)}")
        return v
