"""The fleet run's summary: one row per stack (result, changes, policy verdicts, duration), in text, JSON or
Markdown. Markdown writes every value through gpufleet/app/escape.py, as the review does: stack names, messages and
policy findings are literal text there, never markup."""

from __future__ import annotations

import json

from gpufleet.app import escape as md
from gpufleet.app.fleet.outcome import SUCCEEDED, StackOutcome

EXIT_OK, EXIT_FAILED = 0, 1


def exit_code(outcomes: list[StackOutcome]) -> int:
    """0 when every stack succeeded (a preview: and no mandatory verdict), else 1."""
    ok = all(o.result == SUCCEEDED and not o.mandatory for o in outcomes)
    return EXIT_OK if ok else EXIT_FAILED


def _changes(o: StackOutcome) -> str:
    return ", ".join(f"{op} {n}" for op, n in sorted(o.changes.items()) if n) or "none"


def _policies(o: StackOutcome) -> str:
    if not o.policies:
        return "none"
    names = sorted({f"{p['policy']} ({p['level']})" for p in o.policies})
    return f"{o.mandatory} mandatory, {o.advisory} advisory: " + ", ".join(names)


def left_behind(operation: str, outcomes: list[StackOutcome]) -> list[str]:
    """The stacks an `up` selected and did not deploy (failed, locked, not started): the next run selects them again,
    since the deployed marker moves only when every stack succeeded (docs/fleet.md)."""
    return [o.stack for o in outcomes if o.result != SUCCEEDED] if operation == "up" else []


def _behind_lines(operation: str, outcomes: list[StackOutcome], carried: list[str]) -> list[tuple[str, list[str]]]:
    out = []
    if carried:
        out.append(("left behind by an earlier run (cancelled, or stopped at a failure), deployed by this one",
                    carried))
    behind = left_behind(operation, outcomes)
    if behind:
        out.append(("left behind: not deployed by this run; the last deployed commit stays where it was, so the next "
                    "run selects them again", behind))
    return out


def to_json(operation: str, outcomes: list[StackOutcome], reasons: dict[str, list[str]] | None = None,
            carried: list[str] | None = None) -> dict:
    reasons = reasons or {}
    return {
        "operation": operation,
        "exitCode": exit_code(outcomes),
        "leftBehind": left_behind(operation, outcomes),
        "carriedOver": list(carried or []),
        "changed": [o.stack for o in outcomes if o.changed],
        "succeeded": [o.stack for o in outcomes if o.result == SUCCEEDED],
        "failed": [o.stack for o in outcomes if o.result not in (SUCCEEDED, "not started")],
        "notStarted": [o.stack for o in outcomes if o.result == "not started"],
        "stacks": [{
            "stack": o.stack, "result": o.result, "changed": o.changed, "changes": dict(sorted(o.changes.items())),
            "mandatory": o.mandatory, "advisory": o.advisory, "policies": o.policies, "seconds": o.seconds,
            "message": o.message, **({"selectedBecause": reasons[o.stack]} if o.stack in reasons else {}),
        } for o in outcomes],
    }


def _verb(operation: str) -> str:
    return "would change" if operation == "preview" else "changed"


def to_text(operation: str, outcomes: list[StackOutcome], carried: list[str] | None = None) -> str:
    rows = [["stack", "result", _verb(operation), "policies", "seconds"]]
    rows += [[o.stack, o.result, _changes(o), _policies(o), f"{o.seconds:.1f}"] for o in outcomes]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [f"gpufleet {operation}: {len(outcomes)} stack(s)"]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    lines += [f"{o.stack}: {o.message}" for o in outcomes if o.message]
    doc = to_json(operation, outcomes)
    lines.append(f"{_verb(operation)}: {', '.join(doc['changed']) or 'none'}; failed: {', '.join(doc['failed']) or 'none'}; "
                 f"not started: {', '.join(doc['notStarted']) or 'none'}")
    lines += [f"{what}: {', '.join(names)}" for what, names in _behind_lines(operation, outcomes, carried or [])]
    return "\n".join(lines) + "\n"


def to_markdown(operation: str, outcomes: list[StackOutcome], carried: list[str] | None = None) -> str:
    lines = [f"### gpufleet {operation}: {len(outcomes)} stack(s)", "",
             f"| stack | result | {_verb(operation)} | policies | seconds |", "|---|---|---|---|---:|"]
    for o in outcomes:
        cells = [md.code(o.stack, 100), md.text(o.result), md.text(_changes(o)), md.text(_policies(o), 500),
                 f"{o.seconds:.1f}"]
        lines.append("| " + " | ".join(md.cell(c) for c in cells) + " |")
    notes = [o for o in outcomes if o.message]
    if notes:
        lines += [""] + [f"- {md.code(o.stack, 100)}: {md.text(o.message, 1500)}" for o in notes]
    for what, names in _behind_lines(operation, outcomes, carried or []):
        lines += ["", f"**{md.text(what[:1].upper() + what[1:])}**: " + ", ".join(md.code(n, 100) for n in names)]
    return "\n".join(lines) + "\n"


def render(operation: str, outcomes: list[StackOutcome], fmt: str, reasons: dict[str, list[str]] | None = None,
           carried: list[str] | None = None) -> str:
    if fmt == "json":
        return json.dumps(to_json(operation, outcomes, reasons, carried), indent=2) + "\n"
    if fmt == "markdown":
        return to_markdown(operation, outcomes, carried)
    return to_text(operation, outcomes, carried)
