"""gpu-pool-scale-to-zero: every GPU pool has a minimum of 0 and can really scale up from zero.

EKS managed node groups (GPU instance types): scalingConfig.minSize 0, a cluster-autoscaler Helm release
in the stack, and the autoscaler's node-template tags for nvidia.com/gpu and for every label and taint
(the autoscaler cannot see a node that does not exist: kubernetes/autoscaler FAQ "scale a node group to
0", aws/containers-roadmap#724), on the node group or as aws:autoscaling/tag:Tag resources beside it. GKE node pools with GPUs: autoscaling enabled with a minimum of 0 (per
zone and total). A non-zero minimum is reported with the idle cost it burns, from the catalog.

Karpenter NodePools (karpenter.sh, GPU instance types or a GPU limit) hold no static capacity: no `spec.replicas`
(static NodePools keep that many nodes whatever the load), a `spec.limits` bound, consolidation that can remove an
empty node (`consolidateAfter` not `Never`), and a Karpenter release in the stack. GKE DWS pools (flex-start,
queued provisioning) get nodes only when work asks: no initial node count.
DRA pools (node label `gpufleet.io/gpu-allocation: dra`) are the exception on EKS: no autoscaler there scales a DRA
pool up from zero (it would have to predict the ResourceSlices of a node that does not exist: cluster-autoscaler only
on the clusterapi and coreweave providers, Karpenter's AWS provider not at all), so a minimum of 0 strands the pool
and is a violation, with the fix. GKE's cluster autoscaler does scale an existing DRA pool up from zero when the pool
carries cloud.google.com/gke-nvidia-gpu-dra-driver=true (Google's DRA tutorial in GoogleCloudPlatform/ai-on-gke);
without that label a GKE DRA pool at 0 is the same violation. gpufleet/base/catalog/dra.yaml `autoscalers`.
Reserved capacity is not judged here: its idle hours are committed spend whatever the pool's minimum (EKS capacity
type CAPACITY_BLOCK or a node group tagged `gpufleet.io/reservation-type`, GKE pools consuming a specific
reservation); the plan's cost section prices it as committed.
"""

from __future__ import annotations

from typing import Optional

from pulumi_policy import EnforcementLevel, StackValidationPolicy

from gpufleet.base import labels
from gpufleet.base.catalog import dra as dra_facts
from gpufleet.policies import inputs as I

NAME = "gpu-pool-scale-to-zero"
TEMPLATE = labels.CA_TEMPLATE_PREFIX.rstrip("/")
ASG_TAG = "aws:autoscaling/tag:Tag"


def _idle(pool: I.Pool, minimum: float, zones: int = 1) -> str:
    nodes = minimum * zones
    price = pool.shape.price_hour if pool.shape else None
    if price is None:
        return f"{nodes:g} idle node(s) of {', '.join(pool.instance_types) or 'an unpriced shape'} (no catalog price)"
    return f"{nodes:g} idle node(s) cost {I.money(nodes * price)} ({I.money(price)} each, catalog on-demand estimate)"


def _asg_tag_keys(resources: list) -> dict[str, set[str]]:
    """Keys of `aws:autoscaling/tag:Tag` resources by parent URN: how node-template tags reach a managed node
    group's ASG (node group tags are not propagated to it: aws/containers-roadmap#608)."""
    out: dict[str, set[str]] = {}
    for r in I.of_type(resources, ASG_TAG):
        key = I.text(I.get(r.props, "tag", "key"))
        parent = getattr(getattr(r, "parent", None), "urn", None) or ""
        if key:
            out.setdefault(parent, set()).add(key)
    return out


def _reserved(pool: I.Pool) -> bool:
    """Capacity paid for whether nodes run or not (a capacity block, a reservation the pool targets)."""
    if pool.platform == "aks":
        return bool(I.text(I.get(pool.props, "capacityReservationGroupId")))
    if pool.platform == "eks":
        tags = I.mapping(I.get(pool.props, "tags"))
        return I.get(pool.props, "capacityType") == "CAPACITY_BLOCK" or f"{labels.RESERVATION_TAG_PREFIX}type" in tags
    return I.get(pool.props, "nodeConfig", "reservationAffinity", "consumeReservationType") == "SPECIFIC_RESERVATION"


def _eks(pool: I.Pool, autoscaler: bool, asg_tags: dict[str, set[str]]) -> list[str]:
    problems = []
    minimum = I.number(I.get(pool.props, "scalingConfig", "minSize"))
    if minimum is not None and minimum > 0 and not _reserved(pool):
        problems.append(f"minSize is {minimum:g}, not 0: {_idle(pool, minimum)} while no GPU work runs")
    if not autoscaler:
        problems.append("no cluster-autoscaler Helm release in the stack: nothing scales this pool up from 0")
    tags = set(I.mapping(I.get(pool.props, "tags")))
    parent = getattr(getattr(pool.resource, "parent", None), "urn", None)
    tags |= asg_tags.get(pool.urn, set()) | (asg_tags.get(parent, set()) if parent else set())
    wanted = [f"{TEMPLATE}/resources/{labels.GPU_RESOURCE}"]
    wanted += [f"{TEMPLATE}/label/{k}" for k in sorted(I.labels_of(pool))]
    wanted += [f"{TEMPLATE}/taint/{key}" for key, _, _ in I.taints_of(pool) if key]
    missing = [t for t in wanted if t not in tags]
    if missing:
        problems.append(
            "the autoscaler cannot tell what a node would offer when the group is at 0; missing node-template "
            f"tags: {', '.join(missing)}"
        )
    return problems


def _aks(pool: I.Pool) -> list[str]:
    """AKS: the cluster autoscaler is AKS's own, per node pool (auto_scaling_enabled with min_count and max_count;
    articles/aks/cluster-autoscaler.md); it scales a user pool from 0 from the pool's VM size, labels and taints, which
    AKS knows, so no node-template hints are needed."""
    if not I.truthy(I.get(pool.props, "autoScalingEnabled")):
        fixed = I.number(I.get(pool.props, "nodeCount")) or 0
        extra = f": {_idle(pool, fixed)}" if fixed > 0 else ""
        return [f"autoScalingEnabled is not true, so the cluster autoscaler never scales the pool to or from 0{extra}"]
    if _reserved(pool):
        return []
    minimum = I.number(I.get(pool.props, "minCount"))
    if minimum is not None and minimum > 0:
        return [f"minCount is {minimum:g}, not 0: {_idle(pool, minimum)} while no GPU work runs"]
    return []


def _gke(pool: I.Pool) -> list[str]:
    auto = I.get(pool.props, "autoscaling")
    if not I.mapping(auto):
        fixed = I.number(I.get(pool.props, "nodeCount")) or I.number(I.get(pool.props, "initialNodeCount")) or 0
        extra = f": {_idle(pool, fixed)}" if fixed > 0 else ""
        return [f"autoscaling is not enabled, so the pool never scales to or from 0{extra}"]
    zones = len(I.items(I.get(pool.props, "nodeLocations"))) or 1
    problems = []
    if _reserved(pool):
        return problems
    dws = I.truthy(I.get(pool.props, "nodeConfig", "flexStart")) or I.truthy(I.get(pool.props, "queuedProvisioning", "enabled"))
    initial = I.number(I.get(pool.props, "initialNodeCount"))
    if dws and initial:
        problems.append(f"initialNodeCount is {initial:g} on a DWS (flex-start / queued) pool: its nodes should come only when "
                        f"work asks for them: {_idle(pool, initial)}")
    per_zone = I.number(I.get(auto, "minNodeCount"))
    if per_zone is not None and per_zone > 0:
        problems.append(f"autoscaling.minNodeCount is {per_zone:g}, not 0: {_idle(pool, per_zone, zones)}")
    total = I.number(I.get(auto, "totalMinNodeCount"))
    if total is not None and total > 0:
        problems.append(f"autoscaling.totalMinNodeCount is {total:g}, not 0: {_idle(pool, total)}")
    return problems


def _dra_minimum(pool: I.Pool) -> Optional[float]:
    """The pool's minimum size as its resource declares it (GKE: the larger of per-zone and total minimums)."""
    if pool.platform == "eks":
        return I.number(I.get(pool.props, "scalingConfig", "minSize"))
    if pool.platform == "aks":
        return I.number(I.get(pool.props, "minCount"))
    auto = I.mapping(I.get(pool.props, "autoscaling"))
    if not auto:
        return I.number(I.get(pool.props, "nodeCount")) or I.number(I.get(pool.props, "initialNodeCount"))
    return max(I.number(I.get(auto, "minNodeCount")) or 0, I.number(I.get(auto, "totalMinNodeCount")) or 0)


def _dra(pool: I.Pool) -> list[str]:
    """A DRA pool at 0 nodes comes back only where the platform's autoscaler scales DRA pools up from zero (GKE's, when
    the pool carries its DRA label); elsewhere a minimum of 0 strands it."""
    node_labels = I.labels_of(pool)
    if node_labels.get(labels.GPU_ALLOCATION_LABEL) != "dra":
        return []
    minimum = _dra_minimum(pool)
    if minimum is None or minimum >= 1:
        return []
    known = dra_facts.autoscalers(pool.platform)
    able = [a for a in known.values() if a.can_scale_from_zero]
    if any(a.node_label is None or node_labels.get(a.node_label) == "true" for a in able):
        return []
    if able:
        need = "; ".join(f"{a.name} scales a DRA pool up from zero only when its nodes carry the label {a.node_label}=true"
                         for a in able)
        return [f"a DRA pool with a minimum of 0 would be stranded: {need} (sources: gpufleet/base/catalog/dra.yaml). Fix: "
                "add that node label (gpufleet's own GKE pools carry it), or set minNodes to at least 1"]
    why = "; ".join(f"{a.name}{f' (DRA since {a.dra_since}, {a.flag})' if a.dra_since else ''} cannot scale a DRA pool "
                    "up from zero" for a in known.values() if not a.can_scale_from_zero) or "no autoscaler is known to"
    return [f"a DRA pool with a minimum of 0 would be stranded: {why} (sources: gpufleet/base/catalog/dra.yaml). Fix: "
            "set minNodes to at least 1 (a whole NVLink domain on GB200 NVL72 pools), or put the pool on the device plugin"]


def _karpenter(np_, karpenter: bool) -> list[str]:
    spec = I.get(np_.props, "spec")
    problems = []
    replicas = I.number(I.get(spec, "replicas"))
    if replicas is not None:
        problems.append(f"spec.replicas is {replicas:g}: a static NodePool keeps that many GPU nodes whatever the load")
    if not I.mapping(I.get(spec, "limits")):
        problems.append(f"no spec.limits: nothing bounds how many GPU nodes Karpenter launches (set {labels.GPU_RESOURCE})")
    if I.get(spec, "disruption", "consolidateAfter") == "Never":
        problems.append("disruption.consolidateAfter is Never: Karpenter never removes an empty GPU node")
    if not karpenter:
        problems.append("no Karpenter Helm release in the stack: nothing launches nodes for this NodePool")
    return problems


def check(resources: list, config) -> list[tuple[str, str]]:
    """(urn, message) for every GPU pool that cannot sit at zero."""
    return list(_findings(I.listed(resources), config))


def _findings(resources: list, config):
    karpenter = bool(I.karpenter_releases(resources))
    for np_ in I.karpenter_node_pools(resources):
        if I.exemption(NAME, np_.name, np_.urn, np_.props, config):
            continue
        name = I.text(I.get(np_.props, "metadata", "name")) or np_.name
        yield from ((np_.urn, f"GPU NodePool '{name}': {p}") for p in _karpenter(np_, karpenter))
    autoscaler = any(I.chart_of(r.props) in I.AUTOSCALER_CHARTS for r in I.helm_charts(resources))
    asg_tags = _asg_tag_keys(resources)
    for pool in I.gpu_pools(resources):
        if I.exemption(NAME, pool.name, pool.urn, pool.props, config):
            continue
        problems = (_eks(pool, autoscaler, asg_tags) if pool.platform == "eks" else _aks(pool) if pool.platform == "aks"
                    else _gke(pool))
        problems += _dra(pool)
        yield from ((pool.urn, f"GPU pool '{pool.name}': {p}") for p in problems)


POLICY = StackValidationPolicy(
    name=NAME,
    description="GPU pools scale to zero: minimum 0 and everything the autoscaler needs to scale up from 0.",
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=I.stack_validator(check),
    config_schema=I.exemptions_schema("resource name or URN -> reason (e.g. an always-on inference pool)"),
)
