"""gpufleet:cluster.eks — an Amazon EKS control plane: network, endpoint access, encryption, access
entries, the system node group, the cluster autoscaler and AWS storage, and what a pool's EKS settings resolve to
(instance types, zone, local storage, EFA interfaces). The checks against the rest of the stack: eks_checks.py.
"""

import ipaddress
import re
from typing import Annotated, Literal, Optional

from pydantic import Field, field_validator, model_validator

from gpufleet.base import cidrs
from gpufleet.base.catalog import aws as aws_catalog
from gpufleet.base.spec import ids
from gpufleet.base.spec.base import Model, check_cidr

NAMESPACE = "gpufleet"
LOG_TYPES = ("api", "audit", "authenticator", "controllerManager", "scheduler")
# EKS access policies an access entry may get (arn:aws:eks::aws:cluster-access-policy/<name>).
ACCESS_POLICIES = {
    "cluster-admin": "AmazonEKSClusterAdminPolicy",
    "admin": "AmazonEKSAdminPolicy",
    "edit": "AmazonEKSEditPolicy",
    "view": "AmazonEKSViewPolicy",
}
GPU_AMIS = ("al2023-nvidia", "bottlerocket-nvidia")
# "Public endpoint access CIDR ranges per cluster: 40", not adjustable (AWS General Reference, "Amazon EKS endpoints
# and quotas", docs.aws.amazon.com/general/latest/gr/eks.html#limits_eks).
EKS_PUBLIC_ACCESS_CIDRS_MAX = 40
# A Karpenter disruption budget's `nodes`: a count, or a percentage of at most 100 (karpenter.sh_nodepools.yaml of the
# pinned chart, versions.KARPENTER: spec.disruption.budgets[].nodes pattern ^((100|[0-9]{1,2})%|[0-9]+)$).
KARPENTER_BUDGET_NODES = r"^((100|[0-9]{1,2})%|[0-9]+)$"
# consolidateAfter: hours, minutes and seconds (the CRD's pattern ^(([0-9]+(s|m|h))+|Never)$; gpufleet always
# consolidates empty GPU nodes, so not Never).
CONSOLIDATE_AFTER = r"^(\d+[smh])+$"
# expireAfter: the NodePool CRD's pattern (spec.template.spec.expireAfter, ^(([0-9]+(s|m|h))+|Never)$, default 720h).
EXPIRE_AFTER = r"^(([0-9]+(s|m|h))+|Never)$"
# A scheduled budget's duration and schedule (the CRD's spec.disruption.budgets[].duration and .schedule patterns).
BUDGET_DURATION = r"^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$"
BUDGET_SCHEDULE = r"^(@(annually|yearly|monthly|weekly|daily|midnight|hourly))|((.+)\s(.+)\s(.+)\s(.+)\s(.+))$"


class DisruptionWindowSpec(Model):
    """A scheduled Karpenter disruption budget of every GPU NodePool (docs/upgrades.md): from each `schedule` (cron,
    UTC: the CRD has no time zone) for `duration`, at most `nodes` of a pool are disrupted; `nodes: "0"` freezes them.
    Karpenter applies the most restrictive active budget (karpenter.sh_nodepools.yaml of versions.KARPENTER,
    spec.disruption.budgets)."""

    schedule: str = Field(pattern=BUDGET_SCHEDULE, max_length=100)
    """When the window opens: cron (`0 9 * * mon-fri`) or a macro (`@daily`)."""
    duration: str = Field(pattern=BUDGET_DURATION)
    """How long it stays open: hours and minutes (`8h`, `1h30m`)."""
    nodes: str = Field(default="0", pattern=KARPENTER_BUDGET_NODES)
    """At most this many (or this percentage of) a pool's nodes disrupted while open. Default "0": none."""


# A Go duration as the cluster autoscaler parses its ASG autoscaling-options tags (time.ParseDuration: "10m", "1h30m",
# "10m0s"; kubernetes/autoscaler cluster-autoscaler/cloudprovider/aws/aws_manager.go GetAsgOptions, at the tag of every
# image in versions.CLUSTER_AUTOSCALER_IMAGES). Whole hours, minutes and seconds only: a tag it cannot parse is ignored
# with a log line.
CA_DURATION = r"^([0-9]+(s|m|h))+$"


class GpuScaleDownSpec(Model):
    """The cluster autoscaler's scale-down settings of every GPU node group, written as the group's
    `k8s.io/cluster-autoscaler/node-template/autoscaling-options/*` tags, which override the autoscaler's flags for
    that group only (kubernetes/autoscaler cluster-autoscaler/cloudprovider/aws/README.md, "Auto-Discovery Setup", at
    the tag of the 1.35 image in versions.CLUSTER_AUTOSCALER_IMAGES; read by GetAsgOptions at every tag there). The
    system group keeps the cluster-wide flags (`scaleDownUnneededTime`, `scaleDownUtilizationThreshold`).
    docs/upgrades.md."""

    gpu_utilization_threshold: float = Field(default=0.0, ge=0, le=1)
    """scaledowngpuutilizationthreshold: a GPU node whose GPU requests / allocatable GPUs is above this is never
    removed. Default 0, not the autoscaler's 0.5: only a node where no pod requests a GPU is a candidate, so the
    autoscaler never evicts a job to pack GPUs (cluster-autoscaler FAQ.md at the same tag, "How can I prevent Cluster
    Autoscaler from scaling down non-empty nodes?": "set the utilization threshold to 0"; core/scaledown/eligibility
    eligibility.go: unremovable when `Utilization > threshold`). GPU nodes are judged by GPUs alone: they carry the
    autoscaler's GPU label (labels.EKS_CA_GPU_LABEL; simulator/utilization/info.go)."""
    unneeded_time: str = Field(default="30m", json_schema_extra={"pattern": CA_DURATION})
    """scaledownunneededtime: how long a GPU node must be unneeded before it goes. Default 30m, not the autoscaler's
    10m: a new GPU node takes minutes to boot, load its driver and pull a CUDA image, and the next job of a queue
    often arrives within that; the same delay as Karpenter's GPU NodePools (`consolidateAfter`, 30m)."""
    unready_time: str = Field(default="20m", json_schema_extra={"pattern": CA_DURATION})
    """scaledownunreadytime: how long an unready GPU node must be unneeded before it goes. Default 20m, the
    autoscaler's own (FAQ flag table `scale-down-unready-time` 20m0s), written out so the review shows a change."""
    utilization_threshold: Optional[float] = Field(default=None, ge=0, le=1)
    """scaledownutilizationthreshold (CPU and memory): the autoscaler ignores it on a node that advertises GPUs
    (simulator/utilization/info.go: "Skips cpu and memory utilization calculation for node with GPU"); it applies
    while a node's GPUs are not advertised. Default: not tagged, the cluster-wide `scaleDownUtilizationThreshold`."""

    @field_validator("unneeded_time", "unready_time")
    @classmethod
    def _go_duration(cls, v: str) -> str:
        if not re.fullmatch(CA_DURATION, v):
            raise ValueError(f"'{v}' is not a duration of hours, minutes and seconds such as \"30m\" or \"1h30m\" (the "
                             "autoscaler parses it with Go's time.ParseDuration, which has no days: write 48h for two)")
        return v

    def options(self) -> dict[str, str]:
        """The autoscaling-options tags' names and values (strings, as the autoscaler parses them)."""
        out = {
            "scaledowngpuutilizationthreshold": _ratio(self.gpu_utilization_threshold),
            "scaledownunneededtime": self.unneeded_time,
            "scaledownunreadytime": self.unready_time,
        }
        if self.utilization_threshold is not None:
            out["scaledownutilizationthreshold"] = _ratio(self.utilization_threshold)
        return dict(sorted(out.items()))


def _ratio(value: float) -> str:
    """A threshold as strconv.ParseFloat reads it, without a float's noise: 0 -> "0", 0.25 -> "0.25"."""
    return format(float(value), "g")


def _cidr(value: str) -> str:
    """A CIDR block with its prefix length written out. The EC2 and EKS APIs take CIDR notation (EC2 API Reference
    CreateVpc `CidrBlock`: "The IPv4 network range for the VPC, in CIDR notation. For example, 10.0.0.0/16"; EKS API
    Reference VpcConfigRequest `publicAccessCidrs`: CIDR blocks), and a bare address is none: Python reads it as a /32
    (a VPC of one address), while what AWS makes of it was not verified, so gpufleet refuses it instead of guessing."""
    if isinstance(value, str) and "/" not in value:
        raise ValueError(f"'{value}' has no prefix length: write the CIDR block, e.g. {value}/32 for one address or "
                         "10.0.0.0/16 for a network")
    return check_cidr(value, "10.0.0.0/16")


class EksSubnet(Model):
    """An existing private subnet the cluster and its nodes use."""

    id: str = Field(pattern=r"^subnet-[0-9a-f]{8,17}$")
    """Subnet id, e.g. subnet-0123456789abcdef0."""
    availability_zone: str = Field(pattern=r"^[a-z]{2}(-[a-z]+)+-\d[a-z]$")
    """The subnet's availability zone (gpufleet checks that EFA pools stay in one zone)."""


class EksNetworkSpec(Model):
    """A new VPC (give `availabilityZones`) or existing private subnets (give `vpcId` and `subnets`)."""

    availability_zones: list[str] = []
    """New VPC: one private and one public subnet in each zone (at least 2), NAT for the private ones."""
    vpc_cidr: str = "10.0.0.0/16"
    """New VPC: its CIDR; private subnets get /19-sized slices of a /16, public ones smaller slices."""
    secondary_cidrs: list[str] = []
    """New VPC: secondary CIDR blocks (e.g. 100.64.0.0/16 from RFC 6598) associated with the VPC; the first is split
    into one subnet per zone where nodes and their pods get addresses, so pods do not exhaust a small primary range
    (as awslabs/ai-on-eks does). Default: none, nodes in the primary private subnets."""
    single_nat_gateway: bool = False
    """New VPC: one NAT gateway for all zones (cheaper, one zone's outage cuts egress); default: one per zone."""
    egress: Literal["nat", "endpoints"] = "nat"
    """New VPC: how the private subnets reach AWS. `nat` (default): a NAT gateway per zone (or one), so nodes reach
    the internet. `endpoints`: no NAT and no route out; nodes reach AWS through VPC endpoints gpufleet creates (an S3
    gateway endpoint and interface endpoints with private DNS for EC2, ECR API and registry, STS, and Auto Scaling with
    the cluster autoscaler), as the Amazon EKS User Guide's "Deploy private clusters with limited internet access"
    lists them (gpufleet/base/spec/platforms/eks_endpoints.py). Every image must then come from an ECR mirror in the stack's
    region (gpufleet:registry.mirror)."""
    vpc_id: Optional[str] = Field(default=None, pattern=r"^vpc-[0-9a-f]{8,17}$")
    """Existing network: the VPC of `subnets`."""
    subnets: list[EksSubnet] = []
    """Existing network: private subnets (with NAT egress) in at least 2 zones."""

    _check_cidr = field_validator("vpc_cidr")(lambda cls, v: _cidr(v))

    @field_validator("secondary_cidrs")
    @classmethod
    def _secondary(cls, v: list[str]) -> list[str]:
        for c in v:
            _cidr(c)
            prefix = ipaddress.ip_network(c).prefixlen
            # Amazon VPC: an IPv4 CIDR block (primary or secondary) is /16 to /28; at most 5 per VPC by default.
            if not 16 <= prefix <= 28:
                raise ValueError(f"{c}: a VPC CIDR block must be /16 to /28")
        if len(v) > 4:
            raise ValueError("at most 4 secondary CIDR blocks (a VPC holds 5 IPv4 blocks by default)")
        return v

    @model_validator(mode="after")
    def _one_mode(self) -> "EksNetworkSpec":
        if self.subnets or self.vpc_id:
            if self.availability_zones:
                raise ValueError("give either availabilityZones (new VPC) or vpcId + subnets (existing network), not both")
            if not (self.subnets and self.vpc_id):
                raise ValueError("an existing network needs both vpcId and subnets")
            if self.secondary_cidrs:
                raise ValueError("secondaryCidrs is for a new VPC; with an existing network, list the subnets nodes use")
            if self.egress != "nat":
                raise ValueError("egress: endpoints creates the VPC endpoints in a new VPC; with an existing network "
                                 "(vpcId + subnets), create the endpoints there yourself (docs/air-gapped.md) and "
                                 "leave egress unset")
            zones = {s.availability_zone for s in self.subnets}
        else:
            zones = set(self.availability_zones)
            if len(zones) != len(self.availability_zones):
                raise ValueError("availabilityZones has duplicates")
        if len(zones) < 2:
            raise ValueError(f"EKS needs subnets in at least 2 availability zones (got {len(zones)})")
        if self.egress == "endpoints" and self.single_nat_gateway:
            raise ValueError("singleNatGateway with egress: endpoints: that network has no NAT gateway; leave "
                             "singleNatGateway unset (allowed with endpoints: false)")
        return self

    @property
    def existing(self) -> bool:
        return bool(self.subnets)

    def zones(self) -> list[str]:
        if self.existing:
            return sorted({s.availability_zone for s in self.subnets})
        return list(self.availability_zones)


class EksEndpointSpec(Model):
    """Who reaches the Kubernetes API."""

    public_access_cidrs: list[str] = []
    """CIDRs allowed to reach a public endpoint; empty (default) keeps the endpoint private to the VPC, so
    `pulumi up` must then run from inside the VPC (or over VPN/peering)."""

    @field_validator("public_access_cidrs")
    @classmethod
    def _cidrs(cls, values: list[str]) -> list[str]:
        for v in values:
            _cidr(v)
        if cidrs.world_open(values):  # by what they cover, however spelled (gpufleet/base/cidrs.py)
            raise ValueError(f"{', '.join(values)}: {cidrs.WORLD_OPEN_HINT}")
        # gpufleet creates IPv4 clusters, whose public endpoint takes IPv4 blocks only: "You can't add IPv6 CIDR blocks
        # to the public endpoint of an IPv4 cluster ... The following CIDRs are invalid in publicAccessCidrs" (EKS User
        # Guide, cluster-endpoint.html, "CIDR blocks in the public endpoint (IPv4 cluster)").
        ipv6 = [v for v in values if ipaddress.ip_network(v).version == 6]
        if ipv6:
            raise ValueError(f"{', '.join(ipv6)}: an IPv6 block; gpufleet's EKS clusters are IPv4, and EKS refuses IPv6 "
                             "blocks on an IPv4 cluster's public endpoint (allowed: IPv4 CIDR blocks, e.g. your egress "
                             "address as 203.0.113.7/32)")
        if len(values) > EKS_PUBLIC_ACCESS_CIDRS_MAX:
            raise ValueError(f"{len(values)} CIDR blocks: EKS takes at most {EKS_PUBLIC_ACCESS_CIDRS_MAX} per cluster (a "
                             "quota that cannot be raised); merge adjacent blocks or use a private endpoint")
        return values


class EksAccessEntry(Model):
    """An IAM principal given Kubernetes access through an EKS access entry (API authentication mode)."""

    principal_arn: str = Field(pattern=r"^arn:aws[a-z-]*:iam::\d{12}:(role|user)/.+$")
    """IAM role or user ARN."""

    @field_validator("principal_arn")
    @classmethod
    def _one_principal(cls, v: str) -> str:
        # An access entry names one IAM principal (EKS API Reference, CreateAccessEntry `principalArn`: "The ARN of
        # the IAM principal"), and a role or user name takes only [\w+=,.@-], 1-64 characters (IAM API Reference,
        # CreateRole `RoleName` / CreateUser `UserName` pattern), so `role/ml-*` names no principal at all.
        name = v.rsplit("/", 1)[-1]
        if not re.fullmatch(r"[\w+=,.@-]{1,64}", name):
            raise ValueError(f"'{name}' is not an IAM role or user name (letters, digits and +=,.@_- only, 1-64 "
                             "characters; IAM API Reference, CreateRole RoleName): an access entry names one principal, "
                             "no wildcards; list each role")
        return v
    policy: Literal["cluster-admin", "admin", "edit", "view"] = "cluster-admin"
    """EKS access policy, cluster-wide: cluster-admin | admin | edit | view."""


class EksSystemPoolSpec(Model):
    """The on-demand CPU node group for operators, the autoscaler and other system pods."""

    instance_types: list[Annotated[str, Field(pattern=ids.EC2_INSTANCE_TYPE)]] = Field(default=["m7i.xlarge"], min_length=1)
    """EC2 instance types (CPU)."""
    min_nodes: int = Field(default=2, ge=1)
    """Minimum size; 2 keeps system pods available through a node's loss."""
    max_nodes: int = Field(default=4, ge=1)
    """Maximum size."""
    root_volume_gib: int = Field(default=50, ge=20, le=16384)
    """Encrypted gp3 root volume size."""

    @model_validator(mode="after")
    def _max_at_least_min(self) -> "EksSystemPoolSpec":
        if self.max_nodes < self.min_nodes:
            raise ValueError(f"maxNodes ({self.max_nodes}) must be >= minNodes ({self.min_nodes})")
        return self


class EksAutoscalerSpec(Model):
    """What scales the GPU pools: the cluster autoscaler (Helm, node groups discovered by tag) or Karpenter (Helm,
    a NodePool + EC2NodeClass per GPU pool instead of a managed node group). Both run on the system pool.
    `autoscaler: karpenter` is short for `autoscaler: {kind: karpenter}`."""

    kind: Literal["cluster-autoscaler", "karpenter"] = "cluster-autoscaler"
    """cluster-autoscaler: a managed node group per GPU pool. karpenter: Karpenter launches each GPU pool's nodes
    (NodePool + EC2NodeClass), diversifying over the pool's instance types and capacity types."""
    enabled: bool = True
    """Install it; without it GPU pools stay at their minimum size (cluster-autoscaler only)."""
    identity: Literal["pod-identity", "irsa"] = "pod-identity"
    """karpenter: how the controller gets its IAM role: EKS Pod Identity (the eks-pod-identity-agent add-on and a
    pod identity association; Karpenter's getting-started default) or IRSA (the cluster's OIDC provider)."""
    interruption_queue: bool = True
    """karpenter: the SQS interruption queue and its EventBridge rules (spot interruption, rebalance, instance
    state change, scheduled change, capacity reservation interruption), so Karpenter drains nodes before EC2
    takes them. Required when a pool is spot or reserved."""
    consolidate_after: str = Field(default="30m", json_schema_extra={"pattern": CONSOLIDATE_AFTER})
    """karpenter: how long a GPU node must be empty before Karpenter removes it (consolidation WhenEmpty only, so
    running jobs are never moved); long enough that a pod pulling a large CUDA image does not lose its node."""
    disruption_budget: str = Field(default="1", json_schema_extra={"pattern": KARPENTER_BUDGET_NODES})
    """karpenter: at most this many (or this percentage, up to 100%, of) a pool's nodes are disrupted at once."""
    expire_after: str = Field(default="Never", pattern=EXPIRE_AFTER)
    """karpenter: the GPU nodes' maximum lifetime (NodePool spec.template.spec.expireAfter). Default Never, not the
    CRD's 720h: expiration is forceful, and `karpenter.sh/do-not-disrupt` "does not block expiration"
    (karpenter.sh/docs/reference/annotations), so a 30-day expiry evicts whatever training job runs. Node images still
    move by drift, which waits for do-not-disrupt pods and the disruption budgets (docs/upgrades.md)."""
    disruption_windows: list[DisruptionWindowSpec] = Field(default_factory=list, max_length=49)
    """karpenter: scheduled budgets added to `disruptionBudget` on every GPU NodePool (the CRD allows 50 budgets);
    e.g. {schedule: "0 9 * * mon-fri", duration: 10h, nodes: "0"} keeps the nodes of a pool through the working day.
    Default: none."""
    expander: Literal["least-waste", "random", "most-pods", "price", "priority"] = "least-waste"
    """Which node group to grow when several fit."""
    scale_down_unneeded_time: str = Field(default="10m", pattern=r"^\d+[smh]$")
    """How long a node must be unneeded before it is removed (idle GPU nodes are expensive)."""
    scale_down_delay_after_add: str = Field(default="10m", pattern=r"^\d+[smh]$")
    """How long after a scale-up scale-down is considered again."""
    scale_down_utilization_threshold: float = Field(default=0.5, gt=0, le=1)
    """A node below this requested/allocatable ratio is a scale-down candidate."""
    gpu_scale_down: GpuScaleDownSpec = Field(default_factory=GpuScaleDownSpec)
    """cluster-autoscaler: scale-down settings of the GPU node groups (per group, as their autoscaling-options tags);
    the three settings above stay the cluster-wide flags, which the system group follows."""

    @field_validator("consolidate_after")
    @classmethod
    def _duration(cls, v: str) -> str:
        if not re.fullmatch(CONSOLIDATE_AFTER, v):
            raise ValueError(f"'{v}' is not a duration of hours, minutes and seconds such as \"30m\" or \"1h30m\" (Karpenter's "
                             "consolidateAfter has no days: write 24h for one)")
        return v

    @field_validator("disruption_budget")
    @classmethod
    def _budget(cls, v: str) -> str:
        if not re.fullmatch(KARPENTER_BUDGET_NODES, v):
            raise ValueError(f"'{v}' is neither a node count such as \"1\" nor a percentage of at most 100% such as "
                             "\"10%\" (Karpenter's NodePool refuses it: disruption.budgets[].nodes)")
        return v


class FsxDataRepositorySpec(Model):
    """A data repository association: a directory of the shared file system linked to an S3 prefix."""

    s3_path: str = Field(pattern=r"^s3://[a-z0-9.-]{3,63}(/.*)?$")
    """The S3 bucket (and prefix) linked, e.g. s3://my-datasets/llama."""
    file_system_path: str = Field(pattern=r"^/[^\s]*$")
    """Directory of the file system it appears under, e.g. /data (awslabs/ai-on-eks uses /data)."""
    auto_import: bool = True
    """Files created, changed or deleted in S3 show up in the file system (auto_import_policy NEW, CHANGED, DELETED)."""
    auto_export: bool = True
    """Files created, changed or deleted in the file system are written back to S3 (auto_export_policy)."""


class FsxSharedFileSystemSpec(Model):
    """One FSx for Lustre file system gpufleet creates for the whole cluster (static provisioning: a
    PersistentVolume PVCs bind by name), optionally linked to S3 by data repository associations."""

    storage_capacity_gib: int = Field(default=2400, ge=1200)
    """Size; PERSISTENT_2 takes 1200 or a multiple of 2400 GiB (FSx for Lustre User Guide, storage capacity)."""
    data_repository_associations: list[FsxDataRepositorySpec] = Field(default=[], max_length=8)
    """S3 prefixes linked into the file system (at most 8 per file system); default: none."""

    @field_validator("storage_capacity_gib")
    @classmethod
    def _capacity(cls, v: int) -> int:
        if v != 1200 and v % 2400:
            raise ValueError(f"PERSISTENT_2 file systems hold 1200 GiB or a multiple of 2400 GiB (got {v})")
        return v


class FsxLustreSpec(Model):
    """FSx for Lustre for datasets and checkpoints: the CSI add-on and a dynamically provisioning StorageClass."""

    storage_class_name: str = Field(default="fsx-lustre", pattern=ids.DNS_SUBDOMAIN, max_length=253)
    """StorageClass name PVCs ask for."""
    deployment_type: Literal["PERSISTENT_2", "PERSISTENT_1", "SCRATCH_2"] = "PERSISTENT_2"
    """FSx deployment type; PERSISTENT_2 survives file server failures."""
    per_unit_storage_throughput: Optional[int] = 250
    """PERSISTENT_*: MB/s per TiB (PERSISTENT_2: 125 | 250 | 500 | 1000)."""
    s3_import_path: Optional[str] = Field(default=None, pattern=r"^s3://[a-z0-9.-]{3,63}(/.*)?$")
    """Link the file system to an S3 prefix (SCRATCH_2 or PERSISTENT_1 only)."""
    s3_export_path: Optional[str] = Field(default=None, pattern=r"^s3://[a-z0-9.-]{3,63}(/.*)?$")
    """Where `hsm_archive` exports go (needs s3ImportPath)."""
    availability_zone: Optional[str] = None
    """Zone of the file systems; default: the zone of the EFA pools, else the network's first zone."""
    shared: Optional[FsxSharedFileSystemSpec] = None
    """Also create one shared PERSISTENT_2 file system (a PersistentVolume named after the StorageClass + `-shared`),
    linked to S3 by data repository associations, as awslabs/ai-on-eks infra/base/terraform/fsx-for-lustre.tf does;
    default: none, only the dynamically provisioning StorageClass."""
    reclaim_policy: Literal["Retain", "Delete"] = "Retain"
    """What happens to a file system when its PVC is deleted; default Retain keeps datasets and
    checkpoints (delete unused file systems yourself: they bill while they exist)."""

    @model_validator(mode="after")
    def _combinations(self) -> "FsxLustreSpec":
        if self.s3_import_path and self.deployment_type == "PERSISTENT_2":
            raise ValueError("s3ImportPath needs deploymentType SCRATCH_2 or PERSISTENT_1 (PERSISTENT_2 links S3 through data repository associations)")
        if self.s3_export_path and not self.s3_import_path:
            raise ValueError("s3ExportPath needs s3ImportPath")
        if self.deployment_type == "SCRATCH_2" and self.per_unit_storage_throughput is not None and "per_unit_storage_throughput" in self.model_fields_set:
            raise ValueError("perUnitStorageThroughput applies to PERSISTENT_* deployment types only")
        if self.shared is not None and self.deployment_type != "PERSISTENT_2":
            # Data repository associations need PERSISTENT_2 (FSx for Lustre User Guide, "Linking your file system to
            # an Amazon S3 bucket"); gpufleet creates the shared file system with the StorageClass's deployment type.
            raise ValueError("shared needs deploymentType PERSISTENT_2 (data repository associations)")
        allowed = {"PERSISTENT_2": (125, 250, 500, 1000), "PERSISTENT_1": (50, 100, 200)}.get(self.deployment_type)
        if allowed and self.per_unit_storage_throughput not in allowed:
            raise ValueError(f"perUnitStorageThroughput {self.per_unit_storage_throughput} is not allowed for {self.deployment_type} (allowed: {', '.join(map(str, allowed))})")
        return self


class EksStorageSpec(Model):
    """AWS storage: EBS always (the CSI add-on and an encrypted gp3 default StorageClass), FSx for Lustre if asked."""

    fsx_lustre: Optional[FsxLustreSpec] = None
    """FSx for Lustre; default: none."""


def _or_kind(schema: dict) -> None:
    """The field's JSON Schema: the autoscaler block, or just its kind as a string."""
    ref = {k: schema.pop(k) for k in ("$ref", "allOf") if k in schema}
    schema["anyOf"] = [ref, {"type": "string", "enum": ["cluster-autoscaler", "karpenter"]}]


class EksSpec(Model):
    """An Amazon EKS cluster (region from `aws:region`)."""

    network: EksNetworkSpec
    """New VPC or existing subnets."""
    endpoint: EksEndpointSpec = EksEndpointSpec()
    """API endpoint access; default: private only."""
    kms_key_arn: Optional[str] = Field(default=None, pattern=r"^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key/.+$")
    """KMS key for envelope encryption of Secrets; default: gpufleet creates one with rotation on."""
    log_types: list[Literal["api", "audit", "authenticator", "controllerManager", "scheduler"]] = ["api", "audit", "authenticator"]
    """Control-plane log types sent to CloudWatch."""
    log_retention_days: int = Field(default=90, ge=1)
    """CloudWatch retention of the control-plane logs."""
    access_entries: list[EksAccessEntry] = []
    """IAM principals given cluster access (API authentication mode; no aws-auth ConfigMap). While
    bootstrapCreatorAdmin is true, do not list the identity that runs `pulumi up`: EKS already made its entry
    and CreateAccessEntry fails with ResourceInUseException (terraform-aws-modules/terraform-aws-eks#2968)."""

    @field_validator("access_entries")
    @classmethod
    def _one_entry_per_principal(cls, v: list[EksAccessEntry]) -> list[EksAccessEntry]:
        # EKS: "An IAM principal can't be included in more than one access entry" (User Guide, "Create access
        # entries"). The entry's resource is named after the role/user name (last ARN segment), so two principals
        # with one name (different paths, or a role and a user) would also collide in Pulumi (duplicate URN).
        arns = [e.principal_arn for e in v]
        dup_arns = sorted({a for a in arns if arns.count(a) > 1})
        if dup_arns:
            raise ValueError(f"{', '.join(dup_arns)}: EKS allows one access entry per IAM principal; merge them")
        names = [a.rsplit("/", 1)[-1] for a in arns]
        dup_names = sorted({n for n in names if names.count(n) > 1})
        if dup_names:
            clash = ", ".join(a for a in arns if a.rsplit("/", 1)[-1] in dup_names)
            raise ValueError(f"{clash}: principals named alike ({', '.join(dup_names)}) would get the same resource name; "
                             "give each access entry a principal with its own name")
        return v
    bootstrap_creator_admin: bool = True
    """Give the identity running `pulumi up` cluster-admin (needed to install add-ons unless an access entry covers it).
    EKS fixes this at creation: changing it later replaces the cluster."""
    system_pool: EksSystemPoolSpec = EksSystemPoolSpec()
    """The CPU node group for system pods."""
    # `autoscaler: karpenter` is short for `{kind: karpenter}` (the validator below); the JSON Schema says so too.
    autoscaler: EksAutoscalerSpec = Field(default=EksAutoscalerSpec(), json_schema_extra=lambda s: _or_kind(s))
    """What scales GPU pools: cluster-autoscaler (default) or karpenter, and their settings."""

    @field_validator("autoscaler", mode="before")
    @classmethod
    def _autoscaler_shorthand(cls, v):
        return {"kind": v} if isinstance(v, str) else v
    storage: EksStorageSpec = EksStorageSpec()
    """EBS (always) and FSx for Lustre (optional)."""


# ---- pool facts the checks of platform eks read (eks_checks.py, EksKeys.checks) ------------------------


def pool_instance_types(pool) -> list[str]:
    """The pool's EC2 instance types: `instanceType`, or `instanceTypes`."""
    return [pool.instance_type] if pool.instance_type else list(pool.instance_types)


def reserved_zone(pool) -> Optional[str]:
    """The zone of the reservation a reserved pool consumes (None when it does not name one)."""
    r = getattr(pool, "reservation", None)
    return r.zone if pool.capacity == "reserved" and r is not None else None


def pool_zone(pool, eks: EksSpec) -> str:
    """The one zone an EFA pool runs in: its availabilityZone, else its reservation's, else the zone of its
    subnets, else the first."""
    if pool.availability_zone:
        return pool.availability_zone
    if reserved_zone(pool):
        return reserved_zone(pool)
    by_id = {s.id: s.availability_zone for s in eks.network.subnets}
    zones = sorted({by_id[s] for s in pool.subnet_ids if s in by_id})
    return zones[0] if zones else eks.network.zones()[0]


def pool_local_storage(pool) -> str:
    """raid0 | none: the pool's choice, else raid0 when every instance type has an instance store."""
    if pool.local_storage is not None:
        return pool.local_storage
    types = pool_instance_types(pool)
    return "raid0" if types and all(aws_catalog.instance_store(t) for t in types) else "none"


def pool_efa_secondary(pool) -> str:
    """Interface type on network cards 1.. of an EFA pool: the pool's efaOnly, else the catalog's choice."""
    if pool.efa_only is not None:
        return "efa-only" if pool.efa_only else "efa"
    return aws_catalog.instance_type(pool_instance_types(pool)[0]).efa_secondary
