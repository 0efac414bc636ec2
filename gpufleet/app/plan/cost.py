"""What a planned cluster costs per hour: one `CostItem` per billed thing, totals at the idle floor and at maximum
size, monthly figures, and what each team's Kueue quota commits.

The items come from what the plan registers (cost_items.py) and GPU pools from gpufleet.base.capacity. An item
without a price is listed as unpriced with the reason: the totals then read "at least", never a silent zero. Each
priced item names its source, the date the price was read and whether an API or a person gave it; prices read more
than prices.STALE_AFTER_DAYS (90) days before the plan are warned about (stale_prices).
The JSON keeps the contract `cost{hourlyMin, hourlyMax, currency}` (DESIGN.md §5) and adds the breakdown.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Optional

from gpufleet.base.capacity import CURRENCY
from gpufleet.base.catalog import charges, prices

# Item kinds, in the order the breakdown lists them.
KINDS = ("control-plane", "host", "nodes", "gpu-nodes", "reservation", "storage", "network", "load-balancer", "key",
         "monitoring", "overhead", "per-claim")


@dataclass(frozen=True)
class CostItem:
    """One billed thing: `count` units (nodes, gateways, volumes, hosts) at `unit_hourly` each.

    count_min / count_max: units at the idle floor (every pool at its minimum) and at maximum size. A unit price of
    None is an unpriced item; `source` then says why. `hourly_*` may be given where the price is not linear in the
    count (Cloud NAT). kind "per-claim" shows what each claim of a storage class would cost: nothing is created
    until a workload claims it, so it never adds to the totals."""

    name: str
    kind: str
    count_min: float
    count_max: float
    unit_hourly: Optional[float]
    source: str
    hourly_min_override: Optional[float] = None
    hourly_max_override: Optional[float] = None
    committed: bool = False
    """Reserved capacity: billed whether used or not (count_min == count_max)."""
    key: str = ""
    """What the item is, stable across changes of its price or shape (e.g. `gpu-nodes:h100-train`): the review
    pairs a base plan's items with the head's by it."""
    as_of: Optional[str] = None
    """ISO date the price was read (None: unpriced, or declared in the stack; "": the source has no date)."""
    origin: Optional[str] = None
    """Where the price comes from: api (`gpufleet catalog refresh`), hand-entered (typed from a pricing page),
    api+hand-entered (an N1 VM typed, its GPUs from the API), snapshot (an undated copy of a price API: the Azure GPU
    VM prices), stack (declared in the stack file)."""

    @property
    def priced(self) -> bool:
        return self.unit_hourly is not None or self.hourly_max_override is not None

    @property
    def counts(self) -> bool:
        """Adds to the totals (a per-claim figure and a zero-count item never do)."""
        return self.kind != "per-claim" and self.count_max > 0

    @property
    def hourly_min(self) -> Optional[float]:
        if self.kind == "per-claim":
            return 0.0
        if self.hourly_min_override is not None:
            return self.hourly_min_override
        return None if self.unit_hourly is None else round(self.unit_hourly * self.count_min, 6)

    @property
    def hourly_max(self) -> Optional[float]:
        if self.kind == "per-claim":
            return 0.0
        if self.hourly_max_override is not None:
            return self.hourly_max_override
        return None if self.unit_hourly is None else round(self.unit_hourly * self.count_max, 6)

    def to_json(self) -> dict:
        out = {
            "key": self.key or f"{self.kind}:{self.name}", "name": self.name, "kind": self.kind, "count": _num(self.count_max), "countMin": _num(self.count_min),
            "unitHourly": None if self.unit_hourly is None else round(self.unit_hourly, 6),
            "hourlyMin": _round(self.hourly_min), "hourlyMax": _round(self.hourly_max), "source": self.source,
            "priceAsOf": self.as_of if self.priced else None, "priceOrigin": self.origin if self.priced else None,
        }
        if not self.priced and self.counts:
            out["unpriced"] = True
        if self.committed:
            out["committed"] = True
        return out


def _num(x: float):
    return int(x) if float(x).is_integer() else x


def _round(x: Optional[float]) -> Optional[float]:
    return None if x is None else round(x, 4)


@dataclass(frozen=True)
class TeamCost:
    """What one team's queue on one pool commits: its nominal quota at the pool's rate per advertised unit, and at
    most nominal quota plus borrowing limit (the pool's whole size when borrowing is unlimited)."""

    team: str
    pool: str
    resource: str
    nominal: int
    most: int
    unit_hourly: Optional[float]
    source: str

    @property
    def hourly_nominal(self) -> Optional[float]:
        return None if self.unit_hourly is None else round(self.unit_hourly * self.nominal, 4)

    @property
    def hourly_max(self) -> Optional[float]:
        return None if self.unit_hourly is None else round(self.unit_hourly * self.most, 4)

    def to_json(self) -> dict:
        return {"team": self.team, "pool": self.pool, "resource": self.resource, "nominalQuota": self.nominal,
                "maxWithBorrowing": self.most, "unitHourly": None if self.unit_hourly is None else round(self.unit_hourly, 6),
                "hourlyNominal": self.hourly_nominal, "hourlyMax": self.hourly_max, "source": self.source}


@dataclass
class Cost:
    items: list[CostItem]
    teams: list[TeamCost] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    unpriced_pools: list[str] = field(default_factory=list)
    price_warnings: list[str] = field(default_factory=list)
    """Prices read longer ago than prices.STALE_AFTER_DAYS (stale_prices)."""
    gpus_per_node: dict[str, int] = field(default_factory=dict)
    """Pool -> GPUs per node, so the totals can say how many of the GPUs at maximum size are unpriced (issue 49)."""

    @property
    def billed(self) -> list[CostItem]:
        """The items that add to the totals (priced or not)."""
        return [i for i in self.items if i.counts]

    @property
    def unpriced_gpus_max(self) -> int:
        """GPUs at maximum size whose nodes (or reservation) have no price: the part of the fleet the totals miss."""
        return int(sum(i.count_max * self.gpus_per_node.get(i.key.split(":", 1)[1], 0) for i in self.unpriced
                       if i.kind in ("gpu-nodes", "reservation") and ":" in i.key))

    @property
    def gpus_max(self) -> int:
        """GPUs at maximum size, over every GPU pool's nodes and reservations."""
        return int(sum(i.count_max * self.gpus_per_node.get(i.key.split(":", 1)[1], 0) for i in self.billed
                       if i.kind in ("gpu-nodes", "reservation") and ":" in i.key))

    def unpriced_share(self) -> dict:
        """How much of the stack the totals do not price: unpriced of billed items, and unpriced of all GPUs at
        maximum size (a share of the hourly maximum cannot be given: the missing prices are what is unknown)."""
        return {"items": len(self.unpriced), "billedItems": len(self.billed),
                "gpusMax": self.unpriced_gpus_max, "allGpusMax": self.gpus_max}

    @property
    def unpriced(self) -> list[CostItem]:
        return [i for i in self.items if i.counts and not i.priced]

    @property
    def at_least(self) -> bool:
        return bool(self.unpriced)

    @property
    def hourly_min(self) -> float:
        return round(sum(i.hourly_min or 0.0 for i in self.items if i.priced), 4)

    @property
    def hourly_max(self) -> float:
        return round(sum(i.hourly_max or 0.0 for i in self.items if i.priced), 4)

    def to_json(self) -> dict:
        hours = charges.hours_per_month()
        return {
            "hourlyMin": self.hourly_min, "hourlyMax": self.hourly_max, "currency": CURRENCY,
            "monthlyMin": round(self.hourly_min * hours, 2), "monthlyMax": round(self.hourly_max * hours, 2),
            "hoursPerMonth": hours, "atLeast": self.at_least, "unpriced": [i.name for i in self.unpriced],
            "unpricedPools": self.unpriced_pools, "items": [i.to_json() for i in self.items],
            "teams": [t.to_json() for t in self.teams], "notes": self.notes, "pricesAsOf": charges.as_of(),
            "priceWarnings": self.price_warnings, "unpricedShare": self.unpriced_share(),
        }


def money(x: Optional[float]) -> str:
    return "unpriced" if x is None else f"{x:,.2f}"


def total_line(cost: Cost) -> str:
    """'hourly cost: 0.80 USD at minimum size, 126.44 at maximum size' (+ 'at least' and what is unpriced)."""
    prefix = "at least " if cost.at_least else ""
    hours = charges.hours_per_month()
    line = (f"hourly cost: {prefix}{cost.hourly_min:.2f} {CURRENCY} at minimum size (the idle floor), "
            f"{prefix}{cost.hourly_max:.2f} at maximum size; per month ({hours} h): {prefix}{cost.hourly_min * hours:,.2f} "
            f"to {prefix}{cost.hourly_max * hours:,.2f}")
    if cost.unpriced:
        share = cost.unpriced_share()
        gpus = f", {share['gpusMax']} of {share['allGpusMax']} GPUs at maximum size" if share["gpusMax"] else ""
        line += (f" (unpriced: {share['items']} of {share['billedItems']} billed items{gpus}: "
                 f"{', '.join(i.name for i in cost.unpriced)})")
    return line


def stale_prices(items: list[CostItem], today: date) -> list[str]:
    """One warning per reading date older than prices.STALE_AFTER_DAYS, naming the items priced from it."""
    by_date: dict[str, list[str]] = {}
    for i in items:
        if i.counts and i.priced and i.as_of:
            by_date.setdefault(i.as_of, []).append(i.name)
    out = []
    for as_of, names in sorted(by_date.items()):
        try:
            age = (today - date.fromisoformat(as_of)).days
        except ValueError:
            age = None
        if age is None or age > prices.STALE_AFTER_DAYS:
            when = f"read {as_of}, {age} days ago" if age is not None else f"read '{as_of}' (not a date)"
            out.append(f"prices {when} (over {prices.STALE_AFTER_DAYS}): {', '.join(names)}; refresh them with "
                       "`gpufleet catalog refresh` or check them on the pricing pages")
    return out


def price_read(i: CostItem) -> str:
    """The breakdown's `price read` cell: the date and origin of the price, or where it was declared."""
    if not i.priced:
        return "-"
    if i.origin == "stack":
        return "declared in the stack"
    return f"{i.as_of or 'undated'} ({i.origin or 'unknown'})"


BREAKDOWN_HEADER = ["item", "kind", "count min-max", "$/h each", "$/h min", "$/h max", "price read"]


def breakdown_rows(cost: Cost) -> list[list[str]]:
    order = {k: n for n, k in enumerate(KINDS)}
    rows = []
    for i in sorted(cost.items, key=lambda i: (order.get(i.kind, len(KINDS)), i.name)):
        each = "unpriced" if i.unit_hourly is None and i.hourly_max_override is None else (
            f"{i.unit_hourly:,.4f}" if i.unit_hourly is not None else "varies")
        count = f"{_num(i.count_min)}-{_num(i.count_max)}" if i.count_min != i.count_max else f"{_num(i.count_max)}"
        if i.kind == "per-claim":
            count, lo, hi = "per claim", "-", "-"
        else:
            lo, hi = money(i.hourly_min), money(i.hourly_max)
        rows.append([i.name, i.kind + (" (committed)" if i.committed else ""), count, each, lo, hi, price_read(i)])
    return rows


TEAM_HEADER = ["team", "pool", "nominal quota", "with borrowing", "$/h nominal", "$/h with borrowing"]


def team_rows(cost: Cost) -> list[list[str]]:
    return [[t.team, t.pool, f"{t.nominal} {t.resource}", f"{t.most}", money(t.hourly_nominal), money(t.hourly_max)]
            for t in cost.teams]
