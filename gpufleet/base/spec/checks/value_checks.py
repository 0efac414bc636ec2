"""Values the cloud and Kubernetes APIs accept, checked where a stack sets them.

- Node labels and taints of every pool, on every platform: Kubernetes syntax and length (k8s_syntax.py), taints
  unique by key and effect; where the platform's nodes register their labels through the kubelet's --node-labels
  (KeyTraits.kubelet_labels), the kubelet's own-label rule (it refuses kubernetes.io / k8s.io keys outside its allowed
  set; k3s words its own in k3s_label_checks.py), and the label prefixes the platform reserves
  (KeyTraits.reserved_label_prefixes).
- PriorityClass names: `system-` is reserved for Kubernetes' own classes.
(Each cloud's own limits, such as EKS's tags per node group and CloudWatch log retention, are among the platform's
checks: gpufleet/base/spec/platforms/eks_limits.py.)
"""

from __future__ import annotations

from typing import Any

from gpufleet.base import labels as L
from gpufleet.base import platforms
from gpufleet.base.spec import k8s_syntax
from gpufleet.base.spec.errors import Problem

NS = "gpufleet"

# "PriorityClass names ... cannot be prefixed with system-" (kubernetes.io/docs/concepts/scheduling-eviction/
# pod-priority-preemption/#priorityclass; the API server refuses such names except its two built-in classes).
PRIORITY_CLASS_RESERVED_PREFIX = "system-"


def check(stack: str, spec: Any, config: dict) -> list[Problem]:
    problems: list[Problem] = []
    for i, pool in enumerate(spec.node_pools):
        problems += _labels_and_taints(stack, f"{NS}:nodePools[{i}]", pool, spec.cluster.platform)
    pcs = spec.addons.priority_classes
    if pcs.enabled:
        for j, pc in enumerate(pcs.classes):
            if pc.name.startswith(PRIORITY_CLASS_RESERVED_PREFIX):
                problems.append(Problem(stack, f"{NS}:addons.priorityClasses.classes[{j}].name", "the 'system-' prefix is reserved "
                                        "for Kubernetes' own PriorityClasses; choose another name, e.g. platform-critical", pc.name))
    return problems


def _labels_and_taints(stack: str, at: str, pool: Any, platform: str) -> list[Problem]:
    problems = []
    keys = platforms.get(platform).keys
    # The platform's own length limits (EKS: eks_checks.node_group_limit_checks) already report keys and values over
    # 63 characters.
    own_long = (lambda text: keys.long_labels_reported and len(text) > k8s_syntax.NAME_MAX)
    for key, value in sorted(pool.labels.items()):
        why = None if own_long(key) else k8s_syntax.qualified_name(key)
        if why:
            problems.append(Problem(stack, f"{at}.labels", f"not a Kubernetes label key: {why}", key))
        why = None if own_long(value) else k8s_syntax.label_value(value)
        if why:
            problems.append(Problem(stack, f"{at}.labels.{key}", f"not a Kubernetes label value: {why}", value))
        if keys.kubelet_labels and not L.kubelet_may_set(key):
            problems.append(Problem(stack, f"{at}.labels", f"{platform} nodes register their labels through the kubelet, which "
                                    "refuses kubernetes.io / k8s.io keys except kubelet.kubernetes.io/*, node.kubernetes.io/*, "
                                    "topology.kubernetes.io/region|zone, kubernetes.io/arch|os|hostname; use your own prefix, "
                                    "e.g. example.com/role", key))
        if keys.reserved_label_prefixes and key.startswith(keys.reserved_label_prefixes):
            problems.append(Problem(stack, f"{at}.labels", f"{platform.upper()} reserves the label prefixes "
                                    f"{', '.join(keys.reserved_label_prefixes)}; use your own prefix", key))
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
        why = None if own_long(taint.key) else k8s_syntax.qualified_name(taint.key)
        if why:
            problems.append(Problem(stack, f"{at}.taints[{j}].key", f"not a Kubernetes taint key: {why}", taint.key))
        why = None if own_long(taint.value) else k8s_syntax.label_value(taint.value)
        if why:
            problems.append(Problem(stack, f"{at}.taints[{j}].value", f"not a Kubernetes taint value: {why}", taint.value))
    return problems
