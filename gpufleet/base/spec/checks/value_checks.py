"""Values the cloud and Kubernetes APIs accept, checked where a stack sets them (called from `_cross_checks`).

- Node labels and taints of every pool, on every platform: Kubernetes syntax and length (k8s_syntax.py), taints
  unique by key and effect; on EKS and GKE also the kubelet's own-label rule (both clouds register a node's labels
  through the kubelet's --node-labels, which refuses kubernetes.io / k8s.io keys outside its allowed set; k3s has its
  own check in k3s_label_checks.py) and EKS's reserved prefixes.
- GKE exemptions travel as node labels (`gpufleet.io/exempt-<policy>: <reason>`): the reason must be a label value.
- CloudWatch log retention: the fixed set of days PutRetentionPolicy takes.
- PriorityClass names: `system-` is reserved for Kubernetes' own classes.
- AWS tags: at most 50 per node group and per Auto Scaling group, the autoscaler's node-template tags included
  (cluster autoscaler); a Karpenter pool has no node group, and its NodePool template takes at most 100 labels.
"""

from __future__ import annotations

from typing import Any

from gpufleet.base import labels as L
from gpufleet.base import sharing
from gpufleet.base.spec import k8s_syntax
from gpufleet.base.spec.errors import Problem

NS = "gpufleet"

# CloudWatch Logs PutRetentionPolicy `retentionInDays`: "Possible values are: 1, 3, 5, 7, 14, 30, 60, 90, 120,
# 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, and 3653"
# (docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_PutRetentionPolicy.html).
LOG_RETENTION_DAYS = (1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653)

# EKS CreateNodegroup refuses labels under these prefixes ("Label cannot contain reserved prefixes"; EKS User
# Guide, "Managed node groups: labels"); the kubelet rule (labels.kubelet_may_set) covers the Kubernetes ones.
EKS_RESERVED_LABEL_PREFIXES = ("eks.amazonaws.com/",)

# "A user-defined resource tag ... maximum number of tags per resource: 50" (AWS General Reference, "Tagging
# your AWS resources: tag naming limits and requirements"; EKS TagResource and EC2 Auto Scaling CreateOrUpdateTags
# both enforce it). EKS itself tags a managed node group's Auto Scaling group with eks:cluster-name,
# eks:nodegroup-name, k8s.io/cluster-autoscaler/enabled, k8s.io/cluster-autoscaler/<cluster> and
# kubernetes.io/cluster/<cluster> (EKS User Guide, "Managed node groups: resources created").
AWS_TAG_LIMIT = 50
EKS_OWN_ASG_TAGS = 5
KARPENTER_TEMPLATE_LABELS_MAX = 100

# "PriorityClass names ... cannot be prefixed with system-" (kubernetes.io/docs/concepts/scheduling-eviction/
# pod-priority-preemption/#priorityclass; the API server refuses such names except its two built-in classes).
PRIORITY_CLASS_RESERVED_PREFIX = "system-"


def check(stack: str, spec: Any) -> list[Problem]:
    platform = spec.cluster.platform
    problems: list[Problem] = []
    for i, pool in enumerate(spec.node_pools):
        at = f"{NS}:nodePools[{i}]"
        problems += _labels_and_taints(stack, at, pool, platform)
        if platform == "eks" and spec.cluster.eks.autoscaler.kind == "karpenter":
            problems += _karpenter_label_count(stack, at, pool)
        elif platform == "eks":
            problems += _eks_tag_count(stack, at, pool)
    if platform == "eks":
        days = spec.cluster.eks.log_retention_days
        if days not in LOG_RETENTION_DAYS:
            problems.append(Problem(stack, f"{NS}:cluster.eks.logRetentionDays", "CloudWatch Logs takes only these retention "
                                    f"periods (days): {', '.join(map(str, LOG_RETENTION_DAYS))}", days))
    pcs = spec.addons.priority_classes
    if pcs.enabled:
        for j, pc in enumerate(pcs.classes):
            if pc.name.startswith(PRIORITY_CLASS_RESERVED_PREFIX):
                problems.append(Problem(stack, f"{NS}:addons.priorityClasses.classes[{j}].name", "the 'system-' prefix is reserved "
                                        "for Kubernetes' own PriorityClasses; choose another name, e.g. platform-critical", pc.name))
    return problems


def _labels_and_taints(stack: str, at: str, pool: Any, platform: str) -> list[Problem]:
    problems = []
    # EKS's own length limits (eks_checks.node_group_limit_checks) already report keys and values over 63 characters.
    eks_long = (lambda text: platform == "eks" and len(text) > k8s_syntax.NAME_MAX)
    for key, value in sorted(pool.labels.items()):
        why = None if eks_long(key) else k8s_syntax.qualified_name(key)
        if why:
            problems.append(Problem(stack, f"{at}.labels", f"not a Kubernetes label key: {why}", key))
        why = None if eks_long(value) else k8s_syntax.label_value(value)
        if why:
            problems.append(Problem(stack, f"{at}.labels.{key}", f"not a Kubernetes label value: {why}", value))
        if platform in ("eks", "gke") and not L.kubelet_may_set(key):
            problems.append(Problem(stack, f"{at}.labels", f"{platform} nodes register their labels through the kubelet, which "
                                    "refuses kubernetes.io / k8s.io keys except kubelet.kubernetes.io/*, node.kubernetes.io/*, "
                                    "topology.kubernetes.io/region|zone, kubernetes.io/arch|os|hostname; use your own prefix, "
                                    "e.g. example.com/role", key))
        if platform == "eks" and key.startswith(EKS_RESERVED_LABEL_PREFIXES):
            problems.append(Problem(stack, f"{at}.labels", f"EKS reserves the label prefixes {', '.join(EKS_RESERVED_LABEL_PREFIXES)}; "
                                    "use your own prefix", key))
    seen: dict[tuple[str, str], int] = {}
    for j, taint in enumerate(pool.taints):
        # "taints must be unique by key and effect pair": the API server refuses such a Node (kubernetes
        # pkg/apis/core/validation/validation.go validateNodeTaints), so the node never registers; Karpenter's NodePool
        # refuses it too (kubernetes-sigs/karpenter pkg/apis/v1/nodeclaim_validation.go validateTaintsField).
        first = seen.setdefault((taint.key, taint.effect), j)
        if first != j:
            problems.append(Problem(stack, f"{at}.taints[{j}]", f"a second {taint.effect} taint with key '{taint.key}' (also "
                                    f"taints[{first}]): a node's taints must be unique by key and effect, or Kubernetes "
                                    "refuses the node; keep one (a taint has one value)", f"{taint.key}={taint.value}:{taint.effect}"))
        why = None if eks_long(taint.key) else k8s_syntax.qualified_name(taint.key)
        if why:
            problems.append(Problem(stack, f"{at}.taints[{j}].key", f"not a Kubernetes taint key: {why}", taint.key))
        why = None if eks_long(taint.value) else k8s_syntax.label_value(taint.value)
        if why:
            problems.append(Problem(stack, f"{at}.taints[{j}].value", f"not a Kubernetes taint value: {why}", taint.value))
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
