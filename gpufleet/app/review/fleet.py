"""Reviewing a whole fleet: `gpufleet diff` on two `gpufleet plan --all --format json` documents.

Each stack is reviewed exactly as `gpufleet diff` reviews its own two plans; a stack new in the head is
reviewed against an empty plan, a stack the head cannot plan is listed with its message, and a stack
whose file was removed is named (its resources stay until someone runs `pulumi destroy` on it). The
fleet summary comes first; each changed stack gets its own comment.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from gpufleet.app.escape import block, code, text
from gpufleet.app.review.markdown import table
from gpufleet.app.review.summary import FLEET, MARKER, Review, marker, review_plans, stack_name_problem

EXIT_OK, EXIT_POLICY, EXIT_INVALID = 0, 1, 2
FLEET_MARKER = MARKER.format(stack=FLEET)


def is_fleet(doc: object) -> bool:
    return isinstance(doc, dict) and isinstance(doc.get("fleet"), dict) and isinstance(doc.get("stacks"), dict)


def _empty(stack: str) -> dict:
    return {"stack": stack, "resources": [], "violations": [], "capacity": [], "cost": {}, "outputs": {}}


@dataclass
class FleetReview:
    reviews: dict[str, Review] = field(default_factory=dict)  # stacks the head planned
    invalid: dict[str, str] = field(default_factory=dict)  # stacks the head could not plan: their message
    bad_names: set[str] = field(default_factory=set)
    """Stacks in `invalid` because of their name alone: listed in the summary, never a file name or a marker."""
    removed: list[str] = field(default_factory=list)  # stacks in the base, not in the head
    head_summary: list[dict] = field(default_factory=list)

    def changed(self) -> list[str]:
        """Stacks whose review has something to say: a resource change, a change to the stack file outside
        `gpufleet:`, a new or resolved policy finding, a note, or a mandatory finding (even one already on the base:
        it still blocks)."""
        return sorted(s for s, r in self.reviews.items()
                      if r.changes or r.config or r.notes or r.blocking or r.refused or any(v.status != "existing" for v in r.verdicts))

    @property
    def exit_code(self) -> int:
        if self.invalid:
            return EXIT_INVALID
        return EXIT_POLICY if any(r.fails for r in self.reviews.values()) else EXIT_OK

    def to_json(self) -> dict:
        return {
            "fleet": {"changed": self.changed(), "invalid": self.invalid, "removed": self.removed,
                      "summary": self.head_summary, "exitCode": self.exit_code},
            "stacks": {s: r.to_json() for s, r in sorted(self.reviews.items())},
        }


def review_fleet(base: dict, head: dict) -> FleetReview:
    out = FleetReview(head_summary=head["fleet"].get("summary", []))
    for stack, plan in sorted(head["stacks"].items()):
        problem = stack_name_problem(stack)
        if problem:
            out.invalid[stack] = f"stack {stack!r}: {problem}; rename stacks/Pulumi.<stack>.yaml"
            out.bad_names.add(stack)
            continue
        if "error" in plan:
            out.invalid[stack] = plan["error"]
            continue
        old = base["stacks"].get(stack)
        if old is None or "error" in old:  # new, or the base could not plan it: everything is new
            old = _empty(stack)
        out.reviews[stack] = review_plans(old, plan)
    out.removed = sorted(set(base["stacks"]) - set(head["stacks"]))
    return out


def summary_markdown(review: FleetReview) -> str:
    changed = review.changed()
    lines = [FLEET_MARKER, "### gpufleet review: the fleet", ""]  # every value below is escaped (escape.py)
    lines.append(f"{len(review.reviews) + len(review.invalid)} stacks planned; {len(changed)} changed"
                 + (f", **{len(review.invalid)} invalid**" if review.invalid else "")
                 + (f", {len(review.removed)} removed from stacks/" if review.removed else "") + ".")
    rows = {r.get("stack"): r for r in review.head_summary if isinstance(r, dict)}
    cells = []
    for stack in sorted(set(review.reviews) | set(review.invalid)):
        if stack in review.invalid:
            cells.append([code(stack, 100), ":x: invalid name" if stack in review.bad_names else ":x: invalid",
                          "-", "-", "-"])
            continue
        r = review.reviews[stack]
        counts = ", ".join(f"{n} {op}" for op, n in r.counts().items() if n) or "none"
        row = rows.get(stack, {})
        bound = "at least " if row.get("costIsLowerBound") else ""
        money = lambda k: "-" if row.get(k) is None else text(f"{bound}{row[k]:.2f}")  # noqa: E731
        blocking = str(len(r.blocking)) + (f" + {len(r.refused)} refused move(s)" if r.refused else "")
        cells.append([code(stack), counts, blocking, money("hourlyMin"), money("hourlyMax")])
    lines += ["", *table(["stack", "changes", "mandatory", "$/h idle floor", "$/h max"], cells)]
    if review.invalid:
        lines += ["", "#### Invalid stacks", ""]
        lines += [f"- {code(s, 100)}: {text(m, 2000)}" for s, m in sorted(review.invalid.items())]
    if review.removed:
        lines += ["", "#### Removed from stacks/", ""]
        for s in review.removed:  # the base's names: escaped too, and no command to copy for a name Pulumi refuses
            how = f"{code(f'pulumi destroy -s {s}')}" if not stack_name_problem(s) else "`pulumi destroy` on it"
            lines.append(f"- {code(s, 100)}: its cloud resources stay until {how}")
    return "\n".join(lines) + "\n"


def invalid_markdown(stack: str, message: str) -> str:
    """The comment of a stack the head could not plan (only for names `stack_name_problem` accepts)."""
    return "\n".join([marker(stack), f"### gpufleet review: {code(stack)}", "",
                      ":x: **The stack file is invalid: nothing was planned.**", "", *block(message, 20000), ""])


def comments(review: FleetReview, fmt: str = "markdown") -> dict[str, str]:
    """File name -> comment body: `fleet.md`, one per changed stack, one per invalid stack."""
    from gpufleet.app.review import render

    ext = {"markdown": "md", "text": "txt", "json": "json"}[fmt]
    out = {f"{FLEET}.{ext}": summary_markdown(review) if fmt == "markdown" else render_fleet(review, fmt)}
    for stack in review.changed():
        out[f"{stack}.{ext}"] = render(review.reviews[stack], fmt)
    for stack, message in review.invalid.items():
        if stack in review.bad_names:
            continue  # named only in the summary: its name can be neither a file name nor a marker
        out[f"{stack}.{ext}"] = invalid_markdown(stack, message) if fmt == "markdown" else f"{stack}: invalid\n{message}\n"
    return out


def render_fleet(review: FleetReview, fmt: str) -> str:
    """Everything in one document (stdout): the summary, then each changed stack's review."""
    from gpufleet.app.review import render

    if fmt == "json":
        return json.dumps(review.to_json(), indent=2, sort_keys=True) + "\n"
    parts = [summary_markdown(review)]
    parts += [render(review.reviews[s], fmt) for s in review.changed()]
    parts += [invalid_markdown(s, m) for s, m in sorted(review.invalid.items()) if s not in review.bad_names]
    return "\n".join(parts)
