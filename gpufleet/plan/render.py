"""The plan as a text tree, as markdown for a PR comment, and as the JSON contract (DESIGN.md §5)."""

from __future__ import annotations

import json
from collections import defaultdict

from gpufleet.capacity import capacity_notes, cost
from gpufleet.plan.engine import Plan


def to_json(plan: Plan) -> dict:
    return {
        "stack": plan.stack,
        "resources": [
            {"urn": r.urn, "type": r.type, "name": r.name, "parent": r.parent, "inputs": r.inputs}
            for r in plan.resources
        ],
        "violations": [
            {"policy": v.policy, "level": v.level, "urn": v.urn, "message": v.message} for v in plan.violations
        ],
        "capacity": [c.to_json() for c in plan.capacity],
        "cost": cost(plan.capacity),
        "outputs": plan.outputs,
        "warnings": [{"path": w.path, "message": w.message, "value": w.value} for w in plan.warnings],
        "catalogDate": plan.catalog_date,
    }


def _tree_lines(plan: Plan) -> list[str]:
    urns = {r.urn for r in plan.resources}
    children = defaultdict(list)
    for r in plan.resources:
        children[r.parent if r.parent in urns else None].append(r)
    lines: list[str] = []

    def walk(parent, depth):
        for r in children[parent]:
            lines.append(f"{'  ' * depth}{'+ ' if r.custom else '* '}{r.name}  ({r.type})")
            walk(r.urn, depth + 1)

    walk(None, 0)
    return lines


def _capacity_rows(plan: Plan) -> list[list[str]]:
    rows = []
    for c in plan.capacity:
        advertised = ", ".join(f"{n} x {k}" for k, n in c.advertised.items())
        price = "unpriced" if c.price_per_node_hour is None else f"{c.hourly_min:.2f} / {c.hourly_max:.2f}"
        rows.append([
            c.pool, c.gpu or "?", c.capacity_type, f"{c.min_nodes}-{c.max_nodes}",
            f"{c.min_gpus}-{c.max_gpus}", advertised, price,
        ])
    return rows


_CAPACITY_HEADER = ["pool", "GPU", "capacity", "nodes", "GPUs", "advertised per node", "$/h min / max"]


def source_notes(pools) -> list[str]:
    """Where each pool's nodes come from, when that is more than on-demand or spot (reservations, DWS)."""
    return [f"{c.pool}: {c.capacity_source}" for c in pools if c.capacity_source and c.capacity_source != c.capacity_type]


def _cost_line(plan: Plan) -> str:
    c = cost(plan.capacity)
    line = f"hourly cost: {c['hourlyMin']:.2f} {c['currency']} at minimum size, {c['hourlyMax']:.2f} at maximum size"
    if c["unpricedPools"]:
        line += f" (no price for: {', '.join(c['unpricedPools'])})"
    return line


def to_text(plan: Plan) -> str:
    out = [f"gpufleet plan for stack '{plan.stack}': {len(plan.resources)} resources", ""]
    out += _tree_lines(plan)
    out += ["", "GPU capacity:"]
    rows = [_CAPACITY_HEADER] + _capacity_rows(plan)
    widths = [max(len(r[i]) for r in rows) for i in range(len(_CAPACITY_HEADER))]
    out += ["  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    if not plan.capacity:
        out.append("  (no GPU pools)")
    out += [f"  {line}" for line in capacity_notes(plan.capacity)]
    out += [f"  {line}" for line in source_notes(plan.capacity)]
    out += ["", _cost_line(plan), f"catalog facts as of {plan.catalog_date}", ""]
    if plan.warnings:
        out += ["warnings:"] + [f"  - {w}" for w in plan.warnings] + [""]
    out += ["policies:"]
    out += [f"  [{v.level}] {v.policy}: {v.message}\n      at {v.urn}" for v in plan.violations] or ["  no violations"]
    return "\n".join(out) + "\n"


def to_markdown(plan: Plan) -> str:
    mandatory = [v for v in plan.violations if v.level == "mandatory"]
    verdict = f"**{len(mandatory)} mandatory policy violation(s)**" if mandatory else "policies pass"
    out = [f"### gpufleet plan: `{plan.stack}`", "", f"{len(plan.resources)} resources, {verdict}. Catalog facts as of {plan.catalog_date}.", ""]
    if plan.warnings:
        out += ["#### Warnings", ""] + [f"- `{w.path}`: {w.message}" for w in plan.warnings] + [""]
    out += ["#### Policies", ""]
    if plan.violations:
        out += ["| level | policy | resource | message |", "|---|---|---|---|"]
        out += [f"| {v.level} | `{v.policy}` | `{v.urn.split('::')[-1]}` | {v.message} |" for v in plan.violations]
    else:
        out.append("No violations.")
    out += ["", "#### GPU capacity", "", "| " + " | ".join(_CAPACITY_HEADER) + " |", "|" + "---|" * len(_CAPACITY_HEADER)]
    out += ["| " + " | ".join(row) + " |" for row in _capacity_rows(plan)]
    notes = capacity_notes(plan.capacity) + source_notes(plan.capacity)
    if notes:
        out += ["", *(f"- {line}" for line in notes)]
    out += ["", _cost_line(plan), "", "<details><summary>Resources</summary>", "", "```"]
    out += _tree_lines(plan)
    out += ["```", "", "</details>", ""]
    return "\n".join(out)


def render(plan: Plan, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(to_json(plan), indent=2, sort_keys=True) + "\n"
    if fmt == "markdown":
        return to_markdown(plan)
    return to_text(plan)
