"""GPU capacity, hourly cost and upstream versions before and after, read from two plans' JSON."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

# Capacity fields a reviewer compares per pool (the plan JSON's capacity[] keys).
CAPACITY_FIELDS = ("gpu", "gpusPerNode", "capacityType", "capacitySource", "minNodes", "maxNodes", "minGpus", "maxGpus",
                   "advertisedPerNode", "pricePerNodeHour")
# Capacity kinds whose nodes come from Dynamic Workload Scheduler (gpufleet/spec/reservation.py DWS_MODES).
DWS_KINDS = ("flex-start", "queued")

# Policies whose findings decide whether versions are still aligned (driver/CUDA/operator/Kubernetes).
VERSION_POLICY_WORDS = ("version", "driver", "cuda", "align", "kubernetes")

_K3S_VERSION = re.compile(r"INSTALL_K3S_VERSION='?(v[0-9][^' ]*)")


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
        """Why this pool's change of capacity source disrupts it, or None. Dropping or changing a reservation puts
        its nodes on capacity that may not be there (and the reserved nodes go on being paid); switching to DWS
        (flex-start, queued) replaces the nodes with ones that live at most 7 days or come only through
        ProvisioningRequests. Resource diffs alone miss it: a Karpenter NodePool changes in place and drifts."""
        if self.before is None or self.after is None:
            return None
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
class CostDelta:
    currency: str
    min_before: float
    min_after: float
    max_before: float
    max_after: float
    unpriced_before: tuple[str, ...] = ()
    unpriced_after: tuple[str, ...] = ()

    @property
    def min_delta(self) -> float:
        return round(self.min_after - self.min_before, 4)

    @property
    def max_delta(self) -> float:
        return round(self.max_after - self.max_before, 4)

    def to_json(self) -> dict:
        return {
            "currency": self.currency,
            "hourlyMin": {"before": self.min_before, "after": self.min_after, "delta": self.min_delta},
            "hourlyMax": {"before": self.max_before, "after": self.max_after, "delta": self.max_delta},
            "unpricedPools": {"before": list(self.unpriced_before), "after": list(self.unpriced_after)},
        }


def cost_delta(base: dict, head: dict) -> CostDelta:
    return CostDelta(
        currency=head.get("currency") or base.get("currency") or "USD",
        min_before=float(base.get("hourlyMin") or 0.0),
        min_after=float(head.get("hourlyMin") or 0.0),
        max_before=float(base.get("hourlyMax") or 0.0),
        max_after=float(head.get("hourlyMax") or 0.0),
        unpriced_before=tuple(base.get("unpricedPools") or ()),
        unpriced_after=tuple(head.get("unpricedPools") or ()),
    )


def _get(d: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(d, dict):
            return None
        d = d.get(part)
    return d


def _chart_name(chart: Any) -> str:
    return str(chart).rstrip("/").rsplit("/", 1)[-1]


def versions_of(resources: list[dict]) -> dict[str, set[str]]:
    """What each upstream component runs at, read from resource inputs by type token."""
    found: dict[str, set[str]] = {}

    def add(key: str, value: Any) -> None:
        if value not in (None, "", "[secret]"):
            found.setdefault(key, set()).add(str(value))

    for r in resources:
        t, inputs = r.get("type", ""), r.get("inputs") or {}
        if t in ("kubernetes:helm.sh/v3:Release", "kubernetes:helm.sh/v4:Chart"):
            chart = _chart_name(inputs.get("chart") or "?")
            if chart == "gpu-operator":
                add("GPU Operator chart", inputs.get("version"))
                driver = _get(inputs, "values.driver") or {}
                if isinstance(driver, dict) and driver.get("enabled") is False:
                    add("GPU driver", "preinstalled on the nodes")
                elif isinstance(driver, dict):
                    add("GPU driver", driver.get("version") or "operator release default")
            else:
                add(f"chart {chart}", inputs.get("version"))
        elif t == "aws:eks/cluster:Cluster":
            add("Kubernetes (EKS control plane)", inputs.get("version"))
        elif t == "aws:eks/nodeGroup:NodeGroup":
            add("Kubernetes (EKS node groups)", inputs.get("version"))
            add("EKS AMI release", inputs.get("releaseVersion"))
        elif t == "aws:eks/addon:Addon":
            add(f"EKS add-on {inputs.get('addonName', '?')}", inputs.get("addonVersion"))
        elif t == "gcp:container/cluster:Cluster":
            add("Kubernetes (GKE control plane)", inputs.get("minMasterVersion"))
        elif t == "gcp:container/nodePool:NodePool":
            add("Kubernetes (GKE node pools)", inputs.get("version"))
            for acc in _get(inputs, "nodeConfig.guestAccelerators") or []:
                add("GKE GPU driver", _get(acc, "gpuDriverInstallationConfig.gpuDriverVersion"))
        elif t in ("command:remote:Command", "command:local:Command"):
            m = _K3S_VERSION.search(str(inputs.get("create") or ""))
            if m:
                add("k3s", m.group(1))
                add("Kubernetes (k3s)", ".".join(m.group(1).lstrip("v").split(".")[:2]))
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
