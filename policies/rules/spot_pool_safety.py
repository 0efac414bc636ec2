"""spot-pool-safety: spot GPU pools are labelled and tainted as spot, and interruptions are handled.

- Label: gpufleet.io/capacity-type=spot, or the label the platform puts on spot nodes itself
  (EKS `eks.amazonaws.com/capacityType: SPOT`, GKE `cloud.google.com/gke-spot` / `gke-preemptible`).
- Taint: gpufleet.io/spot or `cloud.google.com/gke-spot` with NoSchedule/NoExecute, so only
  interruption-tolerant work lands there (platforms add no spot taint).
- AKS Spot pools (Azure Native `scaleSetPriority: Spot`, classic pulumi-azure `priority: Spot`): AKS's own
  `kubernetes.azure.com/scalesetpriority=spot:NoSchedule` taint counts, and the eviction policy
  (`scaleSetEvictionPolicy` / `evictionPolicy`) must be Delete (articles/aks/spot-node-pool.md: deallocated nodes count
  against the quota and "can cause issues with cluster scaling or upgrading"); the autoscaler replaces evicted nodes.
- Interruption handling: EKS managed node groups drain on rebalance recommendations themselves (EKS user
  guide, "Managed node groups: Spot"), GKE drains spot nodes with graceful node shutdown; self-managed
  spot Auto Scaling groups need aws-node-termination-handler or Karpenter in the stack.
- Karpenter NodePools allowing `karpenter.sh/capacity-type: spot`: the same label and taint on the node template,
  and Karpenter's interruption queue: a karpenter release whose `settings.interruptionQueue` names the SQS queue
  its EventBridge rules feed (without it Karpenter never hears of an interruption and pods die with the node;
  chart values, ../shared/reference/karpenter). Karpenter replaces aws-node-termination-handler there.
Diversification over instance types is advisory: policy `spot-pool-diversified`.
"""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, StackValidationPolicy

from gpufleet.base import labels
from gpufleet.base.catalog import aws
from gpufleet.policies import inputs as I

NAME = "spot-pool-safety"


def spot_taint_keys() -> frozenset:
    """gpufleet's spot taint, and every platform's own (its pool types' `spot_taint_keys`)."""
    return frozenset((labels.SPOT_TAINT_KEY, *(k for _, kind in I.every_pool_type() for k in kind.spot_taint_keys)))


def _pool_problems(pool: I.Pool, spot_taints: frozenset) -> list[str]:
    out = []
    node_labels = pool.labels()  # absent is fine: the platform labels spot nodes itself
    if node_labels.get(labels.CAPACITY_TYPE_LABEL) not in (None, "spot"):
        out.append(f"label {labels.CAPACITY_TYPE_LABEL} is '{node_labels[labels.CAPACITY_TYPE_LABEL]}' on a spot pool")
    taints = [t for t in pool.taints() if t[0] in spot_taints and t[2] in ("NoSchedule", "NoExecute")]
    if not taints:
        out.append(
            f"no spot taint: add {{key: {labels.SPOT_TAINT_KEY}, value: \"true\", effect: NoSchedule}} so only "
            f"interruption-tolerant pods land (nodes are selectable by {labels.CAPACITY_TYPE_LABEL}=spot or "
            f"{pool.kind.spot_label})"
        )
    return out + pool.kind.spot_problems(pool.inputs)


def _asg_spot_gpu(r) -> bool:
    """A self-managed ASG buying spot GPU instances (mixed instances policy)."""
    policy = I.get(r.props, "mixedInstancesPolicy")
    dist = I.get(policy, "instancesDistribution")
    on_demand_pct = I.number(I.get(dist, "onDemandPercentageAboveBaseCapacity"))
    types = [I.text(I.get(o, "instanceType")) or "" for o in I.items(I.get(policy, "launchTemplate", "overrides"))]
    return bool(I.mapping(policy)) and on_demand_pct is not None and on_demand_pct < 100 and any(aws.is_gpu_type(t) for t in types)


def _karpenter_spot(np_, queues: list[str], spot_taints: frozenset) -> list[str]:
    out = []
    node_labels = I.nodepool_labels(np_.props)
    if node_labels.get(labels.CAPACITY_TYPE_LABEL) not in (None, "spot"):
        out.append(f"label {labels.CAPACITY_TYPE_LABEL} is '{node_labels[labels.CAPACITY_TYPE_LABEL]}' on a spot NodePool")
    if not [t for t in I.nodepool_taints(np_.props) if t[0] in spot_taints and t[2] in ("NoSchedule", "NoExecute")]:
        out.append(f"no spot taint on the node template: add {{key: {labels.SPOT_TAINT_KEY}, value: \"true\", effect: NoSchedule}}")
    if not queues:
        out.append("Karpenter manages spot here but no karpenter release sets settings.interruptionQueue: spot interruptions and "
                   "rebalance recommendations never reach it, so pods are killed without draining")
    return out


def check(resources: list, config) -> list[tuple[str, str]]:
    resources = I.listed(resources)
    out = []
    spot_taints = spot_taint_keys()
    queues = [q for r in I.karpenter_releases(resources)
              if (q := I.text(I.get(r.props, "values", "settings", "interruptionQueue")))]
    for np_ in I.karpenter_node_pools(resources):
        if "spot" not in I.nodepool_requirement(np_.props, I.CAPACITY_TYPE_KEY) or I.exemption(NAME, np_.name, np_.urn, np_.props, config):
            continue
        name = I.text(I.get(np_.props, "metadata", "name")) or np_.name
        out += [(np_.urn, f"spot GPU NodePool '{name}': {p}") for p in _karpenter_spot(np_, queues, spot_taints)]
    for pool in I.gpu_pools(resources):
        if not pool.spot() or I.pool_exemption(NAME, pool, config):
            continue
        out += [(pool.urn, f"spot GPU pool '{pool.name}': {p}") for p in _pool_problems(pool, spot_taints)]
    handler = any(I.chart_of(r.props) in I.INTERRUPTION_CHARTS for r in I.helm_charts(resources))
    for r in I.of_type(resources, I.ASG):
        if _asg_spot_gpu(r) and not handler and not I.exemption(NAME, r.name, r.urn, r.props, config):
            out.append((r.urn, f"spot GPU Auto Scaling group '{r.name}': no interruption handling in the stack (aws-node-termination-handler or Karpenter): pods are killed without draining"))
    return out


POLICY = StackValidationPolicy(
    name=NAME,
    description="Spot GPU pools are labelled and tainted as spot, and interruptions are handled.",
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=I.stack_validator(check),
    config_schema=I.exemptions_schema(),
)
