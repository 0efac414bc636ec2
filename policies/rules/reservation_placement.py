"""reservation-placement: a pool that consumes reserved capacity can actually land on it.

A reservation is zonal and holds one instance type; an instance launched elsewhere or of another type misses it
(and with a targeted reservation fails to launch). What a reservation holds is not in the resources themselves:
gpufleet declares it as `gpufleet.io/reservation-*` tags (EKS launch templates and node groups), annotations
(Karpenter NodePools) or `gpufleet-reservation-*` resource labels (GKE node pools); the rule also judges what
every program states plainly.

EKS managed node groups (EKS User Guide, "Create a managed node group with Capacity Blocks for ML"; EC2 User Guide,
capacity-blocks-launch, cr-cpg):
- capacity type CAPACITY_BLOCK goes with a launch template of market type `capacity-block` targeting a
  reservation id, and the other way round;
- the node group's instance types are the one type the reservation holds;
- instances are placed in the reservation's zone (a launch template's placement.availabilityZone; gpufleet's spec
  keeps a reserved pool's subnets in that zone before planning: subnet zones are not in a node group's inputs);
- an EFA pool whose reservation was created in a cluster placement group launches into that placement group.
GKE node pools (the platform's pool type's `reservation_problems`, gpufleet/base/platforms/gke/policy.py): a specific
reservation is consumed only in its zone (`nodeLocations` exactly that zone) with its
machine type, never by spot VMs; flex-start and queued-provisioning pools consume no reservation
(`NO_RESERVATION`: GKE DWS docs, ../shared/reference/gcp/dws.md).
Karpenter: a NodePool allowing `reserved` has an EC2NodeClass with capacityReservationSelectorTerms, and its zone
and instance-type requirements match the declared reservation.
"""

from __future__ import annotations

from typing import Optional

from pulumi_policy import EnforcementLevel, StackValidationPolicy

from gpufleet.base import labels
from gpufleet.policies import inputs as I

NAME = "reservation-placement"
TAG = labels.RESERVATION_TAG_PREFIX
NODE_CLASS = ":EC2NodeClass"


def _declared(props, *paths) -> dict:
    """gpufleet.io/reservation-<fact> values found under any of the given maps."""
    out = {}
    for path in paths:
        for key, value in I.mapping(I.get(props, *path)).items():
            if isinstance(key, str) and key.startswith(TAG) and isinstance(value, str):
                out.setdefault(key[len(TAG):], value)
    return out


class _Templates:
    """The stack's launch templates by id and by parent URN, built once per check (not scanned per node group)."""

    def __init__(self, templates: list):
        self.templates = templates
        self.ids: Optional[dict] = None
        self.by_parent: dict[str, list] = {}
        for lt in templates:
            parent = getattr(getattr(lt, "parent", None), "urn", None)
            if parent:
                self.by_parent.setdefault(parent, []).append(lt)

    def by_id(self, lt_id: str) -> object:
        if self.ids is None:  # the first template with that id, as a scan in stack order finds it
            self.ids = {}
            for lt in self.templates:
                found = I.known(lambda lt=lt: I.text(I.get(lt.props, "id")))
                if found and found not in self.ids:
                    self.ids[found] = lt
        return self.ids.get(lt_id)


def _launch_template_of(ng, templates: _Templates) -> object:
    """The launch template a node group uses: by id when known, else the one beside it (same parent component)."""
    lt_id = I.known(lambda: I.text(I.get(ng.props, "launchTemplate", "id")))
    parent = getattr(getattr(ng, "parent", None), "urn", None)
    if lt_id:
        found = templates.by_id(lt_id)
        if found is not None:
            return found
    siblings = templates.by_parent.get(parent, []) if parent else []
    return siblings[0] if len(siblings) == 1 else None


def _eks(ng, lt) -> list[str]:
    out = []
    capacity_type = I.get(ng.props, "capacityType")
    lt_props = lt.props if lt is not None else {}
    market = I.get(lt_props, "instanceMarketOptions", "marketType")
    target = I.get(lt_props, "capacityReservationSpecification", "capacityReservationTarget")
    target_id = I.text(I.get(target, "capacityReservationId"))
    declared = {**_declared(lt_props, ("tags",)), **_declared(ng.props, ("tags",))}
    if capacity_type == "CAPACITY_BLOCK" and (market != "capacity-block" or not target_id):
        out.append("capacity type CAPACITY_BLOCK needs a launch template with instanceMarketOptions.marketType capacity-block "
                   "and capacityReservationSpecification.capacityReservationTarget.capacityReservationId (the block's id)")
    if market == "capacity-block" and capacity_type != "CAPACITY_BLOCK":
        out.append(f"its launch template buys a Capacity Block, but the node group's capacity type is {capacity_type!r}: set CAPACITY_BLOCK")
    if not (target_id or I.get(target, "capacityReservationResourceGroupArn") or declared):
        return out
    types = I.eks_instance_types(ng.props) or [t for t in [I.text(I.get(lt_props, "instanceType"))] if t]
    held = declared.get("instance-type")
    if held and types and set(types) != {held}:
        out.append(f"the reservation holds {held}, but the node group launches {', '.join(types)}: other types never use it")
    zone = declared.get("zone")
    placed_zone = I.text(I.get(lt_props, "placement", "availabilityZone"))
    if zone and placed_zone and placed_zone != zone:
        ref = target_id or "the reservation"
        out.append(f"{ref} is in {zone}, but the launch template places instances in {placed_zone}: they never use it")
    group = declared.get("placement-group")
    efa = any(I.get(n, "interfaceType") in ("efa", "efa-only") for n in I.items(I.get(lt_props, "networkInterfaces")))
    placed = I.text(I.get(lt_props, "placement", "groupName"))
    if group and efa and placed and placed != group:
        out.append(f"the reservation was created in placement group {group}, but the EFA launch template launches into {placed}: "
                   "instances outside the reservation's placement group do not use it")
    return out


def _is_node_class(resource_type: str) -> bool:
    return resource_type.startswith("kubernetes:karpenter.k8s.aws/") and resource_type.endswith(NODE_CLASS)


def _karpenter(np_, classes: dict) -> list[str]:
    out = []
    ref = I.text(I.get(np_.props, "spec", "template", "spec", "nodeClassRef", "name"))
    nc = classes.get(ref)
    if nc is not None and not I.items(I.get(nc.props, "spec", "capacityReservationSelectorTerms")):
        out.append(f"allows capacity type reserved, but EC2NodeClass '{ref}' selects no capacity reservation "
                   "(capacityReservationSelectorTerms)")
    declared = _declared(np_.props, ("metadata", "annotations"))
    zone, held = declared.get("zone"), declared.get("instance-type")
    zones = I.nodepool_requirement(np_.props, I.ZONE_KEY)
    if zone and zones != [zone]:
        out.append(f"the reservation is in {zone}, but the NodePool's zone requirement is {zones or 'any zone'}")
    types = I.nodepool_requirement(np_.props, I.INSTANCE_TYPE_KEY)
    if held and types and set(types) != {held}:
        out.append(f"the reservation holds {held}, but the NodePool allows {', '.join(types)}")
    return out


def check(resources: list, config) -> list[tuple[str, str]]:
    resources = I.listed(resources)
    out = []
    templates = _Templates(I.of_type(resources, I.EC2_LAUNCH_TEMPLATE))
    for r in I.of_type(resources, I.EKS_NODE_GROUP):
        if I.exemption(NAME, r.name, r.urn, r.props, config):
            continue
        out += [(r.urn, f"node group '{r.name}': {m}") for m in _eks(r, _launch_template_of(r, templates))]
    for pool in I.gpu_pools(resources):
        if not I.pool_exemption(NAME, pool, config):
            out += [(pool.urn, f"GPU pool '{pool.name}': {m}") for m in pool.kind.reservation_problems(pool.inputs)]
    classes = {I.text(I.get(r.props, "metadata", "name")): r for r in I.of_types_where(resources, _is_node_class)}
    for np_ in I.karpenter_node_pools(resources):
        if "reserved" in I.nodepool_requirement(np_.props, I.CAPACITY_TYPE_KEY) and not I.exemption(NAME, np_.name, np_.urn, np_.props, config):
            name = I.text(I.get(np_.props, "metadata", "name")) or np_.name
            out += [(np_.urn, f"reserved NodePool '{name}': {m}") for m in _karpenter(np_, classes)]
    return out


POLICY = StackValidationPolicy(
    name=NAME,
    description="Pools on reserved capacity run in the reservation's zone, with its instance type and placement.",
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=I.stack_validator(check),
    config_schema=I.exemptions_schema(),
)
