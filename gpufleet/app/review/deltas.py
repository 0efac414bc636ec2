"""GPU capacity, hourly cost and upstream versions before and after, read from two plans' JSON."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from gpufleet.base import platforms
from gpufleet.base.versions import chart_name_of

# Capacity fields a reviewer compares per pool (the plan JSON's capacity[] keys).
CAPACITY_FIELDS = ("gpu", "gpusPerNode", "capacityType", "capacitySource", "minNodes", "maxNodes", "minGpus", "maxGpus",
                   "advertisedPerNode", "pricePerNodeHour", "allocation")
# Capacity kinds whose nodes come from Dynamic Workload Scheduler (gpufleet/base/spec/features/reservation.py DWS_MODES).
DWS_KINDS = ("flex-start", "queued")

# Policies whose findings decide whether versions are still aligned (driver/CUDA/operator/Kubernetes).
VERSION_POLICY_WORDS = ("version", "driver", "cuda", "align", "kubernetes")


@dataclass(frozen=True)
class PoolDelta:
    pool: str
    before: Optional[dict]
    after: Optional[dict]

    @property
    def status(self) -> str:
        if self.before is None:
            return "added"
        if self.after is None:
            return "removed"
        return "changed" if self.changed_fields else "unchanged"

    @property
    def changed_fields(self) -> list[str]:
        if self.before is None or self.after is None:
            return []
        return [f for f in CAPACITY_FIELDS if self.before.get(f) != self.after.get(f)]

    @property
    def capacity_disruption(self) -> Optional[str]:
        """Why this pool's change disrupts it, or None: its capacity source (below), moving it off DRA, or sizing it
        across a partial NVLink domain (issue 34, docs/dra.md). Resource diffs alone miss these: a Karpenter NodePool
        changes in place, a node label or a k3s host list is one input among many."""
        if self.before is None or self.after is None:
            return None
        reasons = [r for r in (self._source_disruption(), self._allocation_disruption(), self._nvlink_disruption()) if r]
        return "; ".join(reasons) or None

    def _allocation_disruption(self) -> Optional[str]:
        """dra -> device-plugin: the pool's ResourceClaimTemplates and ComputeDomains lose the GPUs they claim, so every
        pod that claims through them stays pending (and Kueue's DRA quota for the pool goes with them)."""
        was, now = self.before.get("allocation", "device-plugin"), self.after.get("allocation", "device-plugin")
        if was == "dra" and now != "dra":
            return (f"moves off DRA ({was} -> {now}): pods that claim its GPUs through ResourceClaimTemplates or a "
                    "ComputeDomain's channel stay pending, and multi-node NVLink jobs lose their IMEX channels")
        return None

    def _nvlink_disruption(self) -> Optional[str]:
        """A size of a multi-node NVLink pool that this change makes a partial domain (machinesPerDomain from the plan's
        nvlinkDomains): idle GPUs in a paid domain, or a job split across two NVLink domains."""
        domains = self.after.get("nvlinkDomains") or {}
        unit = domains.get("machinesPerDomain")
        if not unit:
            return None
        broken = [f"{f} {self.before.get(f)} -> {self.after.get(f)}" for f in ("minNodes", "maxNodes")
                  if self.after.get(f) != self.before.get(f) and (self.after.get(f) or 0) % unit]
        if not broken:
            return None
        return (f"breaks an NVLink domain ({', '.join(broken)}): not a multiple of {unit:g} machines per domain "
                f"({domains.get('system')}, {domains.get('gpusPerDomain', 0):g} GPUs)")

    def _source_disruption(self) -> Optional[str]:
        """Dropping or changing a reservation puts its nodes on capacity that may not be there (and the reserved nodes
        go on being paid); switching to DWS (flex-start, queued) replaces the nodes with ones that live at most 7 days
        or come only through ProvisioningRequests."""
        was, now = self.before.get("capacityType"), self.after.get("capacityType")
        src_was = self.before.get("capacitySource") or was
        src_now = self.after.get("capacitySource") or now
        if was == "reserved" and now != "reserved":
            return f"drops its reservation ({src_was}): nodes move to {now} capacity, which may not be available"
        if was == "reserved" and src_was != src_now:
            return f"changes reservation: {src_was} -> {src_now}"
        if now in DWS_KINDS and was != now:
            return f"switches {was} -> {now}: every node is replaced, and {now} nodes " + (
                "live at most 7 days" if now == "flex-start" else "come only through ProvisioningRequests (all at once)")
        return None

    def to_json(self) -> dict:
        return {"pool": self.pool, "status": self.status, "changed": self.changed_fields,
                "capacityDisruption": self.capacity_disruption, "before": self.before, "after": self.after}


def capacity_deltas(base: list[dict], head: list[dict]) -> list[PoolDelta]:
    """Per pool, in head order then removed pools; every pool is listed (unchanged ones too)."""
    old = {c["pool"]: c for c in base}
    new = {c["pool"]: c for c in head}
    order = [c["pool"] for c in head] + [c["pool"] for c in base if c["pool"] not in new]
    return [PoolDelta(p, old.get(p), new.get(p)) for p in order]


@dataclass(frozen=True)
class ItemDelta:
    """One cost item (paired by its `key`) before and after. `known` is False when it is unpriced on either side:
    its change is unknown, and it never shows as a saving or a cost."""

    key: str
    name: str
    before: Optional[dict]
    after: Optional[dict]

    @property
    def status(self) -> str:
        if self.before is None:
            return "added"
        if self.after is None:
            return "removed"
        same = all(self.before.get(k) == self.after.get(k) for k in ("hourlyMin", "hourlyMax", "unitHourly", "count",
                                                                      "countMin", "unpriced", "name"))
        return "unchanged" if same else "changed"

    @staticmethod
    def _unpriced(side: Optional[dict]) -> bool:
        return side is not None and (bool(side.get("unpriced")) or side.get("hourlyMax") is None)

    @property
    def known(self) -> bool:
        return not (self._unpriced(self.before) or self._unpriced(self.after))

    def _delta(self, key: str) -> Optional[float]:
        if not self.known:
            return None
        return round(float((self.after or {}).get(key) or 0.0) - float((self.before or {}).get(key) or 0.0), 4)

    @property
    def min_delta(self) -> Optional[float]:
        return self._delta("hourlyMin")

    @property
    def max_delta(self) -> Optional[float]:
        return self._delta("hourlyMax")

    def to_json(self) -> dict:
        return {"key": self.key, "name": self.name, "status": self.status, "known": self.known,
                "hourlyMinDelta": self.min_delta, "hourlyMaxDelta": self.max_delta,
                "before": self.before, "after": self.after}


def item_deltas(base: list[dict], head: list[dict]) -> list[ItemDelta]:
    """Every cost item of either plan, paired by key, in head order then removed items."""
    def key(i: dict) -> str:
        return str(i.get("key") or f"{i.get('kind')}:{i.get('name')}")

    old = {key(i): i for i in base}
    new = {key(i): i for i in head}
    order = [key(i) for i in head] + [key(i) for i in base if key(i) not in new]
    return [ItemDelta(k, (new.get(k) or old.get(k) or {}).get("name", k), old.get(k), new.get(k)) for k in order]


@dataclass(frozen=True)
class TeamDelta:
    team: str
    pool: str
    before: Optional[dict]
    after: Optional[dict]

    def _delta(self, key: str) -> Optional[float]:
        b, a = (self.before or {}).get(key, 0.0), (self.after or {}).get(key, 0.0)
        if b is None or a is None:
            return None
        return round(float(a) - float(b), 4)

    @property
    def nominal_delta(self) -> Optional[float]:
        return self._delta("hourlyNominal")

    @property
    def max_delta(self) -> Optional[float]:
        return self._delta("hourlyMax")

    def to_json(self) -> dict:
        return {"team": self.team, "pool": self.pool, "before": self.before, "after": self.after,
                "hourlyNominalDelta": self.nominal_delta, "hourlyMaxDelta": self.max_delta}


def team_deltas(base: list[dict], head: list[dict]) -> list[TeamDelta]:
    old = {(t.get("team"), t.get("pool")): t for t in base}
    new = {(t.get("team"), t.get("pool")): t for t in head}
    order = [k for k in new] + [k for k in old if k not in new]
    return [TeamDelta(k[0], k[1], old.get(k), new.get(k)) for k in order]


@dataclass(frozen=True)
class CostDelta:
    """Totals before and after, and the change. With item breakdowns on both sides the change is the sum of the
    items priced on both sides; items unpriced on either side are `unknown` and left out of it (no fake saving)."""

    currency: str
    min_before: float
    min_after: float
    max_before: float
    max_after: float
    unpriced_before: tuple[str, ...] = ()
    unpriced_after: tuple[str, ...] = ()
    items: tuple[ItemDelta, ...] = ()
    teams: tuple[TeamDelta, ...] = ()
    at_least_before: bool = False
    at_least_after: bool = False

    @property
    def itemized(self) -> bool:
        return bool(self.items)

    @property
    def unknown(self) -> list[ItemDelta]:
        return [i for i in self.items if not i.known and i.status != "unchanged"]

    @property
    def changed(self) -> list[ItemDelta]:
        return [i for i in self.items if i.status != "unchanged"]

    def _delta(self, attr: str, before: float, after: float) -> float:
        if not self.itemized:
            return round(after - before, 4)
        return round(sum(getattr(i, attr) or 0.0 for i in self.items if i.known), 4)

    @property
    def min_delta(self) -> float:
        return self._delta("min_delta", self.min_before, self.min_after)

    @property
    def max_delta(self) -> float:
        return self._delta("max_delta", self.max_before, self.max_after)

    def to_json(self) -> dict:
        return {
            "currency": self.currency,
            "hourlyMin": {"before": self.min_before, "after": self.min_after, "delta": self.min_delta},
            "hourlyMax": {"before": self.max_before, "after": self.max_after, "delta": self.max_delta},
            "atLeast": {"before": self.at_least_before, "after": self.at_least_after},
            "unpricedPools": {"before": list(self.unpriced_before), "after": list(self.unpriced_after)},
            "unknown": [i.key for i in self.unknown],
            "items": [i.to_json() for i in self.changed],
            "teams": [t.to_json() for t in self.teams],
        }


def pool_items(capacity: list[dict]) -> list[dict]:
    """Cost items of GPU pools read from a plan's capacity facts, for plans that predate `cost.items`."""
    out = []
    for c in capacity:
        price = c.get("pricePerNodeHour")
        lo, hi = c.get("minNodes") or 0, c.get("maxNodes") or 0
        out.append({"key": f"gpu-nodes:{c.get('pool')}", "name": f"GPU pool {c.get('pool')}", "kind": "gpu-nodes",
                    "count": hi, "countMin": lo, "unitHourly": price,
                    "hourlyMin": None if price is None else round(price * lo, 4),
                    "hourlyMax": None if price is None else round(price * hi, 4), "unpriced": price is None})
    return out


def cost_delta(base: dict, head: dict, base_capacity: Optional[list] = None, head_capacity: Optional[list] = None) -> CostDelta:
    """The cost change between two plans' `cost` (and, for plans without an item breakdown, their GPU pools)."""
    both = isinstance(base.get("items"), list) and isinstance(head.get("items"), list)
    if not both and (base.get("unpricedPools") or head.get("unpricedPools")):
        # an older plan: its totals counted unpriced pools as 0, so compare pool by pool instead
        base, head = dict(base, items=pool_items(base_capacity or [])), dict(head, items=pool_items(head_capacity or []))
        both = True
    return CostDelta(
        currency=head.get("currency") or base.get("currency") or "USD",
        min_before=float(base.get("hourlyMin") or 0.0),
        min_after=float(head.get("hourlyMin") or 0.0),
        max_before=float(base.get("hourlyMax") or 0.0),
        max_after=float(head.get("hourlyMax") or 0.0),
        unpriced_before=tuple(base.get("unpricedPools") or ()),
        unpriced_after=tuple(head.get("unpricedPools") or ()),
        items=tuple(item_deltas(base["items"], head["items"])) if both else (),
        teams=tuple(team_deltas(base.get("teams") or [], head.get("teams") or [])),
        at_least_before=bool(base.get("atLeast")),
        at_least_after=bool(head.get("atLeast")),
    )


def _get(d: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(d, dict):
            return None
        d = d.get(part)
    return d


def versions_of(resources: list[dict]) -> dict[str, set[str]]:
    """What each upstream component runs at, read from resource inputs by type token: Helm charts here, the
    platforms' resources as each platform reads them (ReviewTraits.versions)."""
    found: dict[str, set[str]] = {}

    def add(key: str, value: Any) -> None:
        if value not in (None, "", "[secret]"):
            found.setdefault(key, set()).add(str(value))

    for r in resources:
        t, inputs = r.get("type", ""), r.get("inputs") or {}
        if t in ("kubernetes:helm.sh/v3:Release", "kubernetes:helm.sh/v4:Chart"):
            chart = chart_name_of(str(inputs.get("chart") or "?"), str(inputs.get("version") or ""))
            if chart == "gpu-operator":
                add("GPU Operator chart", inputs.get("version"))
                driver = _get(inputs, "values.driver") or {}
                if isinstance(driver, dict) and driver.get("enabled") is False:
                    add("GPU driver", "preinstalled on the nodes")
                elif isinstance(driver, dict):
                    add("GPU driver", driver.get("version") or "operator release default")
            else:
                add(f"chart {chart}", inputs.get("version"))
        else:
            for name in platforms.names():
                for component, value in platforms.get(name).review.versions(t, inputs):
                    add(component, value)
    return found


@dataclass(frozen=True)
class VersionChange:
    component: str
    before: tuple[str, ...]
    after: tuple[str, ...]

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def to_json(self) -> dict:
        return {"component": self.component, "before": list(self.before), "after": list(self.after),
                "changed": self.changed}


def version_changes(base: list[dict], head: list[dict]) -> list[VersionChange]:
    """Every component's versions before and after (changed ones first, then by name)."""
    old, new = versions_of(base), versions_of(head)
    out = [VersionChange(k, tuple(sorted(old.get(k, ()))), tuple(sorted(new.get(k, ())))) for k in set(old) | set(new)]
    return sorted(out, key=lambda v: (not v.changed, v.component))


def is_version_policy(policy: str) -> bool:
    return any(w in policy.lower() for w in VERSION_POLICY_WORDS)
