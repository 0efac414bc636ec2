"""Review a real `pulumi preview --json` joined by URN with the policy events of its `--event-log`.

Formats (pulumi/pulumi): the preview JSON is a `PreviewDigest` (pkg/display/json.go): `steps[]` with `op`,
`urn`, `oldState`/`newState` (apitype.ResourceV3: `type`, `inputs`, `parent`, ...), `diffReasons`,
`replaceReasons` and `detailedDiff` (a map of property path -> {kind, inputDiff}; null when the provider
gives no detailed diff), plus `diagnostics`. Policy violations are not in it: they are engine events,
one JSON object per line of the event log, `{"sequence", "timestamp", "policyEvent": {"resourceUrn",
"message", "color", "policyName", "policyPackName", "policyPackVersion", "enforcementLevel"}}`
(sdk/go/common/apitype/events.go; pulumi.automation.events.PolicyEvent in the Python SDK).
`pulumi preview --json` may print lines before the JSON (e.g. "Installing policy pack ..."): skipped.
"""

from __future__ import annotations

from typing import Optional

from gpufleet.app import input_files
from gpufleet.app.review.deltas import version_changes
from gpufleet.app.review.diff import (
    PROTECTION_OPTIONS, InputChange, ResourceChange, ReviewInputError, flatten, groups, input_changes,
    load_json_document, mark_stateful,
)
from gpufleet.app.review.summary import PolicyVerdict, Review, sort_verdicts, stack_name_problem

_REPLACE_OPS = {"replace", "create-replacement", "delete-replaced", "replace-replaced"}
_OPS = {"create": "create", "update": "update", "delete": "delete"}
_NOOP_OPS = {"same", "read", "refresh", "discard", "import", "remove-pending-replace", "read-replacement",
             "import-replacement", "read-discard", "discard-replaced"}
_REPLACE_KINDS = {"add-replace", "delete-replace", "update-replace"}


def urn_parts(urn: str) -> tuple[str, str, str]:
    """(stack, type, name) of `urn:pulumi:<stack>::<project>::<parent$...$type>::<name>`."""
    parts = urn.split("::", 3)
    if len(parts) != 4 or not parts[0].startswith("urn:pulumi:"):
        return "", "", urn
    return parts[0][len("urn:pulumi:"):], parts[2].rsplit("$", 1)[-1], parts[3]


def load_preview(path: str) -> dict:
    doc = load_json_document(path, "preview JSON")
    if not isinstance(doc, dict) or not isinstance(doc.get("steps", []), list):
        raise ReviewInputError(f"preview JSON {path} is not `pulumi preview --json` output (no 'steps' list)")
    for i, s in enumerate(doc.get("steps") or []):
        if not isinstance(s, dict) or "op" not in s or "urn" not in s:
            raise ReviewInputError(f"preview JSON {path}: steps[{i}] has no 'op'/'urn'")
    return doc


_LEVELS = {"warning": "advisory", "advisory": "advisory", "mandatory": "mandatory", "remediate": "remediate",
           "disabled": "disabled"}


def load_policy_events(path: str) -> list[PolicyVerdict]:
    """Policy violations from an engine event log (JSON lines; other events and non-JSON lines are skipped)."""
    try:
        lines = input_files.read_text(path, "event log").splitlines()
    except input_files.InputFileError as exc:
        raise ReviewInputError(str(exc)) from None
    seen, out = set(), []
    for number, line in enumerate(lines, 1):
        try:
            event = input_files.parse_json(line, f"event log {path} line {number}")
        except input_files.NotParsable:
            continue  # not an event (the CLI's own lines)
        except input_files.InputFileError as exc:
            raise ReviewInputError(str(exc)) from None
        p = event.get("policyEvent") if isinstance(event, dict) else None
        if not isinstance(p, dict):
            continue
        v = PolicyVerdict(
            policy=p.get("policyName") or "?",
            level=_LEVELS.get(str(p.get("enforcementLevel", "")).lower(), "advisory"),
            urn=p.get("resourceUrn") or "",
            message=str(p.get("message") or "").strip(),
            status="head",
            pack=p.get("policyPackName") or "",
        )
        if (v.policy, v.urn, v.message) not in seen:
            seen.add((v.policy, v.urn, v.message))
            out.append(v)
    return out


def _state(step: dict, key: str) -> dict:
    s = step.get(key)
    return s if isinstance(s, dict) else {}


def _engine_changes(type_: str, step: dict, before: dict, after: dict, replacing: bool) -> list[InputChange]:
    """Changed inputs, with the engine's word on which force replacement (detailedDiff, else replaceReasons)."""
    detailed = step.get("detailedDiff")
    reasons = set(step.get("replaceReasons") or [])
    source = "pulumi preview replaceReasons"
    if isinstance(detailed, dict) and detailed:
        old, new = flatten(before), flatten(after)
        out = []
        for path, d in sorted(detailed.items()):
            kind = (d or {}).get("kind", "update")
            b = old.get(path, _get_path(before, path))
            a = new.get(path, _get_path(after, path))
            forced = kind in _REPLACE_KINDS
            out.append(InputChange(path, b, a, path.split(".")[0].split("[")[0] if forced else None,
                                   "pulumi preview detailedDiff" if forced else None))
        return sorted(out, key=lambda c: (c.forces is None, c.path))
    changes = input_changes(type_, before, after)  # our table marks forcing inputs ...
    if not replacing:
        return changes
    out = []
    for c in changes:  # ... but the engine's replaceReasons decide
        top = c.path.split(".")[0].split("[")[0]
        if top in reasons:
            out.append(InputChange(c.path, c.before, c.after, top, source))
        else:
            out.append(InputChange(c.path, c.before, c.after, c.forces, c.source, c.certain))
    return sorted(out, key=lambda c: (c.forces is None, c.path))


def _get_path(value, path: str):
    for part in path.replace("[", ".").replace("]", "").split("."):
        if isinstance(value, dict):
            value = value.get(part)
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None
    return value


def review_preview(preview_path: str, event_log: Optional[str] = None, stack: Optional[str] = None) -> Review:
    doc = load_preview(preview_path)
    steps = doc.get("steps") or []
    verdicts = load_policy_events(event_log) if event_log else []

    merged: dict[str, dict] = {}  # urn -> {"op", "step", "old", "new"}
    for s in steps:
        urn, op = s["urn"], s["op"]
        m = merged.setdefault(urn, {"op": None, "steps": [], "old": {}, "new": {}})
        m["steps"].append(s)
        m["old"] = m["old"] or _state(s, "oldState")
        m["new"] = _state(s, "newState") or m["new"]
        if op in _REPLACE_OPS:
            m["op"] = "replace"
        elif op in _OPS and m["op"] != "replace":
            m["op"] = _OPS[op]

    resources = []
    for urn, m in merged.items():
        st, t, name = urn_parts(urn)
        state = m["new"] or m["old"]
        t = state.get("type") or t
        if t == "pulumi:pulumi:Stack":
            continue
        resources.append({"urn": urn, "type": t, "name": name, "parent": state.get("parent")})
    group_of = groups(resources)
    types = {r["urn"]: r["type"] for r in resources}

    changes = []
    for urn, m in merged.items():
        # Engine states leave `protect`/`retainOnDelete` out when false (omitempty).
        unprotects = [k for k in PROTECTION_OPTIONS if m["old"].get(k) is True and m["new"] and not m["new"].get(k)]
        if m["op"] is None and unprotects:
            m["op"] = "update"  # a `same` step that only turns protection off
        if m["op"] is None or urn not in types:
            continue
        t, name = types[urn], urn_parts(urn)[2]
        step = next((s for s in m["steps"] if s["op"] in _REPLACE_OPS and (s.get("replaceReasons") or
                                                                           s.get("detailedDiff"))), m["steps"][0])
        before, after = m["old"].get("inputs") or {}, m["new"].get("inputs") or {}
        c = ResourceChange(m["op"], urn, t, name, group_of.get(urn, "(stack)"))
        if c.op in ("update", "replace"):
            c.inputs = _engine_changes(t, step, before, after, c.op == "replace")
            reasons = sorted({r for s in m["steps"] for r in (s.get("replaceReasons") or [])})
            c.replace_reasons = reasons or sorted({i.path for i in c.inputs if i.forces and i.certain})
            if c.op == "update" and any(i.forces and i.certain for i in c.inputs):
                c.op = "replace"  # the engine's op wins in a real preview; this only happens without detailedDiff
        c.unprotects = unprotects
        changes.append(mark_stateful(c, before or after, bool(m["old"].get("protect"))))
    changes.sort(key=lambda c: (c.group, c.name, c.type))

    def states(key: str) -> list[dict]:
        out = []
        for urn, m in merged.items():
            st = m[key] or (m["new"] if key == "old" and m["op"] is None else {})
            if st and urn in types:
                out.append({"urn": urn, "type": types[urn], "inputs": st.get("inputs") or {}})
        return out

    name = stack or next((urn_parts(u)[0] for u in merged if urn_parts(u)[0]), "") or "unknown"
    problem = stack_name_problem(name)
    if problem:  # it would become the comment's marker
        where = "--stack" if stack else f"preview JSON {preview_path}: the stack in its URNs,"
        raise ReviewInputError(f"{where} {name!r}: {problem}")
    notes = []
    for d in doc.get("diagnostics") or []:
        if isinstance(d, dict) and str(d.get("severity", "")).lower() == "error":
            notes.append(f"preview error on {urn_parts(d.get('urn') or '')[2] or 'the stack'}: "
                         + " ".join(str(d.get("message", "")).split())[:300])
    return Review(
        stack=name,
        source="pulumi preview",
        changes=changes,
        verdicts=sort_verdicts(verdicts),
        versions=version_changes(states("old"), states("new")),
        capacity=None,
        cost=None,
        notes=notes,
    )
