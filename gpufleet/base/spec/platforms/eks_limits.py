"""What AWS and EKS accept of an EKS stack (part of EksKeys.checks): the VPC's address plan, zones and the KMS key
in the stack's region, node group names, tags and labels, CloudWatch log retention.

Address plan, new VPC: components/eks/network.py carves the VPC into eighths (one private subnet per zone, prefix
+ 3) and cuts the last eighth into 64ths (one public subnet per zone, prefix + 6). "The allowed block size is
between a /16 netmask (65,536 IP addresses) and /28 netmask (16 IP addresses)" for a VPC and for each subnet
(Amazon VPC User Guide, "VPC CIDR blocks" and "Subnet CIDR blocks"), so the VPC must be /16 to /22, and the carving
has room for 7 zones.
Region: the region is `aws:region`. An availability zone name is its region plus one letter (us-east-1a; EC2 User
Guide, "Regions and Zones": "the code for Availability Zone is its Region code followed by a letter identifier"),
and a KMS key ARN names its region (arn:aws:kms:<region>:<account>:key/<id>); EKS can only use a KMS key in the
cluster's region (EKS User Guide, "Encrypt Kubernetes secrets with KMS": "The KMS key must be ... in the same
Region as the cluster").
Names: EKS managed node groups get Pulumi's auto-name `<cluster>-pool-<pool>-ng-<7 random characters>`; EKS takes
node group names of at most 63 characters, letters, digits, '-' and '_' (EKS API CreateNodegroup, nodegroupName;
EKS console "Node group name").
Tags: at most 50 per node group and per Auto Scaling group, the autoscaler's node-template tags included (cluster
autoscaler); a Karpenter pool has no node group, and its NodePool template takes at most 100 labels.
"""

from __future__ import annotations

import ipaddress
from typing import Any, Optional

from gpufleet.base import labels as L
from gpufleet.base import sharing
from gpufleet.base.spec.checks.region_checks import aws_zone_region
from gpufleet.base.spec.errors import Problem

NS = "gpufleet"
AWS_SUBNET_PREFIXES = (16, 28)
EKS_PRIVATE_SPLIT = 3  # private subnets: eighths of the VPC
EKS_PUBLIC_SPLIT = 6  # public subnets: 64ths (eighths of the last eighth)
EKS_MAX_ZONES = 7
EKS_NODE_GROUP_NAME_MAX = 63
PULUMI_AUTONAME_SUFFIX = 8  # '-' and 7 random characters (pulumi-aws: AutoName("nodeGroupName", ..., "-"))
# CloudWatch Logs PutRetentionPolicy `retentionInDays`: "Possible values are: 1, 3, 5, 7, 14, 30, 60, 90, 120,
# 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, and 3653"
# (docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_PutRetentionPolicy.html).
LOG_RETENTION_DAYS = (1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653)

# "A user-defined resource tag ... maximum number of tags per resource: 50" (AWS General Reference, "Tagging
# your AWS resources: tag naming limits and requirements"; EKS TagResource and EC2 Auto Scaling CreateOrUpdateTags
# both enforce it). EKS itself tags a managed node group's Auto Scaling group with eks:cluster-name,
# eks:nodegroup-name, k8s.io/cluster-autoscaler/enabled, k8s.io/cluster-autoscaler/<cluster> and
# kubernetes.io/cluster/<cluster> (EKS User Guide, "Managed node groups: resources created").
AWS_TAG_LIMIT = 50
EKS_OWN_ASG_TAGS = 5
KARPENTER_TEMPLATE_LABELS_MAX = 100



def check(stack: str, spec: Any, config: dict) -> list[Problem]:
    """The address plan, the region, node group names and tags, log retention."""
    problems = _network(stack, spec) + _region(stack, spec, config.get("aws:region"))
    problems += _names(stack, spec)
    for i, pool in enumerate(spec.node_pools):
        at = f"{NS}:nodePools[{i}]"
        if spec.cluster.eks.autoscaler.kind == "karpenter":
            problems += _karpenter_label_count(stack, at, pool)
        else:
            problems += _eks_tag_count(stack, at, pool)
    days = spec.cluster.eks.log_retention_days
    if days not in LOG_RETENTION_DAYS:
        problems.append(Problem(stack, f"{NS}:cluster.eks.logRetentionDays", "CloudWatch Logs takes only these retention "
                                f"periods (days): {', '.join(map(str, LOG_RETENTION_DAYS))}", days))
    return problems


def _network(stack: str, spec: Any) -> list[Problem]:
    net = spec.cluster.eks.network
    if net.existing:
        return []
    at = f"{NS}:cluster.eks.network.vpcCidr"
    cidr = ipaddress.ip_network(net.vpc_cidr)
    lo, hi = AWS_SUBNET_PREFIXES
    problems = []
    if cidr.version != 4:
        return [Problem(stack, at, "a VPC's primary CIDR block is IPv4, e.g. 10.0.0.0/16", net.vpc_cidr)]
    private, public = cidr.prefixlen + EKS_PRIVATE_SPLIT, cidr.prefixlen + EKS_PUBLIC_SPLIT
    if not (lo <= private and public <= hi) or not lo <= cidr.prefixlen <= hi:
        problems.append(Problem(stack, at, f"gpufleet cuts private /{private} and public /{public} subnets from it; AWS takes "
                                f"VPCs and subnets of /{lo} to /{hi} only, so use a /{lo} to /{hi - EKS_PUBLIC_SPLIT} VPC, "
                                "e.g. 10.0.0.0/16", net.vpc_cidr))
    if len(net.availability_zones) > EKS_MAX_ZONES:
        problems.append(Problem(stack, f"{NS}:cluster.eks.network.availabilityZones", f"a new VPC has room for "
                                f"{EKS_MAX_ZONES} zones (one eighth of vpcCidr per zone, the last eighth for public subnets)",
                                len(net.availability_zones)))
    return problems


def _region(stack: str, spec: Any, region: Optional[str]) -> list[Problem]:
    if not region:
        return []  # eks_checks reports the missing aws:region
    eks = spec.cluster.eks
    problems = []

    def zone(path: str, value: Optional[str]) -> None:
        if value and aws_zone_region(value) != region:
            problems.append(Problem(stack, path, f"not an availability zone of aws:region {region} (zones there are "
                                    f"{region}a, {region}b, ...)", value))

    for i, z in enumerate(eks.network.availability_zones):
        zone(f"{NS}:cluster.eks.network.availabilityZones[{i}]", z)
    for i, s in enumerate(eks.network.subnets):
        zone(f"{NS}:cluster.eks.network.subnets[{i}].availabilityZone", s.availability_zone)
    for i, pool in enumerate(spec.node_pools):
        zone(f"{NS}:nodePools[{i}].availabilityZone", pool.availability_zone)
    if eks.storage.fsx_lustre:
        zone(f"{NS}:cluster.eks.storage.fsxLustre.availabilityZone", eks.storage.fsx_lustre.availability_zone)
    if eks.kms_key_arn:
        key_region = eks.kms_key_arn.split(":")[3]
        if key_region != region:
            problems.append(Problem(stack, f"{NS}:cluster.eks.kmsKeyArn", f"the key is in {key_region}, but EKS can only use a "
                                    f"KMS key in the cluster's region (aws:region {region})", eks.kms_key_arn))
    return problems



def eks_node_group_name_length(cluster: str, pool: str) -> int:
    """Length of the EKS node group name Pulumi generates for a pool (components/eks/platform.py names the
    component `<cluster>-pool-<pool>`, components/eks/node_group.py its node group `<component>-ng`)."""
    return len(f"{cluster}-pool-{pool}-ng") + PULUMI_AUTONAME_SUFFIX


def _names(stack: str, spec: Any) -> list[Problem]:
    cluster = spec.cluster.name or stack
    problems = []
    for i, pool in enumerate(spec.node_pools):
        length = eks_node_group_name_length(cluster, pool.name)
        if length > EKS_NODE_GROUP_NAME_MAX:
            room = EKS_NODE_GROUP_NAME_MAX - eks_node_group_name_length(cluster, "")
            problems.append(Problem(stack, f"{NS}:nodePools[{i}].name", f"the EKS node group would be named "
                                    f"{cluster}-pool-{pool.name}-ng-xxxxxxx ({length} characters; EKS takes at most "
                                    f"{EKS_NODE_GROUP_NAME_MAX}): with cluster name '{cluster}' a pool name has at most "
                                    f"{room} characters", pool.name))
    return problems


def _own_eks_labels(pool: Any) -> set[str]:
    """The labels gpufleet itself gives an EKS pool's nodes (gpufleet/base/node_labels.py pool_labels, and
    components/eks/platform.py): pool, GPU, capacity type and model, the sharing, MIG and EFA labels where they apply."""
    own = {L.POOL_LABEL, L.GPU_NODE_LABEL, L.CAPACITY_TYPE_LABEL, L.GPU_MODEL_LABEL}
    if sharing.shares(pool):
        own.add(L.DEVICE_PLUGIN_CONFIG_LABEL)
    if pool.sharing.mode == "mig":
        own.add(L.MIG_CONFIG_LABEL)
    if pool.rdma:
        own |= {L.RDMA_NODE_LABEL, L.EFA_LABEL}
    return own


def _karpenter_label_count(stack: str, at: str, pool: Any) -> list[Problem]:
    """A Karpenter pool has no node group to tag (the autoscaler's 50-tag limit does not apply); its labels go into the
    NodePool's template, which takes at most 100 (karpenter.sh_nodepools.yaml of the pinned chart, versions.KARPENTER:
    spec.template.metadata.labels maxProperties 100)."""
    own = _own_eks_labels(pool)
    if pool.ami.startswith("bottlerocket"):
        own.add(L.GPU_OPERATOR_DEVICE_PLUGIN_DEPLOY_LABEL)
    count = len(own | set(pool.labels))
    if count <= KARPENTER_TEMPLATE_LABELS_MAX:
        return []
    return [Problem(stack, f"{at}.labels", f"the pool's Karpenter NodePool would carry {count} labels in its template, over "
                    f"the {KARPENTER_TEMPLATE_LABELS_MAX} its CRD takes (gpufleet's own labels included); drop labels",
                    len(pool.labels))]


def eks_node_group_tags(pool: Any) -> tuple[int, int]:
    """(tags on the node group, tags on its Auto Scaling group) gpufleet's EKS node group will carry: the two
    autoscaler discovery tags, a node-template tag per node label, taint and extended resource, the exemption
    tags; the ASG gets the node-template tags plus EKS's own (components/eks/node_group.py autoscaler_tags)."""
    own_labels = _own_eks_labels(pool) | {L.EKS_CA_GPU_LABEL}
    node_labels = own_labels | set(pool.labels)
    taints = {L.GPU_TAINT_KEY} | ({L.SPOT_TAINT_KEY} if pool.capacity == "spot" else set()) | {t.key for t in pool.taints}
    resources = 2 if pool.rdma else 1  # nvidia.com/gpu, and vpc.amazonaws.com/efa on EFA pools
    template = len(node_labels) + len(taints) + resources
    return 2 + template + len(pool.exemptions), EKS_OWN_ASG_TAGS + template


def _eks_tag_count(stack: str, at: str, pool: Any) -> list[Problem]:
    group, asg = eks_node_group_tags(pool)
    if max(group, asg) <= AWS_TAG_LIMIT:
        return []
    where, count = ("node group", group) if group > AWS_TAG_LIMIT else ("Auto Scaling group", asg)
    return [Problem(stack, f"{at}.labels", f"the pool's {where} would carry {count} tags, over AWS's limit of {AWS_TAG_LIMIT} "
                    "(the cluster autoscaler needs a node-template tag per label and taint); drop labels or taints",
                    len(pool.labels))]
