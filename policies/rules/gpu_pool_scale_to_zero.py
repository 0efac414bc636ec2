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

from pulumi_policy import EnforcementLevel, StackValidationPolicy

from gpufleet.base import labels
from gpufleet.base.catalog import dra as dra_facts
from gpufleet.policies import inputs as I

NAME = "gpu-pool-scale-to-zero"
# The stack key a finding on a gpufleet pool is fixed with, and the value that fixes it (the review writes
# `gpufleet:nodePools[<i>].minNodes: 0` beside the pool's exemption).
STACK_FIX = ("minNodes", "0")
TEMPLATE = labels.CA_TEMPLATE_PREFIX.rstrip("/")
ASG_TAG = "aws:autoscaling/tag:Tag"


def _idle(pool: I.Pool, minimum: float, zones: int = 1) -> str:
    """The idle cost at the pool's own capacity type: a spot pool's idle nodes at the spot price (issue 50)."""
    nodes = minimum * zones
    spot = pool.spot()
    price, how = pool.shape.price_for(spot) if pool.shape else (None, "")
    if price is None:
        kind = "spot " if spot else ""
        return f"{nodes:g} idle node(s) of {', '.join(pool.instance_types) or 'an unpriced shape'} (no catalog {kind}price)"
    return f"{nodes:g} idle node(s) cost {I.money(nodes * price)} ({I.money(price)} each, {how})"


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


def _autoscaler_hints(pool: I.Pool, autoscaler: bool, asg_tags: dict[str, set[str]]) -> list[str]:
    """A pool whose autoscaler is a Helm release of the stack (EKS) scales from 0 only with that release and its
    node-template tags for nvidia.com/gpu and for every label and taint of the pool."""
    problems = []
    if not autoscaler:
        problems.append("no cluster-autoscaler Helm release in the stack: nothing scales this pool up from 0")
    tags = set(I.mapping(I.get(pool.props, "tags")))
    parent = getattr(getattr(pool.resource, "parent", None), "urn", None)
    tags |= asg_tags.get(pool.urn, set()) | (asg_tags.get(parent, set()) if parent else set())
    wanted = [f"{TEMPLATE}/resources/{labels.GPU_RESOURCE}"]
    wanted += [f"{TEMPLATE}/label/{k}" for k in sorted(pool.labels())]
    wanted += [f"{TEMPLATE}/taint/{key}" for key, _, _ in pool.taints() if key]
    missing = [t for t in wanted if t not in tags]
    if missing:
        problems.append(
            "the autoscaler cannot tell what a node would offer when the group is at 0; missing node-template "
            f"tags: {', '.join(missing)}"
        )
    return problems


def _dra(pool: I.Pool) -> list[str]:
    """A DRA pool at 0 nodes comes back only where the platform's autoscaler scales DRA pools up from zero (GKE's, when
    the pool carries its DRA label); elsewhere a minimum of 0 strands it."""
    node_labels = pool.labels()
    if node_labels.get(labels.GPU_ALLOCATION_LABEL) != "dra":
        return []
    minimum = pool.kind.minimum(pool.inputs)
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
        if I.pool_exemption(NAME, pool, config):
            continue
        problems = pool.kind.scale_to_zero_problems(pool.inputs, lambda nodes, zones, pool=pool: _idle(pool, nodes, zones))
        if pool.kind.autoscaler_hints:
            problems += _autoscaler_hints(pool, autoscaler, asg_tags)
        problems += _dra(pool)
        yield from ((pool.urn, f"GPU pool '{pool.name}': {p}") for p in problems)


POLICY = StackValidationPolicy(
    name=NAME,
    description="GPU pools scale to zero: minimum 0 and everything the autoscaler needs to scale up from 0.",
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=I.stack_validator(check),
    config_schema=I.exemptions_schema("resource name or URN -> reason (e.g. an always-on inference pool)"),
)
