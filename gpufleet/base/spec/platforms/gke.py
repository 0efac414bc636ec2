"""gpufleet:cluster.gke and nodePools[*].gke — GKE Standard: network, control plane, system pool, storage,
and the GKE-only parts of a GPU pool (driver installation, GPU sharing, MIG partitions, reservations).

`gke_checks` holds the checks that need the whole stack (pools against the machine catalog, the GPU stack
against gpuOperator, CUDA against GKE's driver): the checks of platform gke (GkeKeys.checks, with gke_limits.py).
"""

import datetime as dt
import ipaddress
import re
from typing import Annotated, Any, Literal, Optional

from pydantic import Field, ValidationInfo, field_validator, model_validator

from gpufleet.base import catalog, cidrs
from gpufleet.base.catalog import gcp
from gpufleet.base.platforms.contract.keys import CapacityEnd
from gpufleet.base.spec import ids
from gpufleet.base.spec.base import Model, check_cidr
from gpufleet.base.spec.errors import Problem
from gpufleet.base.spec.features.reservation import DWS_MODES, FLEX_START_MAX_RUN_SECONDS

NS = "gpufleet"
GKE_NAME_MAX = 40  # GKE cluster names: at most 40 characters
NETWORK_NAME_MAX = 41  # GKE multi-network: Device-type Network object names
_GKE_NAME = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_TIME = re.compile(r"^([01]\d|2[0-3]):[0-5]\d$")


def _cidr(value: str) -> str:
    return check_cidr(value, "10.0.0.0/20")


class ExistingNetwork(Model):
    """A VPC and subnet you already have (gpufleet then creates neither, nor Cloud NAT)."""

    network: str = Field(pattern=ids.GCE_NAME_OR_LINK)
    """VPC network name or self link."""
    subnetwork: str = Field(pattern=ids.GCE_NAME_OR_LINK)
    """Subnet name or self link in the cluster's region."""
    pods_range_name: str = Field(pattern=ids.GCE_NAME)
    """Name of the subnet's secondary range for pods."""
    services_range_name: str = Field(pattern=ids.GCE_NAME)
    """Name of the subnet's secondary range for services."""


class GkeNetworkSpec(Model):
    """The cluster's VPC: created by gpufleet (default) or an existing one."""

    existing: Optional[ExistingNetwork] = None
    """Use this VPC and subnet; default: create a VPC, a subnet with pod/service ranges, a router and Cloud NAT."""
    subnet_cidr: str = "10.0.0.0/20"
    """Node subnet range (created network only)."""
    pods_cidr: str = "10.16.0.0/14"
    """Secondary range for pods (created network only)."""
    services_cidr: str = "10.20.0.0/20"
    """Secondary range for services (created network only)."""
    cloud_nat: bool = True
    """Cloud Router + NAT so private nodes reach the internet (created network only)."""
    proxy_only_cidr: str = "10.129.0.0/23"
    """Range of the proxy-only subnet (purpose REGIONAL_MANAGED_PROXY, role ACTIVE) gpufleet creates in the cluster's
    region when the serving Gateway is a regional GKE class (gke-l7-regional-external-managed, gke-l7-rilb), created
    network only: the addresses of the load balancer's Envoy proxies. At least 64 addresses, a /26 or shorter prefix
    ("Proxy-only subnets for Envoy-based load balancers", docs.cloud.google.com/load-balancing/docs/proxy-only-subnets,
    "Plan the size of your proxy-only subnet"); default 10.129.0.0/23, the range and size of that page's example."""
    gpu_direct_cidr: str = "192.168.0.0/16"
    """Range carved into subnets of `gpuDirectSubnetPrefix` for GPUDirect pools' additional VPCs: each pool gets its
    own VPCs and its own consecutive blocks, in pool order (GKE forbids overlapping pod networks in one cluster)."""
    gpu_direct_subnet_prefix: int = Field(default=20, ge=16, le=28)
    """Prefix length of each GPUDirect subnet; default /20 (4,092 node addresses), as cluster-toolkit's A3 Mega
    blueprint (examples/gke-a3-megagpu, `subnetwork_cidr_suffix: 20`). Every GPUDirect pool's maxNodes must fit
    (Compute Engine keeps 4 addresses of each subnet). Changing it replaces the GPUDirect subnets and their pools:
    GPUDirect pools created with /24 subnets (gpufleet before this default) keep them with 24."""

    _check_cidrs = field_validator("subnet_cidr", "pods_cidr", "services_cidr", "gpu_direct_cidr", "proxy_only_cidr")(
        classmethod(lambda cls, v: _cidr(v))
    )


class AuthorizedNetwork(Model):
    cidr: str
    """A CIDR block allowed to reach the Kubernetes API."""
    name: str = Field(default="", pattern=r"^$|" + ids.DISPLAY_NAME)
    """Display name."""

    _check_cidr = field_validator("cidr")(classmethod(lambda cls, v: _cidr(v)))


class GkeSystemPoolSpec(Model):
    """The CPU node pool for operators and system add-ons (GPU pools are tainted)."""

    machine_type: str = Field(default="e2-standard-4", pattern=ids.GCE_MACHINE_TYPE)
    """Machine type of the system nodes."""
    min_nodes: int = Field(default=1, ge=1)
    """Minimum nodes (per cluster, not per zone); at least 1 so system pods always have a place."""
    max_nodes: int = Field(default=3, ge=1)
    """Maximum nodes the autoscaler may reach."""
    disk_size_gb: int = Field(default=100, ge=20)
    """Boot disk size."""

    @model_validator(mode="after")
    def _max_at_least_min(self) -> "GkeSystemPoolSpec":
        # Container API NodePoolAutoscaling: maxNodeCount "Must be >= minNodeCount" (as the EKS system pool's check).
        if self.max_nodes < self.min_nodes:
            raise ValueError(f"maxNodes ({self.max_nodes}) must be >= minNodes ({self.min_nodes})")
        return self


class GkeStorageSpec(Model):
    """CSI storage on GKE."""

    default_disk_type: Literal["pd-balanced", "hyperdisk-balanced"] = "pd-balanced"
    """Disk type of the `gpufleet-rwo` StorageClass (Persistent Disk CSI), made the cluster default."""
    filestore: bool = False
    """Enable the Filestore CSI driver and create the `gpufleet-rwx` StorageClass (ReadWriteMany)."""
    filestore_tier: Literal["standard", "premium", "enterprise", "zonal"] = "standard"
    """Filestore tier of `gpufleet-rwx`."""
    filestore_reclaim_policy: Literal["Retain", "Delete"] = "Retain"
    """What happens to a Filestore instance when its claim is deleted; default: Retain (datasets and checkpoints
    survive a deleted claim; delete unused instances yourself: they bill while they exist)."""
    gcs_fuse: bool = False
    """Enable the Cloud Storage FUSE CSI driver (mount buckets in pods; needs Workload Identity)."""
    managed_lustre: bool = False
    """Enable the Managed Lustre CSI driver (addons_config.lustre_csi_driver_config), private services access for it on
    the VPC gpufleet creates, and the `gpufleet-lustre` StorageClass (ReadWriteMany; each claim creates a Managed Lustre
    instance of at least 9,000 GiB). Needs GKE 1.33 or later (1.33.2-gke.1111000) and Container-Optimized OS nodes
    (gpuStack: gke). Model caches use it before Filestore. Default: off."""
    managed_lustre_throughput: Literal[125, 250, 500, 1000] = 1000
    """Performance tier of `gpufleet-lustre` in MB/s per TiB (StorageClass perUnitStorageThroughput: 125, 250, 500 or
    1000, Managed Lustre CSI driver reference); it fixes the instance's minimum size and step (9,000 GiB at 1000,
    18,000 at 500, 36,000 at 250, 72,000 at 125). Default: 1000."""


class MaintenanceExclusion(Model):
    """A window in which GKE does not upgrade the cluster (or its nodes), e.g. around a training run on reserved
    capacity. GKE allows at most three per cluster."""

    name: str = Field(pattern=ids.DISPLAY_NAME)
    """Exclusion name."""
    start_time: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")
    """Start, RFC 3339 (e.g. 2026-12-01T00:00:00Z)."""
    end_time: Optional[str] = Field(default=None, pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")
    """End, RFC 3339; or set untilEndOfSupport instead."""
    scope: Literal["NO_UPGRADES", "NO_MINOR_UPGRADES", "NO_MINOR_OR_NODE_UPGRADES"] = "NO_MINOR_OR_NODE_UPGRADES"
    """What GKE holds back: NO_UPGRADES (everything, at most 30 days), NO_MINOR_UPGRADES, or NO_MINOR_OR_NODE_UPGRADES
    (default: neither minor versions nor node upgrades, patches to the control plane still apply)."""
    until_end_of_support: bool = False
    """End the exclusion when the cluster's minor version reaches end of support (instead of endTime)."""

    @model_validator(mode="after")
    def _one_end(self) -> "MaintenanceExclusion":
        # GKE API (MaintenanceExclusionOptions.endTimeBehavior): exactly one of an end time or UNTIL_END_OF_SUPPORT.
        if (self.end_time is None) == (not self.until_end_of_support):
            raise ValueError("give exactly one of endTime or untilEndOfSupport: true")
        if self.until_end_of_support and self.scope == "NO_UPGRADES":
            raise ValueError("scope NO_UPGRADES needs an endTime (at most 30 days); untilEndOfSupport works with the minor scopes")
        return self


class GkeSpec(Model):
    """A GKE Standard cluster."""

    project: Optional[str] = Field(default=None, pattern=ids.GCP_PROJECT)
    """GCP project; default: the stack's `gcp:project` config."""
    region: str = Field(pattern=r"^[a-z]+-[a-z]+\d+$")
    """Region of the network and, unless `zone` is set, of the (regional) control plane."""
    zone: Optional[str] = Field(default=None, pattern=r"^[a-z]+-[a-z]+\d+-[a-z]$")
    """Make the cluster zonal in this zone; default: regional (control plane replicated across zones)."""
    node_zones: list[str] = []
    """Zones nodes run in (node_locations); default: the zones GKE picks for the location."""
    release_channel: Literal["RAPID", "REGULAR", "STABLE", "EXTENDED", "UNSPECIFIED"] = "REGULAR"
    """GKE release channel; GKE upgrades within it during the maintenance window. UNSPECIFIED: no channel, the
    version is pinned by kubernetesVersion and GPU pools may turn node auto-upgrade off (gke.autoUpgrade: false), as
    cluster-toolkit's GKE blueprints do (modules/scheduler/gke-cluster `release_channel` default UNSPECIFIED)."""
    network: GkeNetworkSpec = GkeNetworkSpec()
    """VPC, subnet and Cloud NAT (or an existing network)."""
    private_nodes: bool = True
    """Nodes get internal IPs only (egress through Cloud NAT)."""
    private_endpoint: bool = False
    """Reach the API only on its internal IP (needs privateNodes); default: public endpoint, limited by authorizedNetworks."""
    master_ipv4_cidr: str = "172.16.0.0/28"
    """/28 for the control plane's internal endpoint (private nodes)."""
    authorized_networks: list[AuthorizedNetwork] = []
    """CIDRs allowed to reach the API; default: none listed (authorized networks off)."""
    workload_identity: bool = True
    """Workload Identity (pods act as Google service accounts; nodes use the GKE metadata server)."""
    maintenance_window: str = "03:00"
    """Daily maintenance window start, HH:MM UTC (GKE picks the duration)."""
    maintenance_exclusions: list[MaintenanceExclusion] = Field(default=[], max_length=3)
    """Windows without upgrades (at most three, GKE's limit); default: none."""
    system_pool: GkeSystemPoolSpec = GkeSystemPoolSpec()
    """The CPU pool for system pods; the default node pool is always removed."""
    gpu_stack: Literal["gke", "operator"] = "gke"
    """gke: GKE installs the driver and runs its device plugin (no GPU Operator). operator: the NVIDIA GPU Operator
    runs the stack (NVIDIA driver manager on Ubuntu nodes; GKE's driver installation and device plugin are off; no
    GPUDirect pools, whose gVNIC needs Container-Optimized OS nodes)."""
    storage: GkeStorageSpec = GkeStorageSpec()
    """CSI drivers and StorageClasses."""
    autoscaling_profile: Optional[Literal["balanced", "optimize-utilization"]] = None
    """GKE's cluster autoscaler profile (cluster-wide; GKE offers no per-pool scale-down settings). Default: not set,
    GKE's own `balanced`, which fits GPU jobs. `optimize-utilization` "scales down the cluster more aggressively: it
    can remove more nodes, and remove nodes faster", for "batch workloads that are not sensitive to start-up latency"
    (cloud.google.com/kubernetes-engine/docs/concepts/cluster-autoscaler, "Autoscaling profiles"; Container API
    ClusterAutoscaling.autoscalingProfile BALANCED | OPTIMIZE_UTILIZATION). A change shows in the review as a disruption
    change. docs/upgrades.md."""
    service_account: Optional[str] = Field(default=None, pattern=ids.GCP_SERVICE_ACCOUNT)
    """Node service account email; default: the Compute Engine default service account."""
    deletion_protection: Optional[bool] = None
    """GKE refuses to delete the cluster (the provider's `deletionProtection`); default: as
    `gpufleet:cluster.protection.enabled` (on), so turning protection off with a reason is enough for `pulumi destroy`."""

    _check_master = field_validator("master_ipv4_cidr")(classmethod(lambda cls, v: _cidr(v)))

    @field_validator("authorized_networks")
    @classmethod
    def _not_world_open(cls, networks: list[AuthorizedNetwork], info: ValidationInfo) -> list[AuthorizedNetwork]:
        """A public endpoint's authorized networks, judged by what they cover (gpufleet/base/cidrs.py), as the
        secure-defaults policy judges masterAuthorizedNetworksConfig."""
        values = [n.cidr for n in networks]
        if not info.data.get("private_endpoint") and cidrs.world_open(values):
            raise ValueError(f"{', '.join(values)}: {cidrs.WORLD_OPEN_HINT}")
        return networks

    @field_validator("maintenance_window")
    @classmethod
    def _hhmm(cls, v: str) -> str:
        if not _TIME.match(v):
            raise ValueError(f"'{v}' is not a time of day HH:MM (UTC), e.g. 03:00")
        return v

    @model_validator(mode="after")
    def _private_endpoint_needs_private_nodes(self) -> "GkeSpec":
        if self.private_endpoint and not self.private_nodes:
            raise ValueError("privateEndpoint needs privateNodes: true (a private control plane has no route to public nodes)")
        return self

    @property
    def managed_gpu_stack(self) -> bool:
        """GKE installs the driver and runs its device plugin (gpuStack: gke, the default): no GPU Operator runs."""
        return self.gpu_stack != "operator"


class GpuSharingSpec(Model):
    """GKE's own GPU sharing (node pool gpu_sharing_config)."""

    strategy: Literal["time-sharing", "mps"]
    """time-sharing: containers take turns on a GPU. mps: NVIDIA MPS (no memory isolation; not with MIG)."""
    max_shared_clients_per_gpu: int = Field(ge=2, le=48)
    """Containers that may share one GPU (or one MIG partition)."""


class ReservationSpec(Model):
    """Which Compute Engine reservations the pool's nodes consume."""

    type: Literal["any", "none", "specific"] = "any"
    """any: use a matching reservation if there is one. none: never. specific: only `name`."""
    name: Optional[str] = Field(default=None, pattern=ids.GCE_RESERVATION)
    """Reservation name (type specific)."""

    @model_validator(mode="after")
    def _name_iff_specific(self) -> "ReservationSpec":
        if self.type == "specific" and not self.name:
            raise ValueError("reservation type specific needs a `name`")
        if self.type != "specific" and self.name:
            raise ValueError(f"reservation `name` is only used with type specific (got type {self.type})")
        return self


class GkeUpgradeSpec(Model):
    """How GKE replaces a pool's nodes on an upgrade (node pool upgrade_settings)."""

    strategy: Literal["surge", "blue-green"] = "surge"
    """surge: a few nodes at a time (maxSurge new ones, maxUnavailable old ones). blue-green: a whole new set of nodes
    beside the old one (needs capacity for both; not with compact placement)."""
    max_surge: int = Field(default=0, ge=0, le=100)
    """surge: extra nodes GKE may create during the upgrade. Default 0, as cluster-toolkit's gke-node-pool: a GPU pool
    that fills its reservation (or its quota) cannot get a surge node, and the upgrade fails and retries."""
    max_unavailable: int = Field(default=1, ge=0, le=100)
    """surge: nodes that may be down at once (default 1)."""
    soak_duration: str = Field(default="3600s", pattern=r"^\d+s$")
    """blue-green: how long the old nodes stay (drained) before GKE deletes them, e.g. 3600s."""
    batch_node_count: int = Field(default=1, ge=1)
    """blue-green: nodes drained per batch."""

    @model_validator(mode="after")
    def _progress(self) -> "GkeUpgradeSpec":
        if self.strategy == "surge" and self.max_surge + self.max_unavailable == 0:
            raise ValueError("maxSurge + maxUnavailable must be at least 1, or the upgrade cannot progress")
        if self.strategy == "blue-green" and {"max_surge", "max_unavailable"} & self.model_fields_set:
            raise ValueError("maxSurge and maxUnavailable are surge settings; blue-green uses soakDuration and batchNodeCount")
        return self


class LocalSsdSpec(Model):
    """What the pool's local NVMe SSDs are for."""

    mode: Literal["ephemeral-storage", "raw-block", "none"] = "ephemeral-storage"
    """ephemeral-storage: kubelet and containerd (images, emptyDir, logs) on a RAID0 of the SSDs
    (ephemeral_storage_local_ssd_config). raw-block: the SSDs as raw NVMe block devices for your own use
    (local_nvme_ssd_block_config). none: leave them unused."""
    count: Optional[int] = Field(default=None, ge=1, le=32)
    """How many SSDs; default: the machine's bundled count from the catalog (16 on A3 High/Mega, 32 on A3 Ultra/A4)."""


# cluster-toolkit v1.95.0 (079cf834) modules/compute/gke-node-pool/variables.tf lines 525-531: the TCP buffer sysctls
# its GKE node pools get by default (NCCL's TCP transports on GPUDirect-TCPX/TCPXO pools).
GPUDIRECT_SYSCTLS = {"net.ipv4.tcp_rmem": "4096 87380 16777216", "net.ipv4.tcp_wmem": "4096 16384 16777216"}


class GkePoolSpec(Model):
    """GKE-only settings of a GPU node pool."""

    gpu_driver_version: Literal["DEFAULT", "LATEST"] = "DEFAULT"
    """Driver GKE installs (gpuStack gke): DEFAULT or LATEST for the node version. Not used with gpuStack operator."""
    gpu_sharing: Optional[GpuSharingSpec] = None
    """GKE GPU sharing (time-sharing or MPS); default: none, one container per GPU."""
    gpu_partition_size: Optional[str] = None
    """MIG partition size (a MIG profile of the pool's GPU, e.g. 1g.10gb); default: no MIG."""
    reservation: Optional[ReservationSpec] = None
    """Reservation affinity; default: GKE's (consume any matching reservation)."""
    zones: list[str] = []
    """Zones of this pool's nodes; default: the cluster's node zones. GPUDirect RDMA needs exactly one."""
    location_policy: Literal["ANY", "BALANCED"] = "ANY"
    """Autoscaler zone choice: ANY (where capacity is, best for GPUs and spot) or BALANCED."""
    disk_size_gb: int = Field(default=200, ge=50)
    """Boot disk size (container images for GPU work are large)."""
    upgrade: GkeUpgradeSpec = GkeUpgradeSpec()
    """Node upgrades; default: surge 0, unavailable 1 (one node at a time, no extra capacity needed)."""
    auto_upgrade: bool = True
    """GKE upgrades the pool's nodes itself. false needs cluster.gke.releaseChannel UNSPECIFIED (GKE forces node
    auto-upgrade on pools of a cluster enrolled in a release channel)."""
    autoscaling: bool = True
    """true: the autoscaler sizes the pool between minNodes and maxNodes (and the pool starts with minNodes).
    false: a fixed-size pool of minNodes nodes (minNodes must equal maxNodes), e.g. one that fills a reservation."""
    local_ssd: Optional[LocalSsdSpec] = None
    """Local NVMe SSDs; default: a machine with bundled SSDs (A3, A4) gives them all to ephemeral storage, as
    cluster-toolkit does; other machines get none. Set when the pool is created (later changes are ignored: they
    would replace the pool)."""
    placement: Literal["none", "compact"] = "none"
    """compact: a COMPACT placement policy (nodes physically close; one zone, new pools only, not with blue-green;
    machine families from the catalog)."""
    sysctls: Optional[dict[Annotated[str, Field(pattern=ids.SYSCTL_NAME)], Annotated[str, Field(pattern=ids.SYSCTL_VALUE)]]] = None
    """Node sysctls (linux_node_config); default: on GPUDirect pools (rdma) the TCP buffer sizes cluster-toolkit sets
    for NCCL (net.ipv4.tcp_rmem/tcp_wmem), none elsewhere."""
    max_run_duration_seconds: Optional[int] = Field(default=None, ge=1, le=FLEX_START_MAX_RUN_SECONDS)
    """capacity flex-start | queued: how long each node may live (node_config.max_run_duration); default and
    maximum: 7 days (GKE docs, "About flex-start provisioning mode")."""
    run_start_date: Optional[str] = Field(default=None, pattern=r"^\d{4}-\d{2}-\d{2}$")
    """capacity flex-start | queued: the day (YYYY-MM-DD, UTC) the pool's current DWS nodes were provisioned (the
    ProvisioningRequest's Provisioned condition, or the flex-start nodes' creation). GKE deletes each node at its
    maximum run duration, so they are gone by that day plus `maxRunDurationSeconds` (7 days): the plan warns two days
    before and refuses the record once that day has passed (dws_run_end, docs/upgrades.md). Default: none recorded."""


# Managed Lustre performance tiers (MB/s per TiB) -> the instance's minimum capacity and its step in GiB below the
# tier's threshold (docs.cloud.google.com/managed-lustre/docs/performance-tiers, read 2026-12-04: 1000 -> 9,000 GiB
# step 9,000 up to 1,530,000 GiB; 500 -> 18,000; 250 -> 36,000; 125 -> 72,000). Older copies of the quotas page give
# twice these minimums (18,000 GiB at 1000, the GA launch figure); the newer page and pulumi_gcp 10.2.0's
# lustre.Instance capacity_gib ("from 9000") agree, so the newer figures are used.
MANAGED_LUSTRE_TIERS: dict[int, int] = {1000: 9000, 500: 18000, 250: 36000, 125: 72000}
# Managed Lustre CSI driver on GKE: cluster version 1.33.2-gke.1111000 or later, Container-Optimized OS nodes only
# (cloud.google.com/kubernetes-engine/docs/concepts/managed-lustre, Limitations and Requirements, read 2026-12-04).
MANAGED_LUSTRE_GKE_MINOR = (1, 33)


def project_of(spec: Any, config: dict) -> Optional[str]:
    return spec.cluster.gke.project or config.get("gcp:project")


def gke_checks(stack: str, spec: Any, config: dict) -> list[Problem]:
    """Checks for platform gke: pools against the machine catalog, GPU stack, CUDA against GKE's driver."""
    problems: list[Problem] = []
    gke = spec.cluster.gke
    if gke is None:
        return problems  # the cluster block's own validator already reported it
    name = spec.cluster.name or stack
    if not (_GKE_NAME.match(name) and len(name) <= GKE_NAME_MAX):
        # GKE cluster names: lowercase letters, digits and '-', starting with a letter, at most 40 characters.
        origin = "" if spec.cluster.name else " (the stack name, as cluster.name is not set)"
        problems.append(Problem(stack, f"{NS}:cluster.name", f"not a GKE cluster name{origin}: lowercase letters, digits and "
                                f"'-', starting with a letter, at most {GKE_NAME_MAX} characters", name))
    if not project_of(spec, config):
        problems.append(Problem(stack, "gcp:project", "required for gke: set `gcp:project` (or cluster.gke.project)"))
    if gke.storage.gcs_fuse and not gke.workload_identity:
        # GKE's Cloud Storage FUSE CSI setup creates the cluster with --workload-pool: the driver's sidecar reaches
        # the bucket as the pod's Kubernetes service account through Workload Identity Federation.
        problems.append(Problem(stack, f"{NS}:cluster.gke.storage.gcsFuse", "the Cloud Storage FUSE CSI driver needs "
                                "Workload Identity (set cluster.gke.workloadIdentity: true, or gcsFuse: false)", True))
    if gke.storage.managed_lustre:
        at = f"{NS}:cluster.gke.storage.managedLustre"
        major, minor = (int(x) for x in spec.cluster.kubernetes_version.split(".")[:2])
        if (major, minor) < MANAGED_LUSTRE_GKE_MINOR:
            problems.append(Problem(stack, at, "the Managed Lustre CSI driver needs GKE 1.33 or later "
                                    f"(1.33.2-gke.1111000); the cluster runs {spec.cluster.kubernetes_version}", True))
        if gke.gpu_stack == "operator":
            problems.append(Problem(stack, at, "the Managed Lustre CSI driver supports Container-Optimized OS nodes only; "
                                    "cluster.gke.gpuStack operator runs Ubuntu nodes (use gpuStack: gke)", True))
    if spec.addons.keda.enabled and spec.observability.backend("gke") == "gke-managed" and not gke.workload_identity:
        # KEDA queries Managed Service for Prometheus as a Google service account through Workload Identity (its
        # `gcp` pod identity: keda.sh/docs/2.20/authentication-providers/gcp-workload-identity, "your GKE cluster
        # must have Workload Identity enabled"); gpufleet creates that identity (components/gke/keda_identity.py).
        # Turning Workload Identity on for the user would change every node pool's metadata server: say so instead.
        problems.append(Problem(stack, f"{NS}:cluster.gke.workloadIdentity", "KEDA (addons.keda.enabled) queries GKE's "
                                "managed Prometheus (metrics backend gke-managed) through Workload Identity (set "
                                "cluster.gke.workloadIdentity: true, turn KEDA off, or choose another metrics backend)", False))
    problems += _gpu_stack_checks(stack, spec)
    for i, pool in enumerate(spec.node_pools):
        problems += _pool_checks(stack, f"{NS}:nodePools[{i}]", pool, gke)
    if not problems:
        problems += _gpudirect_cidr_checks(stack, spec)
    if not problems:
        problems += _cuda_checks(stack, spec)
    return problems


# Compute Engine keeps four addresses of every IPv4 subnet (network, gateway, second-to-last, broadcast):
# cloud.google.com/vpc/docs/subnets#unusable-ip-addresses-in-every-subnet
SUBNET_RESERVED_ADDRESSES = 4


def gpudirect_subnet_nodes(prefix: int) -> int:
    """Nodes one GPUDirect subnet of this prefix length holds (one address per node and NIC)."""
    return 2 ** (32 - prefix) - SUBNET_RESERVED_ADDRESSES


def _gpudirect_cidr_checks(stack: str, spec: Any) -> list[Problem]:
    """Every GPUDirect pool takes its own subnets of gpuDirectCidr (GKE: pod networks of a cluster must not overlap),
    and each subnet must hold the pool's maxNodes."""
    network = spec.cluster.gke.network
    cidr, prefix = network.gpu_direct_cidr, network.gpu_direct_subnet_prefix
    problems = []
    machines = gcp.machines()
    need = sum(machines[p.machine_type].gpudirect.additional_node_networks for p in spec.node_pools
               if p.rdma and p.machine_type in machines and machines[p.machine_type].gpudirect)
    net = ipaddress.ip_network(cidr, strict=False)
    have = 2 ** (prefix - net.prefixlen) if net.version == 4 and net.prefixlen <= prefix else 0
    if need > have:
        problems.append(Problem(stack, f"{NS}:cluster.gke.network.gpuDirectCidr", f"room for {have} /{prefix} subnets, but "
                                f"the GPUDirect pools need {need} (one per extra NIC of each pool); use a larger IPv4 range "
                                f"(or a longer cluster.gke.network.gpuDirectSubnetPrefix)", cidr))
    # Installers of one kind that are one object: Google's x86 and A4X (arm64) gIB installers are both the DaemonSet
    # kube-system/nccl-rdma-installer (versions.GKE_GPUDIRECT_MANIFESTS "RDMA", "RDMA-a4x"), so the second apply fails.
    installers: dict[str, dict[str, int]] = {}  # kind -> installer manifests key -> its first pool
    for i, p in enumerate(spec.node_pools):
        direct = machines[p.machine_type].gpudirect if p.rdma and p.machine_type in machines else None
        if direct is not None:
            installers.setdefault(direct.kind, {}).setdefault(direct.manifests_key, i)
    for kind, first in installers.items():
        if len(first) > 1:
            names = ", ".join(spec.node_pools[j].name for j in first.values())
            problems.append(Problem(stack, f"{NS}:nodePools[{list(first.values())[1]}].rdma", f"pools {names} need "
                                    f"different {kind} NCCL plugin installers (x86 and A4X's arm64 one), and Google ships "
                                    "both as the DaemonSet kube-system/nccl-rdma-installer: one stack can apply only one; "
                                    "put the A4X pools in a stack of their own, or set rdma: false on one side", True))
    fits = gpudirect_subnet_nodes(prefix)
    for i, pool in enumerate(spec.node_pools):
        if pool.rdma and pool.max_nodes > fits:
            problems.append(Problem(stack, f"{NS}:nodePools[{i}].maxNodes", f"a /{prefix} GPUDirect subnet holds {fits} nodes "
                                    f"(cluster.gke.network.gpuDirectSubnetPrefix); use a shorter prefix or fewer nodes",
                                    pool.max_nodes))
    return problems


def _gpu_stack_checks(stack: str, spec: Any) -> list[Problem]:
    gke, op = spec.cluster.gke, spec.gpu_operator
    at = f"{NS}:gpuOperator"
    if gke.managed_gpu_stack:
        if "gpu_operator" in spec.model_fields_set and op.enabled:
            return [Problem(stack, f"{at}.enabled", "on gke the GPU Operator runs only with cluster.gke.gpuStack: operator "
                            "(default gke: GKE installs the driver and device plugin); set enabled: false or gpuStack: operator")]
        return []
    problems = []
    if not op.enabled:
        problems.append(Problem(stack, f"{at}.enabled", "cluster.gke.gpuStack is operator: the GPU Operator must be enabled"))
    if op.driver.source != "operator":
        problems.append(Problem(stack, f"{at}.driver.source", "with cluster.gke.gpuStack: operator the operator installs the driver "
                                "(GKE's driver installation is disabled; allowed: operator)", op.driver.source))
    return problems


def _pool_checks(stack: str, at: str, pool: Any, gke: GkeSpec) -> list[Problem]:
    problems: list[Problem] = []
    known = gcp.machines()
    uncatalogued = bool(pool.machine_type) and pool.machine_type not in known
    for field, alias in (("hosts", "hosts"), ("gpu", "gpu"), ("gpus_per_node", "gpusPerNode")):
        if field in pool.model_fields_set and (field == "hosts" or not uncatalogued):
            problems.append(Problem(stack, f"{at}.{alias}", "not used on gke: it follows from machineType; remove it"))
    for field, alias, instead in (("max_unavailable", "maxUnavailable", "gke.upgrade"), ("local_storage", "localStorage", "gke.localSsd"),
                                  ("efa_only", "efaOnly", "machineType")):
        if field in pool.model_fields_set:
            problems.append(Problem(stack, f"{at}.{alias}", f"an EKS setting, not used on gke (see {instead})"))
    if pool.machine_type is None:
        problems.append(Problem(stack, f"{at}.machineType", "required on gke: a GPU machine type, e.g. g2-standard-8 or a3-highgpu-8g"))
        return problems
    if uncatalogued:
        return problems + _stack_machine_checks(stack, at, pool, known)
    machine = known[pool.machine_type]
    counts = ", ".join(map(str, machine.counts))
    if pool.accelerator_count is not None and pool.accelerator_count not in machine.counts:
        problems.append(Problem(stack, f"{at}.acceleratorCount", f"{machine.name} takes {counts} x {machine.accelerator} (allowed: {counts})", pool.accelerator_count))
    elif pool.accelerator_count is None and machine.fixed_count is None:
        problems.append(Problem(stack, f"{at}.acceleratorCount", f"required for {machine.name}: how many {machine.accelerator} to attach (allowed: {counts})"))
    if pool.rdma and machine.gpudirect is None:
        problems.append(Problem(stack, f"{at}.rdma", f"GPUDirect is not available on {machine.name} "
                                f"(machine types with GPUDirect: {', '.join(gcp.gpudirect_machines())})", True))
    if pool.rdma and machine.gpudirect and gke.gpu_stack == "operator":
        # GKE's gVNIC guide: gVNIC needs Container-Optimized OS nodes; the NCCL plugin installers also write into
        # GKE's COS driver directory (/home/kubernetes/bin/nvidia). gpuStack operator runs Ubuntu nodes.
        problems.append(Problem(stack, f"{at}.rdma", "GPUDirect on gke needs gVNIC, which needs Container-Optimized OS nodes; "
                                "cluster.gke.gpuStack operator runs Ubuntu nodes (use gpuStack: gke, or rdma: false)", True))
    if pool.sharing.mode != "none":
        # GKE shares GPUs in the node pool itself (its device plugin), not through the NVIDIA device plugin's config.
        problems.append(Problem(stack, f"{at}.sharing.mode", "on gke, share GPUs with gke.gpuSharing (time-sharing, mps) "
                                "and gke.gpuPartitionSize (MIG)", pool.sharing.mode))
    if pool.rdma and machine.gpudirect:
        # GKE multi-network: a Device-type Network object's name is at most 41 characters (it goes into a unix
        # socket path). gpufleet names them <pool>-<nic>; the longest nic is the last one (GkeGpuDirectWiring).
        direct = machine.gpudirect
        last_nic = f"rdma-{direct.rdma_subnets - 1}" if direct.kind == "RDMA" else f"vpc-{direct.networks - 1}"
        if len(pool.name) + 1 + len(last_nic) > NETWORK_NAME_MAX:
            problems.append(Problem(stack, f"{at}.name", f"too long for a GPUDirect pool: its GKE Network objects "
                                    f"<pool>-{last_nic} must stay within {NETWORK_NAME_MAX} characters (at most "
                                    f"{NETWORK_NAME_MAX - 1 - len(last_nic)} here)", pool.name))
    opts = pool.gke or GkePoolSpec()
    if pool.gke is None:
        problems += _capacity_mode_checks(stack, at, pool, gke)
    if pool.rdma and machine.gpudirect and machine.gpudirect.kind == "RDMA" and len(opts.zones) != 1:
        problems.append(Problem(stack, f"{at}.gke.zones", f"GPUDirect RDMA on {machine.name} needs exactly one zone "
                                "(the RoCE network profile is zonal)", list(opts.zones)))
    problems += _node_lifecycle_checks(stack, at, pool, machine, gke, opts)
    if pool.gke is None:
        return problems
    if gke.gpu_stack == "operator" and "gpu_driver_version" in pool.gke.model_fields_set:
        problems.append(Problem(stack, f"{at}.gke.gpuDriverVersion", "not used with cluster.gke.gpuStack: operator "
                                "(GKE's driver installation is disabled; the operator installs the driver)", pool.gke.gpu_driver_version))
    gpu = catalog.gpu(machine.gpu)
    size = pool.gke.gpu_partition_size
    if size is not None:
        if gpu.mig is None:
            mig_gpus = [n for n, g in catalog.gpu_models().items() if g.mig_capable]
            problems.append(Problem(stack, f"{at}.gke.gpuPartitionSize", f"MIG needs a MIG-capable GPU; {machine.name} has {gpu.name} "
                                    f"(MIG GPUs: {', '.join(mig_gpus)})", size))
        elif size not in gpu.mig.profiles:
            problems.append(Problem(stack, f"{at}.gke.gpuPartitionSize", f"not a MIG profile of {gpu.name} "
                                    f"(allowed: {', '.join(gpu.mig.profiles)})", size))
    sharing = pool.gke.gpu_sharing
    if sharing is not None and sharing.strategy == "mps" and size is not None:
        problems.append(Problem(stack, f"{at}.gke.gpuSharing.strategy", "MPS is not supported together with MIG on one pool "
                                "(use time-sharing with gpuPartitionSize, or MPS without it)", "mps"))
    problems += _capacity_mode_checks(stack, at, pool, gke)
    reservation = pool.gke.reservation
    if reservation is not None and pool.capacity == "spot" and reservation.type != "none":
        problems.append(Problem(stack, f"{at}.gke.reservation.type", "spot nodes cannot consume reservations (allowed with spot: none)", reservation.type))
    return problems


def pool_zones(pool: Any, gke: GkeSpec) -> list[str]:
    """The zones a pool's nodes run in, where the stack says: the pool's, else the cluster's node zones, else the
    zone of a zonal cluster; empty when GKE picks (a regional cluster without node zones)."""
    opts = pool.gke or GkePoolSpec()
    return list(opts.zones or gke.node_zones or ([gke.zone] if gke.zone else []))


# "By default, GKE replicates each node pool across three zones of the control plane's region"
# (cloud.google.com/kubernetes-engine/docs/concepts/regional-clusters, "How regional clusters work", read 2026-12-04).
REGIONAL_DEFAULT_ZONES = 3


def initial_node_count(pool: Any, gke: GkeSpec) -> Optional[int]:
    """Nodes per zone a pool starts with: minNodes spread over its zones (GKE's initial_node_count is per zone, and
    its autoscaler does not scale a pool up to its minimum by itself), rounded up. A regional pool whose zones GKE
    picks runs in REGIONAL_DEFAULT_ZONES zones. None: start empty (minNodes 0)."""
    zones = len(pool_zones(pool, gke)) or REGIONAL_DEFAULT_ZONES
    if pool.min_nodes == 0:
        return None
    return -(-pool.min_nodes // zones)


def local_ssd(pool: Any) -> tuple[str, int]:
    """(mode, count) of the pool's local SSDs: the stack's choice, else the machine's bundled SSDs as ephemeral storage."""
    opts = pool.gke or GkePoolSpec()
    bundled = gcp.bundled_local_ssds(pool.machine_type)
    if opts.local_ssd is None:
        return ("ephemeral-storage", bundled) if bundled else ("none", 0)
    if opts.local_ssd.mode == "none":
        return "none", 0
    return opts.local_ssd.mode, opts.local_ssd.count or bundled


def pool_sysctls(pool: Any) -> dict[str, str]:
    """The pool's node sysctls: the stack's, else cluster-toolkit's TCP buffer sizes on GPUDirect pools."""
    opts = pool.gke or GkePoolSpec()
    if opts.sysctls is not None:
        return dict(opts.sysctls)
    return dict(GPUDIRECT_SYSCTLS) if pool.rdma else {}


def _node_lifecycle_checks(stack: str, at: str, pool: Any, machine: Any, gke: GkeSpec, opts: GkePoolSpec) -> list[Problem]:
    """Upgrades, sizing, local SSDs and placement of one pool."""
    problems = []
    if not opts.auto_upgrade and gke.release_channel != "UNSPECIFIED":
        # GKE: node auto-upgrade cannot be turned off on clusters enrolled in a release channel
        # (cloud.google.com/kubernetes-engine/docs/how-to/node-auto-upgrades).
        problems.append(Problem(stack, f"{at}.gke.autoUpgrade", f"GKE keeps node auto-upgrade on in release channel "
                                f"{gke.release_channel}; set cluster.gke.releaseChannel: UNSPECIFIED to pin versions", False))
    if not opts.autoscaling and pool.min_nodes != pool.max_nodes:
        problems.append(Problem(stack, f"{at}.maxNodes", f"a fixed-size pool (gke.autoscaling: false) has minNodes nodes; "
                                f"set maxNodes equal to minNodes ({pool.min_nodes})", pool.max_nodes))
    zones = pool_zones(pool, gke)
    if not opts.autoscaling and pool.min_nodes and zones and pool.min_nodes % len(zones):
        # GKE's node_count is per zone: a fixed pool has the same number of nodes in each of its zones.
        problems.append(Problem(stack, f"{at}.minNodes", f"a fixed-size pool has the same nodes in each of its {len(zones)} "
                                f"zones: use a multiple of {len(zones)}", pool.min_nodes))
    if not opts.autoscaling and pool.min_nodes == 0:
        problems.append(Problem(stack, f"{at}.minNodes", "a fixed-size pool (gke.autoscaling: false) needs minNodes >= 1", 0))
    bundled = gcp.bundled_local_ssds(machine.name)
    if opts.local_ssd is not None and opts.local_ssd.mode != "none":
        count = opts.local_ssd.count
        if bundled and count is not None and count != bundled:
            problems.append(Problem(stack, f"{at}.gke.localSsd.count", f"{machine.name} comes with {bundled} local SSDs "
                                    f"(allowed: {bundled})", count))
        if not bundled and count is None:
            problems.append(Problem(stack, f"{at}.gke.localSsd.count", f"required: {machine.name} has no bundled local SSDs, "
                                    "say how many to attach"))
    if opts.placement == "compact":
        if not gcp.compact_placement_supported(machine.name):
            problems.append(Problem(stack, f"{at}.gke.placement", f"GKE compact placement is not available for {machine.name}",
                                    "compact"))
        if len(pool_zones(pool, gke)) != 1:
            problems.append(Problem(stack, f"{at}.gke.zones", "compact placement needs exactly one zone", list(opts.zones)))
        if opts.upgrade.strategy == "blue-green":
            problems.append(Problem(stack, f"{at}.gke.upgrade.strategy", "compact placement does not work with blue-green "
                                    "upgrades (use surge)", "blue-green"))
    return problems


def _capacity_mode_checks(stack: str, at: str, pool: Any, gke: GkeSpec) -> list[Problem]:
    """reserved: the pool runs in its reservation's zone with its machine type. flex-start / queued: what DWS
    forbids (cluster-toolkit v1.95.0 gke-node-pool preconditions, GKE DWS docs; ../shared/reference/gcp/dws.md)."""
    problems: list[Problem] = []
    opts = pool.gke or GkePoolSpec()
    cap = pool.capacity
    r = pool.reservation
    if cap == "reserved" and r is not None and r.type in ("specific", "any"):
        if pool.gke is not None and pool.gke.reservation is not None:
            problems.append(Problem(stack, f"{at}.gke.reservation", "give the reservation once: with capacity reserved, "
                                    "nodePools[].reservation replaces gke.reservation; remove it"))
        ref = f"reservation '{r.name}'" if r.name else "the reservation"
        if r.zone is not None:
            if not r.zone.startswith(f"{gke.region}-"):
                problems.append(Problem(stack, f"{at}.reservation.zone", f"{ref} is outside the cluster's region {gke.region}: "
                                        "GKE nodes consume only reservations in their own zone", r.zone))
            elif opts.zones and list(opts.zones) != [r.zone]:
                problems.append(Problem(stack, f"{at}.gke.zones", f"{ref} is in zone {r.zone}: a reserved pool's nodes must "
                                        f"run there (allowed: [{r.zone}])", list(opts.zones)))
        if r.instance_type is not None and r.instance_type != pool.machine_type:
            problems.append(Problem(stack, f"{at}.reservation.instanceType", f"the pool's machineType is {pool.machine_type}, "
                                    f"but {ref} holds {r.instance_type}: GKE consumes a reservation only with the machine type it holds",
                                    r.instance_type))
    if cap in DWS_MODES:
        if pool.gke is not None and pool.gke.reservation is not None and pool.gke.reservation.type != "none":
            problems.append(Problem(stack, f"{at}.gke.reservation.type", f"{cap} nodes cannot consume reservations "
                                    f"(allowed with {cap}: none)", pool.gke.reservation.type))
        if "location_policy" in opts.model_fields_set and opts.location_policy != "ANY":
            problems.append(Problem(stack, f"{at}.gke.locationPolicy", f"DWS ({cap}) pools need location policy ANY "
                                    f"(allowed with {cap}: ANY)", opts.location_policy))
        if cap == "queued" and pool.min_nodes > 0:
            problems.append(Problem(stack, f"{at}.minNodes", "a queued-provisioning pool starts empty: its nodes come only "
                                    "through ProvisioningRequests (allowed with queued: 0)", pool.min_nodes))
    elif opts.max_run_duration_seconds is not None:
        problems.append(Problem(stack, f"{at}.gke.maxRunDurationSeconds", f"only used with capacity flex-start or queued "
                                f"(this pool is {cap})", opts.max_run_duration_seconds))
    if cap not in DWS_MODES and opts.run_start_date is not None:
        problems.append(Problem(stack, f"{at}.gke.runStartDate", f"only used with capacity flex-start or queued "
                                f"(this pool is {cap}; a reservation's end is reservation.endDate)", opts.run_start_date))
    return problems


# Warn two days before a DWS run's nodes go: runs last at most 7 days (FLEX_START_MAX_RUN_SECONDS), so the 14 days of
# reservations would always warn; two days leave time to checkpoint and to queue the next request.
DWS_END_WARNING_DAYS = 2


def dws_run_ends(spec: Any) -> list[CapacityEnd]:
    """The DWS pools whose run start the stack records, with the last day their nodes may live: the start day plus the
    run duration, rounded up to whole days (a node started late on its first day lives into the next). GKE: each
    flex-start node lives at most its maximum run duration, 7 days by default and at most (GKE docs, "About
    flex-start provisioning mode", cloud.google.com/kubernetes-engine/docs/concepts/dws; ../shared/reference/gcp/dws.md
    D1); a queued-provisioning request's nodes are deleted with it at that duration (D2)."""
    out = []
    for i, pool in enumerate(spec.node_pools):
        opts = pool.gke
        if pool.capacity not in DWS_MODES or opts is None or opts.run_start_date is None:
            continue
        start = dt.date.fromisoformat(opts.run_start_date)
        seconds = opts.max_run_duration_seconds or FLEX_START_MAX_RUN_SECONDS
        days = -(-seconds // 86400)
        out.append(CapacityEnd(
            pool=i, key="gke.runStartDate", value=opts.run_start_date, last_day=start + dt.timedelta(days=days),
            what=f"its {pool.capacity} nodes (started {start.isoformat()}, each for at most {_duration(seconds)})",
            then="GKE deletes DWS nodes at their maximum run duration, whatever runs on them",
            warning_days=DWS_END_WARNING_DAYS))
    return out


def _duration(seconds: int) -> str:
    if seconds % 86400 == 0:
        return f"{seconds // 86400} day{'s' if seconds != 86400 else ''}"
    return f"{seconds // 3600} h" if seconds % 3600 == 0 else f"{seconds} s"


def _cuda_checks(stack: str, spec: Any) -> list[Problem]:
    """With GKE's driver, every CUDA version the workloads need must run on every pool's driver branch."""
    if not spec.cluster.gke.managed_gpu_stack:
        return []
    problems = []
    k8s = spec.cluster.kubernetes_version
    for i, pool in enumerate(spec.node_pools):
        choice = (pool.gke or GkePoolSpec()).gpu_driver_version
        branch = driver_branch_for(spec, pool)
        if branch is None:
            continue
        for cuda in spec.workloads.cuda_versions:
            ok, why = catalog.driver_runs_cuda(gcp.gke_driver_floor(branch), cuda)
            if not ok:
                fix = "use LATEST, or cluster.gke.gpuStack: operator" if choice == "DEFAULT" else "use cluster.gke.gpuStack: operator"
                problems.append(Problem(stack, f"{NS}:nodePools[{i}].gke.gpuDriverVersion",
                                        f"GKE {k8s} installs driver branch {branch} for {choice}, which cannot run CUDA {cuda} "
                                        f"from workloads.cudaVersions: {fix} with a newer driver", choice))
    return problems


def _stack_machine_checks(stack: str, at: str, pool: Any, known: dict) -> list[Problem]:
    """A machine type the catalog lacks plans with the pool's `gpu` and `gpusPerNode` (issue 49; the plan warns that no
    source confirms them): the node pool's guest accelerator is the GPU's Compute Engine accelerator type, which must
    be the GPU's only one (gcp_machines.yaml `accelerators`), and GPUDirect is not wired (its networks are unknown)."""
    if pool.gpu is None and pool.gpus_per_node is None:
        return [Problem(stack, f"{at}.machineType", f"not a GPU machine type gpufleet knows (allowed: {', '.join(known)}); "
                        "a real machine type the catalog lacks plans when the pool gives its own gpu and gpusPerNode (and "
                        "pricePerNodeHour)", pool.machine_type)]
    problems = []
    accelerators = gcp.gpu_accelerators(pool.gpu or "")
    if pool.gpu is not None and len(accelerators) != 1:
        which = (f"Compute Engine has several accelerator types for it ({', '.join(accelerators)}), and gpufleet cannot "
                 "tell which one this machine takes" if accelerators else "gpufleet knows no Compute Engine accelerator "
                 "type for it (gcp_machines.yaml accelerators)")
        problems.append(Problem(stack, f"{at}.gpu", f"{pool.machine_type} is not in gpufleet's catalog and {which}; "
                                "add the machine type to gpufleet/base/catalog/gcp_machines.yaml with its sources", pool.gpu))
    if pool.accelerator_count is not None:
        problems.append(Problem(stack, f"{at}.acceleratorCount", "not used with gpusPerNode (a machine type the catalog "
                                "lacks takes the count the stack gives); remove it", pool.accelerator_count))
    if pool.rdma:
        problems.append(Problem(stack, f"{at}.rdma", f"{pool.machine_type} is not in gpufleet's catalog, so its GPUDirect "
                                "networks are not known and cannot be wired; use rdma: false or a catalogued machine type",
                                True))
    return problems


def driver_branch_for(spec: Any, pool: Any) -> Optional[int]:
    """The driver branch a GKE pool's nodes run with GKE's driver (for reports and alignment)."""
    choice = (pool.gke or GkePoolSpec()).gpu_driver_version
    if gcp.gke_driver_branch(spec.cluster.kubernetes_version, choice) is None:
        return None  # the minor's own row is unknown: alignment is not judged from a GPU's lower bound alone
    # Some GPUs get a newer branch than the minor's row (B200, H200: gcp_machines.yaml gke_driver_branches_per_gpu).
    machine = gcp.machines().get(pool.machine_type or "")
    return gcp.gke_gpu_driver_branch(spec.cluster.kubernetes_version, choice, machine.gpu if machine else pool.gpu)
