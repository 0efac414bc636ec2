"""gpufleet:nodePools — GPU node pools, one component each."""

import re
from typing import Literal, Optional, Union

from pydantic import Field, ValidationInfo, field_validator

from gpufleet.base import catalog
from gpufleet.base.labels import EXEMPT_PREFIX, POLICY_NAMES, RESERVED_LABEL_PREFIX, RESERVED_TAINT_KEYS
from gpufleet.base.spec.base import DNS_LABEL, Model
from gpufleet.base.spec.cluster import Host
from gpufleet.base.spec.features.cold_start import ColdStartSpec
from gpufleet.base.spec.features.rdma import RdmaNetworkSpec
from gpufleet.base.spec.platforms.aks import AksPoolSpec
from gpufleet.base.spec.platforms.gke import GkePoolSpec
from gpufleet.base.spec.platforms.existing import ExistingPoolSpec
from gpufleet.base.spec.features.reservation import CapacityReservationSpec

MIG_STRATEGIES = ("single", "mixed")


class Taint(Model):
    key: str = Field(min_length=1)
    value: str = ""
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] = "NoSchedule"


class SharingSpec(Model):
    """How the pool's GPUs are shared between pods (device plugin / MIG manager of the GPU Operator).

    Field names are stable: the GKE node pool maps the same block onto GKE's native sharing
    (`replicas` -> max shared clients per GPU, `profile` -> MIG partition size).
    Checks that need the pool's GPU model live in gpufleet/base/spec/features/sharing_checks.py.
    """

    mode: Literal["none", "time-slicing", "mps", "mig", "partition"] = "none"
    """none: one pod per GPU. time-slicing | mps: `replicas` pods share each GPU. mig: each GPU is cut into
    MIG instances (`profile`, `layout` or `profiles`). NVIDIA GPUs only, all three. partition: AMD Instinct
    GPUs only: each GPU is cut into compute partitions (`compute`) over memory partitions (`memory`)."""
    replicas: Optional[int] = None
    """time-slicing | mps (required there): pods that share one GPU, >= 2. The node advertises GPUs x replicas."""
    rename_by_default: bool = False
    """time-slicing | mps: advertise the shared GPUs as `nvidia.com/gpu.shared` instead of `nvidia.com/gpu`,
    so pods opt in to sharing explicitly. Default: keep the name `nvidia.com/gpu`."""
    fail_requests_greater_than_one: bool = False
    """time-slicing: reject pods asking for more than one shared GPU (more replicas never means more
    compute). Default: such requests are admitted."""
    profile: Optional[str] = None
    """mig: fill every GPU with this one profile, e.g. "1g.10gb" (7 per H100-80GB, 4 per A100-40GB).
    The count follows from the GPU model (upstream `all-<profile>` layout)."""
    layout: Optional[str] = None
    """mig: a named mig-parted layout: `all-<profile>` or `all-balanced` (per GPU model, from the catalog)."""
    profiles: dict[str, int] = {}
    """mig: an explicit layout, profile -> instances per GPU, e.g. {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}.
    gpufleet then ships its own mig-parted config for the cluster."""
    strategy: Literal["single", "mixed"] = "mixed"
    """mig: how the device plugin advertises MIG instances. mixed (default): one resource per profile,
    `nvidia.com/mig-<profile>`. single: every instance is a `nvidia.com/gpu` (layouts with one profile only).
    The GPU Operator's `mig.strategy` is cluster-wide, so every MIG pool must use the same strategy."""

    compute: Optional[Literal["SPX", "DPX", "QPX", "CPX"]] = None
    """partition (required there): the compute partition mode of every GPU in the pool: SPX (whole GPU), DPX (2),
    QPX (4) or CPX (one per XCD: 8 on MI300X/MI325X/MI355X). Which modes a GPU has: gpufleet/base/catalog/amd_gpus.yaml.
    The node advertises GPUs x partitions as amd.com/gpu (the device plugin's `single` naming strategy)."""
    memory: Optional[Literal["NPS1", "NPS2", "NPS4"]] = None
    """partition: the memory partition mode (NUMA per socket of HBM); default NPS1. NPS4 runs only with CPX, NPS2
    only on GPUs that have it (MI325X, MI355X), per gpufleet/base/catalog/amd_gpus.yaml."""

    @field_validator("replicas")
    @classmethod
    def _replicas(cls, v: Optional[int]) -> Optional[int]:
        if v is not None and v < 2:
            raise ValueError(f"must be >= 2 to share a GPU (got {v})")
        return v

    @field_validator("profiles")
    @classmethod
    def _counts(cls, v: dict[str, int]) -> dict[str, int]:
        bad = {p: n for p, n in v.items() if n < 1}
        if bad:
            raise ValueError(f"instance counts must be >= 1 (got {bad})")
        return v


class NodePoolSpec(Model):
    """A GPU node pool: nodes of one GPU shape, labelled and tainted so only GPU work lands there."""

    name: str = Field(pattern=DNS_LABEL, max_length=40)
    """Pool name: node label `gpufleet.io/pool` and child resource names. Renaming replaces the pool."""
    gpu: Optional[str] = None
    """GPU model from the catalog (k3s); on clouds it follows from the instance type."""
    gpus_per_node: Optional[int] = Field(default=None, ge=1, le=16)
    """GPUs in each node (k3s); on clouds it follows from the instance type."""
    hosts: list[Host] = []
    """k3s: the GPU machines of this pool; the pool's size is their number."""
    min_nodes: int = Field(default=0, ge=0)
    """Cloud pools: minimum size; 0 lets the autoscaler remove every idle GPU node."""
    max_nodes: int = Field(default=1, ge=0)
    """Cloud pools: maximum size the autoscaler may reach (must be >= minNodes)."""
    capacity: Literal["on-demand", "spot", "reserved", "flex-start", "queued"] = "on-demand"
    """on-demand; spot/preemptible (cheaper, can be interrupted); reserved (a reservation or capacity block, see
    `reservation`); GKE only: flex-start (DWS flex-start VMs, at most 7 days each) or queued (DWS queued
    provisioning: all nodes at once, through ProvisioningRequests). gpufleet/base/spec/features/reservation.py."""
    reservation: Optional[CapacityReservationSpec] = None
    """capacity reserved: the reservation the pool consumes and what it holds (zone, instance type, count);
    default: none."""
    sharing: SharingSpec = SharingSpec()
    """GPU sharing for this pool; default: none (one pod per GPU)."""
    allocation: Literal["device-plugin", "dra"] = "device-plugin"
    """How pods get the pool's GPUs. device-plugin (default): the NVIDIA device plugin advertises `nvidia.com/gpu`.
    dra: Dynamic Resource Allocation (resource.k8s.io/v1, Kubernetes >= 1.34): NVIDIA's DRA driver for GPUs runs on
    the pool's nodes instead of the device plugin, pods claim GPUs (or MIG devices) through ResourceClaimTemplates,
    and multi-node NVLink pools (GB200 NVL72) get ComputeDomains (`gpufleet:dra`). docs/dra.md."""
    rdma: bool = False
    """RDMA networking for multi-node training on this pool (k3s: NVIDIA Network Operator, see `rdmaNetwork`)."""
    rdma_network: RdmaNetworkSpec = RdmaNetworkSpec()
    """k3s RDMA pools: which NICs, which secondary network and IP range; default: Mellanox NICs (vendor 15b3)
    on a macvlan network (needs `interfaces`)."""
    labels: dict[str, str] = {}
    """Extra node labels (gpufleet adds pool, GPU model and capacity type itself)."""
    taints: list[Taint] = []
    """Extra node taints (gpufleet adds the nvidia.com/gpu NoSchedule taint itself; amd.com/gpu on AMD pools)."""
    exemptions: dict[str, str] = {}
    """Policy name -> the reason this pool is exempt (e.g. an always-on inference pool from
    gpu-pool-scale-to-zero). EKS: tagged on the node group; GKE: a node label (so the reason must be a label
    value: letters, digits, '-', '_', '.', at most 63 characters); visible in review. Not on k3s. Default: none."""
    price_per_node_hour: Optional[float] = Field(default=None, ge=0)
    """Hourly cost of one node, for the plan's cost section where the catalog has no price (bare metal)."""
    # EKS pool fields (AWS names; GKE uses machineType/accelerator instead).
    instance_type: Optional[str] = None
    """EKS: the pool's EC2 instance type (gpufleet/base/catalog/aws_instances.yaml), e.g. p5.48xlarge; it decides
    the GPU model, GPU count, EFA interfaces and price."""
    instance_types: list[str] = []
    """EKS: several EC2 instance types of one GPU shape instead of instanceType (spot pools should list
    several so a capacity shortage in one type does not stall the pool)."""
    ami: Literal["al2023-nvidia", "bottlerocket-nvidia"] = "al2023-nvidia"
    """EKS: the GPU AMI family (never an AMI id); both ship the NVIDIA driver and toolkit. al2023-nvidia runs a pinned
    AMI release (`amiRelease`), and so does bottlerocket-nvidia (a managed node group reads its release version, with
    the release's commit EKS wants, from that release's own SSM parameter)."""
    ami_release: Optional[str] = None
    """EKS: the AMI release the pool's nodes run, for the cluster's Kubernetes minor. ami al2023-nvidia: an EKS-optimized
    AMI release "1.N.P-YYYYMMDD" (gpufleet/base/versions.py EKS_AL2023_RELEASES); ami bottlerocket-nvidia: a
    Bottlerocket release "1.N.P" (BOTTLEROCKET_RELEASES); each table records the NVIDIA driver a release ships.
    Default: gpufleet's pin for the minor (EKS_AL2023_RELEASE_PINS, BOTTLEROCKET_RELEASE_PINS). Changing it replaces
    the pool's nodes, rolling (docs/review.md). The plan warns here when the release is over 90 days old or its
    driver's branch is past, or within 90 days of, its end of life (docs/plan.md)."""
    root_volume_gib: int = Field(default=200, ge=20, le=16384)
    """EKS: size of the encrypted gp3 root volume; CUDA images are large."""
    availability_zone: Optional[str] = None
    """EKS: keep the pool in this zone; EFA pools always run in one zone (default: the network's first)."""
    subnet_ids: list[str] = []
    """EKS with an existing network: this pool's subnets; default: all the cluster's subnets (EFA pools:
    those in its zone)."""
    max_unavailable: Union[int, str] = 1
    """EKS: nodes a node group update (AMI, launch template) may take down at once: a number (1-100) or a
    percentage such as "25%" (update_config max_unavailable / max_unavailable_percentage); default 1. EKS
    updates by launching new nodes first, so a group that fills a capacity reservation wants a low value."""
    local_storage: Optional[Literal["raid0", "none"]] = None
    """EKS: raid0 puts kubelet and containerd (images, emptyDirs, logs) on a RAID0 of the instance's NVMe instance
    store (AL2023: nodeadm `localStorage.strategy: RAID0`; Bottlerocket: `apiclient ephemeral-storage`). Default:
    raid0 where the instance type has an instance store (gpufleet/base/catalog/aws_instances.yaml), as the
    terraform-aws-eks p4d/p5 examples and ai-on-eks GPU node pools do; none elsewhere."""
    efa_only: Optional[bool] = None
    """EKS EFA pools: true puts EFA-only interfaces (no IP address) on network cards 1.. and keeps the EFA (with
    ENA) interface on card 0 only, as terraform-aws-eks v21 does by default (`enable_efa_only`); false: EFA with ENA
    on every card. Default: the catalog's choice for the instance type (efa-only on p5/p5e)."""
    machine_type: Optional[str] = None
    """GKE: GPU machine type (gpufleet/base/catalog/gcp_machines.yaml); the GPU model and count follow from it."""
    accelerator_count: Optional[int] = Field(default=None, ge=1, le=16)
    """GKE: GPUs to attach where the machine type takes several counts (N1 + T4); default: the machine's fixed count."""
    gke: Optional[GkePoolSpec] = None
    """GKE: driver installation, GPU sharing, MIG partition size, reservation, zones; default: GKE's defaults."""
    vm_size: Optional[str] = None
    """AKS: the pool's GPU VM size (gpufleet/base/catalog/azure_vms.yaml), e.g. Standard_ND96isr_H100_v5; the GPU model,
    GPU count and InfiniBand follow from it."""
    aks: Optional[AksPoolSpec] = None
    """AKS: zones, Spot maximum price, OS disk and node image; default: AKS's defaults as gpufleet sets them."""
    existing: Optional[ExistingPoolSpec] = None
    """platform existing (required there): the nodes the cluster already has: their node selector, optionally their
    names, and a catalog offering or a price per GPU-hour (gpufleet/base/spec/platforms/existing.py)."""
    cold_start: Optional[ColdStartSpec] = None
    """The pool's fastest image path: images to pre-pull, GKE image streaming and secondary boot disk, an EKS
    Bottlerocket data-volume snapshot, a bound on parallel pulls (gpufleet/base/spec/features/cold_start.py,
    docs/cold-start.md). Default: none, the platform's defaults."""

    @field_validator("labels")
    @classmethod
    def _own_label_keys(cls, v: dict[str, str]) -> dict[str, str]:
        reserved = sorted(k for k in v if k.startswith(RESERVED_LABEL_PREFIX))
        exempt = [k for k in reserved if k.startswith(EXEMPT_PREFIX)]
        if exempt:
            policy = exempt[0].removeprefix(EXEMPT_PREFIX)
            raise ValueError(
                f"{', '.join(exempt)}: exemptions are declared with the pool's `exemptions` key, e.g. "
                f"exemptions: {{{policy}: <reason>}} (gpufleet then sets the label or tag itself)"
            )
        if reserved:
            raise ValueError(
                f"{', '.join(reserved)}: gpufleet sets {RESERVED_LABEL_PREFIX}* labels itself (pool, GPU model, "
                "capacity type); use your own prefix"
            )
        return v

    @field_validator("taints")
    @classmethod
    def _own_taint_keys(cls, v: list[Taint]) -> list[Taint]:
        reserved = sorted({t.key for t in v if t.key in RESERVED_TAINT_KEYS})
        if reserved:
            raise ValueError(f"{', '.join(reserved)}: gpufleet adds this taint itself (GPU pools, spot pools)")
        return v

    @field_validator("exemptions")
    @classmethod
    def _known_policies(cls, v: dict[str, str]) -> dict[str, str]:
        for name, reason in v.items():
            if name not in POLICY_NAMES:
                raise ValueError(f"unknown policy '{name}' (allowed: {', '.join(POLICY_NAMES)})")
            if not reason.strip():
                raise ValueError(f"exemption from '{name}' needs a reason")
        return v

    @field_validator("hosts")
    @classmethod
    def _pool_hosts_unpriced(cls, v: list[Host]) -> list[Host]:
        priced = [h.name for h in v if h.price_per_hour is not None]
        if priced:
            raise ValueError(f"pricePerHour on GPU pool hosts ({', '.join(priced)}): a pool's hosts are priced by "
                             "the pool's pricePerNodeHour")
        return v

    @field_validator("gpu")
    @classmethod
    def _known_gpu(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and v not in catalog.gpu_models():
            raise ValueError(f"unknown GPU model '{v}' (allowed: {', '.join(catalog.gpu_models())})")
        return v

    @field_validator("max_unavailable")
    @classmethod
    def _max_unavailable(cls, v: Union[int, str]) -> Union[int, str]:
        # EKS NodegroupUpdateConfig: maxUnavailable 1-100, maxUnavailablePercentage 1-100.
        if isinstance(v, int):
            if not 1 <= v <= 100:
                raise ValueError(f"must be 1 to 100 nodes (got {v})")
            return v
        m = re.fullmatch(r"(\d{1,3})%", v)
        if not m or not 1 <= int(m.group(1)) <= 100:
            raise ValueError(f"'{v}' is neither a node count (1-100) nor a percentage such as \"25%\" (1%-100%)")
        return v

    @field_validator("max_nodes")
    @classmethod
    def _max_at_least_min(cls, v: int, info: ValidationInfo) -> int:
        lo = info.data.get("min_nodes")
        if lo is not None and v < lo:
            raise ValueError(f"maxNodes ({v}) must be >= minNodes ({lo})")
        return v

