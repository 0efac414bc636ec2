"""nodePools[*].reservation and the capacity kinds beyond on-demand and spot: where a pool's GPUs come from
when on-demand capacity is not there.

Capacity kinds (`nodePools[*].capacity`):
- `reserved`: capacity bought ahead. EKS: an EC2 Capacity Block for ML (`capacity-block`, targeted by its id:
  "To use your Capacity Block, you must specify the Capacity Block reservation ID when launching instances",
  EC2 User Guide, capacity-blocks-launch.html; instance Capacity Blocks cannot be put in resource groups,
  cb-group.html) or an On-Demand Capacity Reservation (`odcr`, by id or by resource group ARN). GKE: a
  Compute Engine reservation, `specific` (by name) or `any` matching one.
- `flex-start` (GKE): Dynamic Workload Scheduler flex-start VMs, at most 7 days each.
- `queued` (GKE): flex-start with queued provisioning: nodes come all at once, only through
  ProvisioningRequests (Kueue's ProvisioningRequest admission check).
GKE facts: ../shared/reference/gcp/dws.md (GKE DWS docs, cluster-toolkit v1.95.0 gke-node-pool preconditions).

What a reservation declares here (zone, instance type, count) is what the cloud already knows; gpufleet cannot
read it offline, so the stack states it and the plan checks the pool against it (`reservation_checks`), the
policy `reservation-placement` checks the resources, and the cost section treats `instanceCount` nodes as
committed spend.
"""

import datetime as dt
from typing import Any, Literal, Optional

from pydantic import Field, model_validator

from gpufleet.base import platforms
from gpufleet.base.spec import ids
from gpufleet.base.spec.base import Model
from gpufleet.base.spec.errors import Problem

NS = "gpufleet"
CAPACITY_KINDS = ("on-demand", "spot", "reserved", "flex-start", "queued")
# Which capacity kinds and reservation types each platform offers: its PricingTraits (capacity_kinds,
# reservation_types; gpufleet/base/platforms/<name>/pricing.py).

# GKE: flex-start VMs live at most 7 days; the default and maximum run duration (GKE docs, "About flex-start
# provisioning mode", https://cloud.google.com/kubernetes-engine/docs/concepts/dws).
FLEX_START_MAX_RUN_SECONDS = 7 * 24 * 3600
# GKE: flex-start compact placement is allowed only on these families (cluster-toolkit v1.95.0 gke-node-pool).
DWS_MODES = ("flex-start", "queued")


class CapacityReservationSpec(Model):
    """The reservation a `capacity: reserved` pool consumes, and what it holds (checked against the pool)."""

    type: Literal["capacity-block", "odcr", "specific", "any"]
    """EKS: capacity-block (EC2 Capacity Block for ML) | odcr (On-Demand Capacity Reservation).
    GKE: specific (one reservation, by name) | any (any matching reservation of the project)."""
    id: Optional[str] = Field(default=None, pattern=r"^cr-[0-9a-f]{17}$")
    """EKS: the reservation id, e.g. cr-0123456789abcdef0 (required for capacity-block)."""
    resource_group_arn: Optional[str] = Field(default=None, pattern=r"^arn:aws[a-z-]*:resource-groups:[a-z0-9-]+:\d{12}:group/.+$")
    """EKS odcr: target a Capacity Reservation resource group instead of one id."""
    placement_group: Optional[str] = Field(default=None, pattern=ids.EC2_PLACEMENT_GROUP)
    """EKS odcr: the cluster placement group the reservation was created in; EFA pools then launch there
    (EC2 User Guide, cr-cpg.html) instead of a placement group of their own."""
    name: Optional[str] = Field(default=None, pattern=r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")
    """GKE specific: the reservation's name."""
    project: Optional[str] = Field(default=None, pattern=ids.GCP_PROJECT)
    """GKE specific: the project owning a shared reservation; default: the cluster's project."""
    zone: Optional[str] = Field(default=None, pattern=ids.ZONE)
    """The reservation's zone (EKS availability zone, GKE zone). Required except for GKE any and EKS resource
    groups: the pool's nodes must run there."""
    instance_type: Optional[str] = Field(default=None, pattern=ids.INSTANCE_OR_MACHINE_TYPE)
    """The instance type (EKS) or machine type (GKE) the reservation holds; default: the pool's."""
    instance_count: Optional[int] = Field(default=None, ge=1)
    """Instances reserved: committed spend in the cost section. Required for capacity-block (its size)."""
    end_date: Optional[str] = Field(default=None, pattern=r"^\d{4}-\d{2}-\d{2}$")
    """The day (YYYY-MM-DD, UTC) the reservation ends: a Capacity Block's end, an ODCR's EndDate, a GCE reservation's
    end of commitment or auto-delete time. The plan warns RESERVATION_END_WARNING_DAYS before and refuses the pool from
    that day on (reservation_end.py, docs/upgrades.md). Default: none, a reservation without an end."""

    @model_validator(mode="after")
    def _fields_per_type(self) -> "CapacityReservationSpec":
        t = self.type
        used = {f for f in self.model_fields_set if getattr(self, f) is not None}
        allowed = {
            "capacity-block": {"type", "id", "zone", "instance_type", "instance_count", "end_date"},
            "odcr": {"type", "id", "resource_group_arn", "placement_group", "zone", "instance_type", "instance_count",
                     "end_date"},
            "specific": {"type", "name", "project", "zone", "instance_type", "instance_count", "end_date"},
            "any": {"type", "zone", "instance_type", "instance_count", "end_date"},
        }[t]
        extra = sorted(CapacityReservationSpec.model_fields[f].alias for f in used - allowed)
        if extra:
            raise ValueError(f"{', '.join(extra)}: not used with reservation type {t}")
        if self.end_date is not None:
            try:
                dt.date.fromisoformat(self.end_date)
            except ValueError:
                raise ValueError(f"endDate {self.end_date!r} is not a calendar day (YYYY-MM-DD)") from None
        if t == "capacity-block":
            missing = [a for f, a in (("id", "id"), ("zone", "zone"), ("instance_count", "instanceCount")) if getattr(self, f) is None]
            if missing:
                raise ValueError(f"a capacity-block reservation needs {', '.join(missing)} (its id, its availability zone and "
                                 "how many instances it holds)")
        if t == "odcr":
            if (self.id is None) == (self.resource_group_arn is None):
                raise ValueError("an odcr reservation needs exactly one of id or resourceGroupArn")
            if self.id is not None and self.zone is None:
                raise ValueError("an odcr reservation by id needs its zone (the availability zone it reserves in)")
        if t == "specific":
            if self.name is None or self.zone is None:
                raise ValueError("a specific reservation needs name and zone")
        return self


def check(stack: str, spec: Any) -> list[Problem]:
    """Capacity kinds and reservations the platform offers (its PricingTraits), and the settings each mode forbids."""
    platform = spec.cluster.platform
    pricing = platforms.get(platform).pricing
    problems: list[Problem] = []
    offered = pricing.capacity_kinds
    for i, pool in enumerate(spec.node_pools):
        at = f"{NS}:nodePools[{i}]"
        if pool.capacity not in offered:
            if pool.capacity not in pricing.capacity_refused_elsewhere:
                problems.append(Problem(stack, f"{at}.capacity", f"not offered on {platform} (allowed on {platform}: {', '.join(offered)})", pool.capacity))
            continue
        r = pool.reservation
        if pool.capacity == "reserved" and r is None:
            kinds = " | ".join(pricing.reservation_types)
            problems.append(Problem(stack, f"{at}.reservation", f"required with capacity reserved: which reservation the pool consumes (type: {kinds})"))
            continue
        if r is None:
            continue
        if pool.capacity != "reserved":
            problems.append(Problem(stack, f"{at}.reservation", f"only used with capacity reserved (this pool is {pool.capacity})"))
            continue
        types = pricing.reservation_types
        if r.type not in types:
            problems.append(Problem(stack, f"{at}.reservation.type", f"not a reservation type on {platform} (allowed: {', '.join(types)})", r.type))
    return problems


def billed_as(pool: Any) -> Optional[str]:
    """The catalog price a pool's nodes are billed at: on-demand or spot as declared; a reservation (EC2 On-Demand
    Capacity Reservation, GCE reservation) bills its instances at the on-demand rate (EC2 User Guide, "Capacity
    Reservation pricing and billing"; Compute Engine docs, "Reservations of Compute Engine zonal resources":
    reserved resources are charged at on-demand rates). EC2 Capacity Blocks and GKE DWS flex-start / queued
    provisioning have prices of their own (EC2 Capacity Blocks pricing; DWS pricing): None here; EKS prices a
    Capacity Block from the rates the catalog holds (aws_instances.yaml capacity_block_prices, EksPricing.node_price),
    and every other such pool is unpriced unless the stack declares pricePerNodeHour."""
    if pool.capacity in ("on-demand", "spot"):
        return pool.capacity
    if pool.capacity == "reserved" and not (pool.reservation is not None and pool.reservation.type == "capacity-block"):
        return "on-demand"
    return None


# Capacity with prices of its own that the catalog does not hold (billed_as says why).
OWN_PRICES = {
    "capacity-block": "EC2 Capacity Blocks for ML are paid upfront at the block's own price (aws.amazon.com/ec2/capacityblocks/pricing), "
                      "not in the catalog",
    "flex-start": "Dynamic Workload Scheduler flex-start VMs have prices of their own (cloud.google.com/products/dws/pricing), "
                  "not in the catalog",
    "queued": "Dynamic Workload Scheduler queued provisioning has prices of its own (cloud.google.com/products/dws/pricing), "
              "not in the catalog",
}


def unpriced_in_catalog(cap: Any) -> str:
    """Why a pool of a platform whose node prices come from the catalog has none (`cap`: a
    gpufleet.base.capacity.PoolCapacity): its capacity has prices of its own (OWN_PRICES), or its instance or machine
    type has no catalog price."""
    why = OWN_PRICES.get((cap.reservation or {}).get("type") or cap.capacity_type)
    if why:
        return f"pool {cap.pool}: {why}; declare pricePerNodeHour to price it"
    return f"pool {cap.pool} has no catalog price for its instance/machine type"


def committed_nodes(pool: Any) -> int:
    """Nodes whose price is committed whatever the pool's size (the reservation's instances)."""
    r = getattr(pool, "reservation", None)
    if pool.capacity != "reserved" or r is None or r.instance_count is None:
        return 0
    return r.instance_count


def capacity_source(pool: Any) -> str:
    """One line a reviewer reads: where the pool's nodes come from."""
    r = getattr(pool, "reservation", None)
    if pool.capacity == "reserved" and r is not None:
        ref = r.id or r.resource_group_arn or r.name or "any matching reservation"
        size = f", {r.instance_count} x {r.instance_type}" if r.instance_count and r.instance_type else (
            f", {r.instance_count} instances" if r.instance_count else "")
        where = f" in {r.zone}" if r.zone else ""
        return f"reserved ({r.type} {ref}{where}{size})"
    if pool.capacity == "flex-start":
        return "flex-start (GKE DWS flex-start VMs)"
    if pool.capacity == "queued":
        return "queued (GKE DWS queued provisioning via ProvisioningRequest)"
    return pool.capacity
