"""The plan as a text tree, as markdown for a PR comment, and as the JSON contract (DESIGN.md §5)."""

from __future__ import annotations

import json
from collections import defaultdict

from gpufleet.app import escape as md
from gpufleet.base.spec.errors import inert
from gpufleet.base.capacity import capacity_notes, cold_start_notes
from gpufleet.base.spec.features.serving import serving_path
from gpufleet.app.plan import cost as costs
from gpufleet.app.plan.engine import Plan
from gpufleet.app.plan.secret_digests import secret_digests


def to_json(plan: Plan) -> dict:
    out = {
        "stack": plan.stack,
        "resources": [_resource(r) for r in plan.resources],
        "violations": [
            {"policy": v.policy, "level": v.level, "urn": v.urn, "message": v.message} for v in plan.violations
        ],
        "capacity": [c.to_json() for c in plan.capacity],
        "cost": plan.cost.to_json(),
        "outputs": plan.outputs,
        "warnings": [{"path": w.path, "message": w.message, "value": w.value if w.has_value else None}
                     for w in plan.warnings],
        # A program without a GpuCluster (plan --program) has no spec: no version of its own to say.
        "kubernetes": {"version": plan.spec.cluster.kubernetes_version if plan.spec is not None else None,
                       "needs": [n.to_json() for n in plan.kubernetes]},
        "catalogDate": plan.catalog_date,
        "stackFile": plan.stack_file,
    }
    if plan.delegated:
        # Only where a GitOps engine applies them (docs/gitops.md): other plans keep their bytes.
        out["delegated"] = {"engine": plan.spec.gitops.engine, "objects": [
            {"urn": o.urn, "type": o.type, "name": o.name, "wave": o.wave, "manifest": o.manifest}
            for o in plan.delegated]}
    return out


def _resource(r) -> dict:
    """One registration in the JSON contract; `secretDigests` (its secret inputs' keys and their digests, never a
    value: app/plan/secret_digests.py) only when it has a secret input."""
    out = {"urn": r.urn, "type": r.type, "name": r.name, "parent": r.parent, "inputs": r.inputs, "options": r.options()}
    if r.secret_paths:
        out["secretDigests"] = secret_digests(r.secret_paths, r.revealed)
    return out


def _serving(plan: Plan) -> list[str]:
    """The serving lines of a stack's plan; none for a program without a GpuCluster (no spec)."""
    return serving_path(plan.spec, plan.capacity) if plan.spec is not None else []


def _marks(r) -> str:
    """What the tree says after a resource: [protected] (pulumi destroy stops there), [retained on delete]."""
    marks = [m for m, on in (("protected", r.protect), ("retained on delete", r.retain_on_delete)) if on]
    return "".join(f"  [{m}]" for m in marks)


def _protected_lines(plan: Plan) -> list[str]:
    protected = [r for r in plan.resources if r.protect]
    if not protected:
        return ["protected resources: none (`pulumi destroy` deletes everything)"]
    out = [f"protected resources ({len(protected)}; `pulumi destroy` stops at them, see docs/stack-config.md, \"Protected resources\"):"]
    return out + [f"  - {r.name} ({r.type})" for r in protected]


def _tree_lines(plan: Plan) -> list[str]:
    urns = {r.urn for r in plan.resources}
    children = defaultdict(list)
    for r in plan.resources:
        children[r.parent if r.parent in urns else None].append(r)
    lines: list[str] = []

    def walk(parent, depth):
        for r in children[parent]:
            lines.append(f"{'  ' * depth}{'+ ' if r.custom else '* '}{r.name}  ({r.type}){_marks(r)}")
            walk(r.urn, depth + 1)

    walk(None, 0)
    return lines


def _delegated_lines(plan: Plan) -> list[str]:
    """The delegated layer (docs/gitops.md), by wave: what the GitOps engine applies instead of `pulumi up`."""
    if not plan.delegated:
        return []
    engine = plan.spec.gitops.engine
    out = ["", f"delegated to {engine} ({len(plan.delegated)} objects, `gpufleet export {engine}`; judged here as if "
               "Pulumi applied them):"]
    return out + [f"  wave {o.wave}: {o.label}" for o in plan.delegated]


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
    return costs.total_line(plan.cost)


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    return ["  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in [header] + rows]


def _cost_text(plan: Plan) -> list[str]:
    out = ["", _cost_line(plan), "", "cost breakdown (USD per hour):"]
    out += _table(costs.BREAKDOWN_HEADER, costs.breakdown_rows(plan.cost))
    for item in plan.cost.unpriced:
        out.append(f"  unpriced: {item.name}: {item.source}")
    if plan.cost.teams:
        out += ["", "team quotas (USD per hour):"] + _table(costs.TEAM_HEADER, costs.team_rows(plan.cost))
    out += [f"  note: {n}" for n in plan.cost.notes]
    out += [f"  warning: {w}" for w in plan.cost.price_warnings]
    return out + [""]


def _md_row(cells) -> str:
    """A Markdown table row of plain values, each escaped (gpufleet/app/escape.py: values come from stack files)."""
    return "| " + " | ".join(md.cell(md.text(c)) for c in cells) + " |"


def _cost_markdown(plan: Plan) -> list[str]:
    out = ["", "#### Cost", "", md.text(_cost_line(plan)), ""]
    out += ["| " + " | ".join(costs.BREAKDOWN_HEADER) + " |", "|" + "---|" * len(costs.BREAKDOWN_HEADER)]
    out += [_md_row(row) for row in costs.breakdown_rows(plan.cost)]
    if plan.cost.unpriced:
        out += [""] + [f"- **unpriced**: {md.text(i.name)}: {md.text(i.source)}" for i in plan.cost.unpriced]
    if plan.cost.teams:
        out += ["", "Team quotas (USD per hour):", "", "| " + " | ".join(costs.TEAM_HEADER) + " |",
                "|" + "---|" * len(costs.TEAM_HEADER)]
        out += [_md_row(row) for row in costs.team_rows(plan.cost)]
    out += [""] + [f"- {md.text(n)}" for n in plan.cost.notes]
    out += [f"- **warning**: {md.text(w)}" for w in plan.cost.price_warnings]
    out += ["", "<details><summary>Price sources</summary>", ""]
    out += [f"- {md.text(i.name)}: {md.text(i.source)}" + (f" ({md.text(costs.price_read(i))})" if i.priced else "")
            for i in plan.cost.items]
    return out + ["", "</details>"]


def to_text(plan: Plan) -> str:
    out = [f"gpufleet plan for stack '{plan.stack}': {len(plan.resources)} resources", ""]
    out += _tree_lines(plan)
    out += _delegated_lines(plan)
    out += ["", "GPU capacity:"]
    rows = [_CAPACITY_HEADER] + _capacity_rows(plan)
    widths = [max(len(r[i]) for r in rows) for i in range(len(_CAPACITY_HEADER))]
    out += ["  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    if not plan.capacity:
        out.append("  (no GPU pools)")
    out += [f"  {line}" for line in capacity_notes(plan.capacity)]
    out += [f"  {line}" for line in source_notes(plan.capacity)]
    out += [f"  {line}" for line in cold_start_notes(plan.capacity)]
    out += [f"  {line}" for line in _serving(plan)]
    out += _cost_text(plan)
    out += [f"catalog facts as of {plan.catalog_date}", ""] if plan.catalog_date else [""]
    out += _protected_lines(plan) + [""]
    if plan.kubernetes:  # docs/upgrades.md "Kubernetes upgrades say what must move together"
        out += [f"Kubernetes {plan.spec.cluster.kubernetes_version} needs:"] + [f"  {n.line()}" for n in plan.kubernetes] + [""]
    if plan.warnings:
        out += ["warnings:"] + [f"  - {w}" for w in plan.warnings] + [""]
    out += policy_lines(plan)
    # No line a CI runner would act on (gpufleet.base.spec.errors `inert`): the pack already writes its messages inert,
    # this holds for every other value too.
    return "".join(inert(line) + "\n" for line in "\n".join(out).split("\n"))


def stack_key(plan: Plan, urn: str) -> str:
    """The stack key a finding is about, where the resource is a node pool's (its name holds `-pool-<pool>`, the
    pools' child names: components/<platform>/): `gpufleet:nodePools[i] (<pool>)`; else the resource's name."""
    name = urn.rsplit("::", 1)[-1]
    if plan.spec is not None:
        for i, pool in enumerate(plan.spec.node_pools):
            marker = f"-pool-{pool.name}"
            at = name.find(marker)
            if at >= 0 and name[at + len(marker):at + len(marker) + 1] in ("", "-"):
                return f"gpufleet:nodePools[{i}] ({pool.name})"
    return f"resource {name}"


def policy_lines(plan: Plan) -> list[str]:
    """The verdicts grouped by level and rule: the rule's description once, then one line per finding naming the stack
    key (or resource) and the rule's message, which says what to change. Findings of one rule that say the same about
    several resources (a stack without metrics, once per GPU pool) are one line naming them all. The URNs are in the
    JSON."""
    if not plan.violations:
        return ["policies: no violations"]
    counts = {level: sum(1 for v in plan.violations if v.level == level) for level in ("mandatory", "advisory")}
    out = [f"policies: {counts['mandatory']} mandatory, {counts['advisory']} advisory"]
    groups: dict[tuple[str, str], list] = {}
    for v in sorted(plan.violations, key=lambda v: (v.level != "mandatory", v.policy)):
        groups.setdefault((v.level, v.policy), []).append(v)
    for (level, policy), found in groups.items():
        description, _, _ = found[0].message.partition("\n")
        out.append(f"  [{level}] {policy}: {description}")
        lines: dict[str, list[str]] = {}
        for v in found:
            _, _, detail = v.message.partition("\n")
            text = " ".join((detail or v.message).split()).replace(f" '{v.urn.rsplit('::', 1)[-1]}'", "")
            lines.setdefault(text, []).append(stack_key(plan, v.urn))
        out += [f"    - {', '.join(keys)}: {text}" for text, keys in lines.items()]
    return out


def to_markdown(plan: Plan) -> str:
    mandatory = [v for v in plan.violations if v.level == "mandatory"]
    verdict = f"**{len(mandatory)} mandatory policy violation(s)**" if mandatory else "policies pass"
    out = [f"### gpufleet plan: {md.code(plan.stack)}", "",
           f"{len(plan.resources)} resources, {verdict}. Catalog facts as of {md.text(plan.catalog_date)}.", ""]
    if plan.kubernetes:
        out += [f"#### Kubernetes {md.text(plan.spec.cluster.kubernetes_version)} needs", ""]
        out += [f"- {md.text(n.line())}" for n in plan.kubernetes] + [""]
    if plan.warnings:
        out += ["#### Warnings", ""] + [f"- {md.code(w.path)}: {md.text(w.message)}" for w in plan.warnings] + [""]
    out += ["#### Policies", ""]
    if plan.violations:
        out += ["| level | policy | resource | message |", "|---|---|---|---|"]
        out += [f"| {md.cell(md.text(v.level))} | {md.cell(md.code(v.policy))} | {md.cell(md.code(v.urn.split('::')[-1]))} "
                f"| {md.cell(md.text(v.message))} |" for v in plan.violations]
    else:
        out.append("No violations.")
    out += ["", "#### GPU capacity", "", "| " + " | ".join(_CAPACITY_HEADER) + " |", "|" + "---|" * len(_CAPACITY_HEADER)]
    out += [_md_row(row) for row in _capacity_rows(plan)]
    notes = (capacity_notes(plan.capacity) + source_notes(plan.capacity) + cold_start_notes(plan.capacity)
             + _serving(plan))
    if notes:
        out += ["", *(f"- {md.text(line)}" for line in notes)]
    out += _cost_markdown(plan)
    out += ["", "#### Protected resources", ""]
    protected = [r for r in plan.resources if r.protect]
    out += [f"- 🔒 {md.code(r.name)} ({md.text(r.type)})" for r in protected] or ["None: `pulumi destroy` deletes everything."]
    out += ["", "<details><summary>Resources</summary>", ""]
    out += md.block("\n".join(_tree_lines(plan) + _delegated_lines(plan)))
    out += ["", "</details>", ""]
    return "\n".join(out)


def render(plan: Plan, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(to_json(plan), indent=2, sort_keys=True) + "\n"
    if fmt == "markdown":
        return to_markdown(plan)
    return to_text(plan)
