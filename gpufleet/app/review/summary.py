"""One model of a review, whichever input it came from (two offline plans, or a real preview + event log)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from gpufleet.base import labels
from gpufleet.base.spec import ids
from gpufleet.app.review.crds import crd_changes
from gpufleet.app.review.disruption import disruption_lines, driver_rollout
from gpufleet.app.review.kube import bump_lines
from gpufleet.base.chart_crds import charts_dir
from gpufleet.app.review.config import ConfigChange, config_changes
from gpufleet.app.review.deltas import (
    CostDelta, PoolDelta, VersionChange, capacity_deltas, cost_delta, is_version_policy, version_changes,
)
from gpufleet.app.review.diff import ResourceChange, ReviewInputError, diff_resources
from gpufleet.app.review.moves import NAMESPACE, RefusedMove, refused_moves

MARKER = "<!-- gpufleet-review:{stack} -->"
PREVIEW_MARKER = "<!-- gpufleet-review:{stack}:preview -->"
FLEET = "fleet"
"""The fleet summary's name: its file (`fleet.md`) and marker (`<!-- gpufleet-review:fleet -->`)."""

STACK_NAME = re.compile(ids.STACK_NAME.strip("^$"))
"""The stack names the review puts in a file name and a marker: Pulumi's own rule (gpufleet/base/spec/ids.py), matched whole. None of these characters can end an HTML comment
(`-->` needs `>`), add a `:preview` suffix, leave the review directory (`/`) or mention anyone (`@`)."""
RESERVED = frozenset({FLEET, ".", ".."})
"""Names that would overwrite the fleet summary (`fleet.md` and its marker) or mean a directory; compared
case-insensitively, since `Fleet.md` is `fleet.md` on macOS and Windows file systems."""


def stack_name_problem(stack: object) -> Optional[str]:
    """Why `stack` cannot name a review file or marker, or None when it can."""
    if not isinstance(stack, str) or not STACK_NAME.fullmatch(stack):
        return ("a stack name for the review must be 1 to 100 letters, digits, '.', '_' or '-' "
                "(Pulumi's stack name rule)")
    if stack.lower() == FLEET:
        return f"the name is reserved: the review writes {FLEET}.md and its marker for the fleet summary"
    if stack in RESERVED:
        return "the name is reserved: it means a directory"
    return None


def marker(stack: str, preview: bool = False) -> str:
    """The hidden line a workflow finds to update this stack's comment in place (the preview has its own).

    Only for names `stack_name_problem` accepts: anything else could close the comment early or take another
    stack's marker, so it raises ValueError (callers check first and report the name as invalid)."""
    problem = stack_name_problem(stack)
    if problem:
        raise ValueError(f"stack name {stack!r}: {problem}")
    return (PREVIEW_MARKER if preview else MARKER).format(stack=stack)


@dataclass(frozen=True)
class PolicyVerdict:
    policy: str
    level: str  # mandatory | advisory (remediate/disabled as the engine reports them)
    urn: str
    message: str
    status: str = "head"
    """new (not in the base), existing (in the base too), resolved (base only), head (no base to compare)."""
    pack: str = ""
    key: str = ""
    """The stack key the finding is about (`gpufleet:nodePools[0].minNodes`), when the resource is a gpufleet pool's."""
    stack_fix: str = ""
    """The exact change or exemption to write in the stack file, when the resource is a gpufleet pool's."""

    @property
    def resource(self) -> str:
        return self.urn.rsplit("::", 1)[-1] if self.urn else "(stack)"

    @property
    def rule(self) -> str:
        """What the policy requires: the engine prefixes the message with it (first line), else our pack's text."""
        lines = [line.strip() for line in self.message.splitlines() if line.strip()]
        if len(lines) > 1:
            return lines[0]
        return _policy_descriptions().get(self.policy, "")

    @property
    def finding(self) -> str:
        """The violation itself, without the rule's description."""
        lines = [line.strip() for line in self.message.splitlines() if line.strip()]
        return " ".join(lines[1:] if len(lines) > 1 else lines)

    @property
    def exemption(self) -> str:
        """The label/tag that exempts a resource from this policy, with a placeholder for the reason."""
        return f'{labels.exempt_key(self.policy)}: "<reason>"'

    FIX = "Change the input the finding names so the rule holds, or exempt the resource visibly with the label/tag {}."

    @property
    def fix(self) -> str:
        return self.stack_fix or self.FIX.format(f"`{self.exemption}`")

    def to_json(self) -> dict:
        return {"policy": self.policy, "level": self.level, "urn": self.urn, "message": self.message,
                "rule": self.rule, "finding": self.finding, "status": self.status, "pack": self.pack, "fix": self.fix,
                "key": self.key or None}


def _stack_fixes() -> dict[str, tuple[str, str]]:
    """Policy -> (pool stack key, fixing value) from our pack (empty if it cannot be imported)."""
    try:
        from gpufleet.policies.pack import STACK_FIXES
    except Exception:  # noqa: BLE001 - as _policy_descriptions
        return {}
    return dict(STACK_FIXES)


def pool_index(urn: str, resources: list[dict], pools: list[str]) -> Optional[int]:
    """The index under `gpufleet:nodePools` of the pool a resource belongs to: the first of it and its ancestors named
    `<cluster>-pool-<pool>` (how every platform names a pool's component), else None."""
    by_urn = {r.get("urn"): r for r in resources if isinstance(r, dict)}
    seen = set()
    while urn in by_urn and urn not in seen:
        seen.add(urn)
        name = str(by_urn[urn].get("name") or "")
        for i, pool in enumerate(pools):
            if name.endswith(f"-pool-{pool}"):
                return i
        urn = by_urn[urn].get("parent")
    return None


def with_stack_keys(verdicts: list[PolicyVerdict], head: dict) -> list[PolicyVerdict]:
    """Each finding on a gpufleet pool's resource, with the stack key it is about and the exact change or exemption to
    write (`gpufleet:nodePools[0].minNodes: 0`, or `gpufleet:nodePools[0].exemptions: {<policy>: "<reason>"}`)."""
    import dataclasses

    pools = [str(c.get("pool")) for c in head.get("capacity") or [] if isinstance(c, dict)]
    resources = head.get("resources") or []
    fixes = _stack_fixes()
    out = []
    for v in verdicts:
        i = pool_index(v.urn, resources, pools) if v.status != "resolved" else None
        if i is None:
            out.append(v)
            continue
        pool = f"{NAMESPACE}:nodePools[{i}]"
        exempt = f'{pool}.exemptions: {{{v.policy}: "<reason>"}}'
        if v.policy in fixes:
            key, value = fixes[v.policy]
            fix = f"set `{pool}.{key}: {value}`, or exempt the pool visibly: `{exempt}`"
            out.append(dataclasses.replace(v, key=f"{pool}.{key}", stack_fix=fix))
        else:
            fix = f"change pool `{pool}` ({pools[i]}) so the rule holds, or exempt it visibly: `{exempt}`"
            out.append(dataclasses.replace(v, key=pool, stack_fix=fix))
    return out


def _policy_descriptions() -> dict[str, str]:
    """Rule descriptions from our pack (empty if it cannot be imported: the review still renders)."""
    try:
        from gpufleet.policies.pack import POLICIES
    except Exception:  # noqa: BLE001 - a broken pack must not break the review of the change that broke it
        return {}
    return {p.name: p.description or "" for p in POLICIES}


_LEVEL_ORDER = {"mandatory": 0, "remediate": 1, "advisory": 2, "disabled": 3}


def sort_verdicts(verdicts: list[PolicyVerdict]) -> list[PolicyVerdict]:
    status_order = {"new": 0, "head": 0, "existing": 1, "resolved": 2}
    return sorted(verdicts, key=lambda v: (status_order.get(v.status, 1), _LEVEL_ORDER.get(v.level, 2),
                                           v.policy, v.resource))


@dataclass
class Review:
    stack: str
    source: str  # "offline plans" | "pulumi preview"
    changes: list[ResourceChange]
    verdicts: list[PolicyVerdict]
    versions: list[VersionChange]
    capacity: Optional[list[PoolDelta]] = None
    """None when the input has no capacity facts (a preview); [] when no stack has GPU pools."""
    cost: Optional[CostDelta] = None
    notes: list[str] = field(default_factory=list)
    warnings: list[PlanWarning] = field(default_factory=list)
    """The head plan's warnings (support calendars, unchecked lookups, stale catalog); [] for a preview."""
    config: list[ConfigChange] = field(default_factory=list)
    """Changes to the stack file outside `gpufleet:` (review/config.py): findings a reviewer must see."""
    config_note: Optional[str] = None
    """Why those were not compared (a plan without the record, a preview), or None."""
    refused: list[RefusedMove] = field(default_factory=list)
    """Kubernetes version moves the platform refuses (review/moves.py): `pulumi up` would fail partway, so the review
    fails (exit 1) and lists them first."""
    crds: list = field(default_factory=list)
    """CRD changes of the charts whose version moves (review/crds.py CrdChange); [] for a preview."""
    crd_notes: list[str] = field(default_factory=list)
    """Charts whose CRDs could not be compared, and why."""

    kubernetes_bump: list[str] = field(default_factory=list)
    """A Kubernetes minor bump and what the new minor needs (review/kube.py); [] otherwise."""
    driver_rollout: list[str] = field(default_factory=list)
    """What a change of the operator-managed driver rolls over the GPU nodes (review/disruption.py); [] otherwise."""

    @property
    def disruption(self) -> list[str]:
        """Changes of what may drain a GPU node under a running job (review/disruption.py)."""
        return self.driver_rollout + disruption_lines(self.changes)

    @property
    def marker(self) -> str:
        return marker(self.stack, preview=self.source == "pulumi preview")

    @property
    def disruptive(self) -> list[ResourceChange]:
        """Possible data loss first (deleting or replacing what holds data), then removed protection, then the rest."""
        return sorted((c for c in self.changes if c.disruptive),
                      key=lambda c: (not c.data_loss, not c.unprotects, c.op != "replace", c.group, c.name))

    @property
    def hidden(self) -> list[ResourceChange]:
        """Changes inside secret inputs (a k3s host's configuration), named by their keys."""
        return [c for c in self.changes if c.hidden]

    @property
    def capacity_disruptions(self) -> list[PoolDelta]:
        """Pools whose capacity changes disruptively (a reservation dropped, a switch to flex-start/queued, moved off
        DRA, a broken NVLink domain)."""
        return [p for p in self.capacity or [] if p.capacity_disruption]

    @property
    def blocking(self) -> list[PolicyVerdict]:
        """Mandatory violations present in the head (they fail the check)."""
        return [v for v in self.verdicts if v.level in ("mandatory", "remediate") and v.status != "resolved"]

    @property
    def has_mandatory(self) -> bool:
        return bool(self.blocking)

    @property
    def fails(self) -> bool:
        """The change cannot deploy: a mandatory violation, or a version move the cloud refuses (exit code 1)."""
        return bool(self.blocking or self.refused)

    @property
    def alignment(self) -> list[PolicyVerdict]:
        """Head findings of version policies: empty means versions are still aligned."""
        return [v for v in self.verdicts if v.status != "resolved" and is_version_policy(v.policy)]

    def counts(self) -> dict[str, int]:
        out = {"create": 0, "update": 0, "replace": 0, "delete": 0}
        for c in self.changes:
            out[c.op] = out.get(c.op, 0) + 1
        return out

    def to_json(self) -> dict:
        return {
            "stack": self.stack,
            "source": self.source,
            "marker": self.marker,
            "counts": self.counts(),
            "refusedMoves": [m.to_json() for m in self.refused],
            "disruptive": [c.urn for c in self.disruptive],
            "dataLoss": [c.urn for c in self.disruptive if c.data_loss],
            "disruptiveCapacity": [{"pool": p.pool, "reason": p.capacity_disruption} for p in self.capacity_disruptions],
            "changes": [c.to_json() for c in self.changes],
            "capacity": None if self.capacity is None else [p.to_json() for p in self.capacity],
            "cost": None if self.cost is None else self.cost.to_json(),
            "versions": [v.to_json() for v in self.versions],
            "versionsAligned": not self.alignment,
            "policies": [v.to_json() for v in self.verdicts],
            "mandatoryViolations": len(self.blocking),
            "notes": self.notes,
            "warnings": [w.to_json() for w in self.warnings],
            "configChanges": [c.to_json() for c in self.config],
            "configNote": self.config_note,
            "crdChanges": [c.to_json() for c in self.crds],
            "crdNotes": self.crd_notes,
            "disruptionChanges": self.disruption,
            "kubernetesBump": self.kubernetes_bump,
        }


@dataclass(frozen=True)
class PlanWarning:
    """A warning of the head plan (gpufleet plan's `warnings`), and whether the base plan lacked it."""

    path: str
    message: str
    new: bool

    def to_json(self) -> dict:
        return {"path": self.path, "message": self.message, "new": self.new}


def plan_warnings(base: list[dict], head: list[dict]) -> list[PlanWarning]:
    """The head plan's warnings in its order, each marked new when the base plan did not have it (same path and
    message): a version leaving support shows on every PR of the stack until it is upgraded, not only on the PR that
    happens to run on the day it starts."""
    old = {(w.get("path"), w.get("message")) for w in base if isinstance(w, dict)}
    return [PlanWarning(str(w.get("path") or ""), str(w.get("message") or ""), (w.get("path"), w.get("message")) not in old)
            for w in head if isinstance(w, dict)]


def _verdicts(base: list[dict], head: list[dict]) -> list[PolicyVerdict]:
    key = lambda v: (v.get("policy"), v.get("urn"), v.get("message"))  # noqa: E731
    old = {key(v) for v in base}
    new = {key(v) for v in head}
    out = [PolicyVerdict(v.get("policy", "?"), v.get("level", "advisory"), v.get("urn", ""), v.get("message", ""),
                         "existing" if key(v) in old else "new") for v in head]
    out += [PolicyVerdict(v.get("policy", "?"), v.get("level", "advisory"), v.get("urn", ""), v.get("message", ""),
                          "resolved") for v in base if key(v) not in new]
    return sort_verdicts(out)


def review_plans(base: dict, head: dict) -> Review:
    """The review of going from the base plan to the head plan (both in the plan JSON contract).

    Raises ReviewInputError when the head's stack name cannot name a comment (`stack_name_problem`)."""
    problem = stack_name_problem(head.get("stack"))
    if problem:
        raise ReviewInputError(f"head plan: stack {head.get('stack')!r}: {problem}")
    notes = []
    if base.get("stack") != head.get("stack"):
        notes.append(f"base plan is for stack '{base.get('stack')}', head for '{head.get('stack')}': "
                     "URNs differ, so every resource shows as replaced by a new one")
    config, config_note = config_changes(base, head)
    crds, crd_notes = crd_changes(base, head, charts_dir())
    from gpufleet.app.review import gitops

    notes += gitops.notes(base, head)
    return Review(
        stack=str(head.get("stack")),
        source="offline plans",
        config=config,
        config_note=config_note,
        changes=gitops.mark(diff_resources(gitops.resources(base), gitops.resources(head)), base, head),
        refused=refused_moves(base.get("resources") or [], head.get("resources") or []),
        verdicts=with_stack_keys(_verdicts(base.get("violations") or [], head.get("violations") or []), head),
        versions=version_changes(base.get("resources") or [], head.get("resources") or []),
        capacity=capacity_deltas(base.get("capacity") or [], head.get("capacity") or []),
        cost=cost_delta(base.get("cost") or {}, head.get("cost") or {}, base.get("capacity") or [], head.get("capacity") or []),
        notes=notes,
        warnings=plan_warnings(base.get("warnings") or [], head.get("warnings") or []),
        crds=crds,
        crd_notes=crd_notes,
        driver_rollout=driver_rollout(base, head),
        kubernetes_bump=bump_lines(base, head),
    )
