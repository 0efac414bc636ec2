"""Pair two offline plans (the `gpufleet plan --format json` contract) by URN and say what changes.

Each resource becomes one `ResourceChange`: create, update, replace or delete, grouped by its component
(the parent chain), with the changed input paths, and which of them force replacement (replacement.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from gpufleet.app import input_files
from gpufleet.app.review import plan_document, replacement
from gpufleet.base import limits, platforms

SECRET = "[secret]"
_LONG = 80


class ReviewInputError(Exception):
    """An input file is missing, unreadable or not in the expected format (exit code 2)."""


@dataclass(frozen=True)
class InputChange:
    path: str
    before: Any
    after: Any
    forces: Optional[str] = None
    """The replace rule this change hits (`instanceTypes`), or None when it updates in place."""
    source: Optional[str] = None
    certain: bool = True
    """False when the rule forces replacement only in some directions (e.g. shrinking a file system)."""

    def to_json(self) -> dict:
        return {
            "path": self.path, "before": self.before, "after": self.after, "forcesReplacement": self.forces,
            "source": self.source, "certain": self.certain,
        }


@dataclass
class ResourceChange:
    op: str  # create | update | replace | delete
    urn: str
    type: str
    name: str
    group: str
    """The component chain it belongs to, e.g. `dev › dev-pool-l4`."""
    inputs: list[InputChange] = field(default_factory=list)
    replace_reasons: list[str] = field(default_factory=list)
    """Input paths forcing the replacement (from the table, or the engine's replaceReasons)."""
    may_replace: bool = False
    """An update that replaces the resource only in some directions (see the reasons' sources)."""
    holds: Optional[str] = None
    """What the resource holds when it is stateful (replacement.data_held), else None."""
    unprotects: list[str] = field(default_factory=list)
    """Protection this change removes: "protect" and/or "retainOnDelete" (on before, off after)."""
    hidden: list[str] = field(default_factory=list)
    """What changed inside its secret inputs, as a reviewer calls it ("node labels"), from the plans' digests."""
    rollout: Optional[str] = None
    """An in-place update that replaces the nodes the resource runs (a node image moved: ReviewTraits.node_rollout),
    what happens to them; else None."""

    @property
    def kind(self) -> Optional[str]:
        return replacement.disruptive_kind(self.type)

    @property
    def data_loss(self) -> bool:
        """Deleting or replacing a resource that holds data: possible data loss."""
        return self.holds is not None and (self.op in ("replace", "delete") or self.may_replace)

    @property
    def disruptive(self) -> bool:
        """Replacing anything, deleting a cluster, node pool, file system, network, host install or anything that holds
        data, removing a resource's protection, or an update that replaces the nodes a pool runs (`rollout`)."""
        return (self.op == "replace" or self.may_replace or (self.op == "delete" and self.kind is not None)
                or self.data_loss or bool(self.unprotects) or bool(self.rollout))

    def to_json(self) -> dict:
        return {
            "op": self.op, "urn": self.urn, "type": self.type, "name": self.name, "group": self.group,
            "disruptive": self.disruptive, "mayReplace": self.may_replace, "replaceReasons": self.replace_reasons,
            "dataLoss": self.data_loss, "holds": self.holds, "unprotects": self.unprotects, "hidden": self.hidden,
            "rollout": self.rollout,
            "inputs": [c.to_json() for c in self.inputs],
        }


def load_json_document(path: str, what: str) -> Any:
    """Read a JSON file, tolerating non-JSON lines before it ("Installing policy pack ..."): UTF-8, nested at
    most gpufleet.base.limits.JSON_MAX_DEPTH deep (gpufleet.app.input_files)."""
    try:
        text = input_files.read_text(path, what)
    except input_files.InputFileError as exc:
        raise ReviewInputError(str(exc)) from None
    start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
    while start >= 0:
        try:
            doc = json.JSONDecoder().raw_decode(text[start:])[0]
        except RecursionError:  # json's C decoder counts its levels against the recursion limit, and unwinds
            raise ReviewInputError(f"{what} {path}: maps and lists nest deeper than {limits.JSON_MAX_DEPTH} levels") from None
        except json.JSONDecodeError:
            nxt = [i for i in (text.find("{", start + 1), text.find("[", start + 1)) if i >= 0]
            start = min(nxt) if nxt else -1
            continue
        try:
            input_files.check_depth(doc, f"{what} {path}")
        except input_files.InputFileError as exc:
            raise ReviewInputError(str(exc)) from None
        return doc
    raise ReviewInputError(f"{what} {path} contains no JSON document")


def load_plan(path: str) -> dict:
    """A plan JSON (DESIGN.md §5), checked for the keys the review reads."""
    doc = load_json_document(path, "plan")
    if isinstance(doc, dict) and isinstance(doc.get("fleet"), dict) and isinstance(doc.get("stacks"), dict):
        for stack, plan in doc["stacks"].items():  # a fleet plan: each stack's plan, or its error
            if not isinstance(plan, dict) or not ("error" in plan or isinstance(plan.get("resources"), list)):
                raise ReviewInputError(f"fleet plan {path}: stacks.{stack} is neither a plan nor an error")
            wrong = None if "error" in plan else plan_document.summary(plan)
            if wrong:
                raise ReviewInputError(f"fleet plan {path}: stacks.{stack}: {wrong}")
        return doc
    if not isinstance(doc, dict) or not isinstance(doc.get("resources"), list) or "stack" not in doc:
        raise ReviewInputError(
            f"plan {path} is not a `gpufleet plan --format json` document (needs 'stack' and a 'resources' list)"
        )
    for i, r in enumerate(doc["resources"]):
        if not isinstance(r, dict) or not {"urn", "type"} <= set(r):
            raise ReviewInputError(f"plan {path}: resources[{i}] has no 'urn'/'type'")
    wrong = plan_document.summary(doc)
    if wrong:
        raise ReviewInputError(f"plan {path}: {wrong}")
    return doc


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Leaf paths of a nested input value: {'scalingConfig.maxSize': 4, 'instanceTypes[0]': 'p5.48xlarge'}."""
    if isinstance(value, dict) and value:
        out: dict[str, Any] = {}
        for k in sorted(value):
            out.update(flatten(value[k], f"{prefix}.{k}" if prefix else str(k)))
        return out
    if isinstance(value, list) and value:
        out = {}
        for i, v in enumerate(value):
            out.update(flatten(v, f"{prefix}[{i}]"))
        return out
    return {prefix: value}


def input_changes(type_: str, before: dict, after: dict) -> list[InputChange]:
    """Changed leaf inputs, replacement-forcing ones first; equal secrets are invisible and not reported."""
    old, new = flatten(before or {}), flatten(after or {})
    changes = []
    for path in sorted(set(old) | set(new)):
        a, b = old.get(path), new.get(path)
        if a == b:
            continue
        hit = replacement.forcing_rule(type_, path)
        changes.append(InputChange(path, a, b, *(hit if hit else (None, None, True))))
    return sorted(changes, key=lambda c: (c.forces is None, not c.certain, c.path))


def groups(resources: list[dict]) -> dict[str, str]:
    """URN -> the chain of component names it sits under (`dev › dev-pool-l4`); top level: its own stack."""
    by_urn = {r["urn"]: r for r in resources}

    def chain(urn: Optional[str]) -> list[str]:
        names = []
        seen = set()
        while urn and urn in by_urn and urn not in seen:
            seen.add(urn)
            names.append(by_urn[urn].get("name") or urn.rsplit("::", 1)[-1])
            urn = by_urn[urn].get("parent")
        return list(reversed(names))

    return {r["urn"]: " › ".join(chain(r.get("parent"))) or "(stack)" for r in resources}


def change_for(op: str, r: dict, group: str, before: Optional[dict], after: Optional[dict]) -> ResourceChange:
    inputs = input_changes(r["type"], before or {}, after or {}) if op == "update" else []
    change = ResourceChange(op, r["urn"], r["type"], r.get("name") or r["urn"].rsplit("::", 1)[-1], group, inputs)
    forcing = [c for c in inputs if c.forces]
    if any(c.certain for c in forcing):
        change.op = "replace"
        change.replace_reasons = sorted({c.path for c in forcing if c.certain})
    elif forcing:
        change.may_replace = True
        change.replace_reasons = sorted({c.path for c in forcing})
    elif inputs:
        change.rollout = node_rollout(r["type"], before or {}, after or {})
    return change


def node_rollout(type_: str, before: dict, after: dict) -> Optional[str]:
    """What an in-place update does to the nodes a resource runs (ReviewTraits.node_rollout of the platform whose
    provider owns the type), or None."""
    for name in platforms.names():
        found = platforms.get(name).review.node_rollout(type_, before, after)
        if found:
            return found
    return None


def hidden_name(type_: str, path: str) -> str:
    """What a reviewer calls a key of a secret input (ReviewTraits.hidden_names), else its path."""
    for name in platforms.names():
        found = platforms.get(name).review.hidden_names.get(type_, {}).get(path)
        if found:
            return found
    return path


def hidden_changes(type_: str, before: Any, after: Any) -> list[InputChange]:
    """The keys of secret inputs whose digest changed between two plans' `secretDigests` (app/plan/secret_digests.py),
    as input changes from digest to digest; [] unless both plans carry digests (an older plan does not)."""
    if not isinstance(before, dict) or not isinstance(after, dict):
        return []
    out = []
    for secret in sorted(set(before) | set(after)):
        old, new = before.get(secret) or {}, after.get(secret) or {}
        if not isinstance(old, dict) or not isinstance(new, dict):
            continue
        for key in sorted(set(old) | set(new)):
            if old.get(key) != new.get(key):
                path = f"{secret}.{key}" if key else secret
                hit = replacement.forcing_rule(type_, path)
                out.append(InputChange(path, old.get(key), new.get(key), *(hit if hit else (None, None, True))))
    return out


PROTECTION_OPTIONS = ("protect", "retainOnDelete")


def removed_protection(before: Optional[dict], after: Optional[dict]) -> list[str]:
    """The protection options on in `before` and off in `after` (resource options of the plan JSON, or engine
    states); [] when either side does not say (a plan from before options were recorded)."""
    if not isinstance(before, dict) or not isinstance(after, dict):
        return []
    return [k for k in PROTECTION_OPTIONS if before.get(k) is True and after.get(k) is False]


def mark_stateful(change: ResourceChange, inputs: Optional[dict], protected_before: bool) -> ResourceChange:
    change.holds = replacement.data_held(change.type, inputs, protected_before)
    return change


def diff_resources(base: list[dict], head: list[dict]) -> list[ResourceChange]:
    """Pair by URN: created, updated/replaced (inputs differ, or protection removed), deleted. Unchanged resources
    are left out."""
    old = {r["urn"]: r for r in base}
    new = {r["urn"]: r for r in head}
    g_old, g_new = groups(base), groups(head)
    changes = []
    for urn, r in new.items():
        if urn not in old:
            changes.append(change_for("create", r, g_new[urn], None, r.get("inputs")))
            continue
        before_opts = old[urn].get("options")
        unprotects = removed_protection(before_opts, r.get("options"))
        protected = bool((before_opts or {}).get("protect"))
        change = None
        if (old[urn].get("inputs") or {}) != (r.get("inputs") or {}):
            change = change_for("update", r, g_new[urn], old[urn].get("inputs"), r.get("inputs"))
            if not change.inputs:  # secrets that differ only in ciphertext are invisible: no change to report
                change = None
        hidden = hidden_changes(r["type"], old[urn].get("secretDigests"), r.get("secretDigests"))
        if hidden:
            change = change or change_for("update", r, g_new[urn], None, None)
            change.inputs = sorted([*change.inputs, *hidden],
                                   key=lambda c: (c.forces is None, not c.certain, c.path))
            change.hidden = list(dict.fromkeys(hidden_name(r["type"], c.path) for c in hidden))
        if unprotects and change is None:
            change = change_for("update", r, g_new[urn], None, None)
        if change is not None:
            change.unprotects = unprotects
            changes.append(mark_stateful(change, old[urn].get("inputs"), protected))
    for urn, r in old.items():
        if urn not in new:
            change = change_for("delete", r, g_old[urn], r.get("inputs"), None)
            changes.append(mark_stateful(change, r.get("inputs"), bool((r.get("options") or {}).get("protect"))))
    return sorted(changes, key=lambda c: (c.group, c.name, c.type))


def short(value: Any, limit: int = _LONG) -> str:
    """A value for one table cell: scalars as JSON, long or multi-line text summarised."""
    if value is None:
        return "(unset)"
    if value == SECRET:
        return "[secret]"
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    if "\n" in text:
        return f"({len(text.splitlines())}-line text)"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def text_delta(before: Any, after: Any) -> Optional[str]:
    """For multi-line strings (scripts): the first changed line, `- old` / `+ new`."""
    if not (isinstance(before, str) and isinstance(after, str) and ("\n" in before or "\n" in after)):
        return None
    a, b = before.splitlines(), after.splitlines()
    for i in range(max(len(a), len(b))):
        x = a[i] if i < len(a) else ""
        y = b[i] if i < len(b) else ""
        if x != y:
            return f"line {i + 1}: - {short(x.strip())} + {short(y.strip())}"
    return None
