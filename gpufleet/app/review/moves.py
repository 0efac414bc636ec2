"""Kubernetes version moves the cloud refuses: what `gpufleet diff` lists first as "will fail at `pulumi up`".

Each platform declares the moves it refuses (VersionTraits.move_rules, each with its source) and which of its resources
run a Kubernetes version (ReviewTraits.kubernetes_parts). Here the rules are judged on the plan JSON's resources: a part
against itself before and after (paired by URN: a downgrade, a move of more minors than the platform takes at once),
and every node pool against the control plane after the change (skew). `gpufleet preview|up` judge the same rules
between a stack's deployed outputs (`platform`, `kubernetesVersion`) and its offline plan before the engine starts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Optional

from gpufleet.base import platforms
from gpufleet.base.platforms.contract.review import VersionedPart
from gpufleet.base.platforms.contract.versions import CONTROL_PLANE, NODE_POOL, MoveRule, minor

NAMESPACE = "gpufleet"


@dataclass(frozen=True)
class RefusedMove:
    """One version move a platform refuses: where, from what to what, why, what works instead and the source."""

    platform: str
    part: str  # control plane | node pool
    name: str
    urn: str
    key: str
    before: str
    after: str
    why: str
    instead: str
    source: str

    @property
    def stack_key(self) -> str:
        return f"{NAMESPACE}:{self.key}"

    def line(self) -> str:
        """One line for text output and errors."""
        return (f"{self.part} {self.name}: {self.before} → {self.after} {self.why}; instead: {self.instead} "
                f"(stack key {self.stack_key}; source: {self.source})")

    def to_json(self) -> dict:
        return {"platform": self.platform, "part": self.part, "name": self.name, "urn": self.urn, "key": self.stack_key,
                "before": self.before, "after": self.after, "why": self.why, "instead": self.instead,
                "source": self.source}


@dataclass(frozen=True)
class _Found:
    platform: str
    urn: str
    part: VersionedPart


def _fmt(m: tuple[int, int]) -> str:
    return f"{m[0]}.{m[1]}"


def parts_of(resources: Iterable[dict]) -> list[_Found]:
    """Every resource that runs a Kubernetes version, as its platform reads it (a part without a name takes the
    resource's name)."""
    out = []
    for r in resources:
        if not isinstance(r, dict):
            continue
        t, inputs = str(r.get("type") or ""), r.get("inputs") or {}
        if not isinstance(inputs, dict):
            continue
        for name in platforms.names():
            for part in platforms.get(name).review.kubernetes_parts(t, inputs):
                if minor(part.version) is None:
                    continue
                if not part.name:
                    part = VersionedPart(part.part, str(r.get("name") or r.get("urn", "").rsplit("::", 1)[-1]),
                                         part.version, part.key)
                out.append(_Found(name, str(r.get("urn") or ""), part))
    return out


def _rules(platform: str, part: str, kind: str) -> list[MoveRule]:
    return [r for r in platforms.get(platform).versions.move_rules if r.part == part and r.kind == kind]


def judge_move(platform: str, urn: str, part: VersionedPart, before_version: str) -> list[RefusedMove]:
    """The no-downgrade and step rules for one part moving from `before_version` to its own version."""
    was, now = minor(before_version), minor(part.version)
    if was is None or now is None or was == now:
        return []
    out = []
    if now < was:
        for rule in _rules(platform, part.part, "no-downgrade"):
            instead = f'keep {part.key}: "{_fmt(was)}"' + (f"; {rule.instead}" if rule.instead else "")
            out.append(RefusedMove(platform, part.part, part.name, urn, part.key, _fmt(was), _fmt(now),
                                   f"is a downgrade, which {platform} refuses", instead, rule.source))
    elif now[0] == was[0]:
        for rule in _rules(platform, part.part, "step"):
            if now[1] - was[1] > rule.limit:
                first = (was[0], was[1] + rule.limit)
                out.append(RefusedMove(
                    platform, part.part, part.name, urn, part.key, _fmt(was), _fmt(now),
                    f"moves {now[1] - was[1]} minors at once; {platform} moves {rule.limit} at a time",
                    f'{_fmt(was)} → {_fmt(first)} first: set {part.key}: "{_fmt(first)}", `pulumi up`, then the next '
                    "minor in a later change" + (f"; {rule.instead}" if rule.instead else ""),
                    rule.source))
    return out


def judge_skew(found: list[_Found]) -> list[RefusedMove]:
    """Every node pool that sets its own version against the control plane(s) of its platform, after the change."""
    out = []
    planes: dict[str, list[tuple[int, int]]] = {}
    for f in found:
        if f.part.part == CONTROL_PLANE:
            planes.setdefault(f.platform, []).append(minor(f.part.version))
    for f in found:
        if f.part.part != NODE_POOL or f.platform not in planes:
            continue
        pool = minor(f.part.version)
        newest, oldest = max(planes[f.platform]), min(planes[f.platform])
        for rule in _rules(f.platform, NODE_POOL, "skew"):
            if pool > oldest:
                out.append(RefusedMove(
                    f.platform, NODE_POOL, f.part.name, f.urn, f.part.key, _fmt(oldest), _fmt(pool),
                    f"puts the node pool at {_fmt(pool)}, newer than the control plane ({_fmt(oldest)})",
                    f"move the control plane to {_fmt(pool)} first, then the pool in a later change", rule.source))
            elif pool[0] == newest[0] and newest[1] - pool[1] > rule.limit:
                floor = (newest[0], newest[1] - rule.limit)
                out.append(RefusedMove(
                    f.platform, NODE_POOL, f.part.name, f.urn, f.part.key, _fmt(newest), _fmt(pool),
                    f"leaves the node pool {newest[1] - pool[1]} minors behind the control plane; {f.platform} allows "
                    f"{rule.limit}",
                    f"move the pool to {_fmt(floor)} or later before the control plane goes to {_fmt(newest)}",
                    rule.source))
    return out


def refused_moves(base: list[dict], head: list[dict]) -> list[RefusedMove]:
    """The refused moves of going from the base plan's resources to the head's: each part paired by URN and role, then
    the head's skew. Control planes first, then by name."""
    old = {(f.urn, f.part.part, f.platform): f for f in parts_of(base)}
    new = parts_of(head)
    out = []
    for f in new:
        prev = old.get((f.urn, f.part.part, f.platform))
        if prev is not None:
            out += judge_move(f.platform, f.urn, f.part, prev.part.version)
    out += judge_skew(new)
    return _sorted(out)


def refused_from_deployed(outputs: dict[str, Any], head: list[dict]) -> list[RefusedMove]:
    """The refused moves of going from what a stack runs (its outputs after the last `up`: `platform` and
    `kubernetesVersion`, which the program exports) to its offline plan: every control plane of the head is judged
    against the deployed version, then the head's skew. [] when the outputs name no version (never deployed)."""
    deployed, platform = outputs.get("kubernetesVersion"), outputs.get("platform")
    if minor(deployed) is None or not isinstance(platform, str):
        return []
    new = parts_of(head)
    out = []
    for f in new:
        if f.platform == platform and f.part.part == CONTROL_PLANE:
            out += judge_move(f.platform, f.urn, f.part, str(deployed))
    out += judge_skew(new)
    return _sorted(out)


def _sorted(moves: list[RefusedMove]) -> list[RefusedMove]:
    seen: set = set()
    unique = []
    for m in moves:
        key = (m.urn, m.part, m.why, m.source)
        if key not in seen:
            seen.add(key)
            unique.append(m)
    return sorted(unique, key=lambda m: (m.part != CONTROL_PLANE, m.name, m.why))


def first_line(moves: list[RefusedMove]) -> Optional[str]:
    """A one-line summary ("2 version moves the cloud refuses"), or None."""
    if not moves:
        return None
    return f"{len(moves)} version move{'s' if len(moves) != 1 else ''} the cloud refuses: will fail at `pulumi up`"
