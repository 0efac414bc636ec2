"""The review as one GitHub pull request comment per stack.

Order: verdict, disruptive changes, policy findings (mandatory first), GPU capacity, cost, versions,
then every change by component. The comment must stay under GitHub's 65,536-character limit: the
policy, disruptive and cost sections are never cut; capacity, versions and the change list fold into
`<details>` and, if still too long, the change list is shortened with a pointer to the full JSON.
"""

from __future__ import annotations

from typing import Iterable

from gpufleet.app.review.crds import text_lines as crd_lines
from gpufleet.app.review.diff import ResourceChange, short, text_delta
from gpufleet.app.escape import cell as _pipes, code, text
from gpufleet.app.review.summary import Review

GITHUB_COMMENT_LIMIT = 65_536
LIMIT = GITHUB_COMMENT_LIMIT - 1_536  # headroom for the workflow's own wrapper text
_CELL = 1000  # longest value in one table cell (a policy message, a rule, a resource's changed inputs)
_STATUS = {"new": "new in this change", "existing": "already on the base", "head": "reported by the preview"}
_OPS = {"create": "create", "update": "update", "replace": "**replace**", "delete": "delete"}


def table(header: list[str], rows: Iterable[list[str]]) -> list[str]:
    """A GFM table of cells that are already Markdown: every value in them went through `text` or `code`."""
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return out + ["| " + " | ".join(_pipes(c) for c in row) + " |" for row in rows]


def arrow(before: object, after: object, fmt=text) -> str:
    b, a = short(before, 40), short(after, 40)
    return fmt(a) if b == a else f"{fmt(b)} → {fmt(a)}"


def money(x: float) -> str:
    return f"{x:,.2f}"


def signed(x: float) -> str:
    return f"{x:+,.2f}"


def headline(review: Review) -> list[str]:
    c = review.counts()
    what = ", ".join(f"{n} to {op}" for op, n in c.items() if n) or "no resource changes"
    title = "pulumi preview" if review.source == "pulumi preview" else "gpufleet review"
    lines = [review.marker, f"### {title}: {code(review.stack)}", "",
             f"From {review.source}: {what}."]
    if review.refused:
        lines.append(f":x: **{len(review.refused)} version move(s) the cloud refuses: will fail at `pulumi up`** "
                     "(after the cluster has started changing): see below.")
    if review.blocking:
        lines.append(f":x: **{len(review.blocking)} mandatory policy violation(s): this change cannot be deployed.**")
    else:
        lines.append(":white_check_mark: No mandatory policy violations.")
    if review.disruptive:
        lines.append(f":warning: **{len(review.disruptive)} disruptive change(s)** (replacements or deletions of "
                     "clusters, node pools, file systems, networks or hosts): see below.")
        loss = [c for c in review.disruptive if c.data_loss]
        if loss:
            lines.append(f":rotating_light: **{len(loss)} of them may lose data**: "
                         + ", ".join(code(c.name) for c in loss) + ".")
    if review.hidden:
        lines.append(f":eyes: **{len(review.hidden)} resource(s) change inside secret inputs** (what a preview shows "
                     "as `[secret]`): see below.")
    if review.capacity_disruptions:
        lines.append(f":warning: **{len(review.capacity_disruptions)} pool(s) change capacity source disruptively** "
                     "(a reservation dropped, a switch to flex-start / queued, a pool moved off DRA or a broken NVLink "
                     "domain): see below.")
    if review.config:
        lines.append(f":warning: **{len(review.config)} change(s) to the stack file outside `gpufleet:`** (provider "
                     "keys, secret values, secrets settings): see below.")
    return lines + [f"> {text(n, _CELL)}" for n in review.notes]


def refused(review: Review) -> list[str]:
    """Version moves the platform refuses (review/moves.py): first, never cut."""
    if not review.refused:
        return []
    out = ["", "#### :x: Will fail at `pulumi up`", "",
           "The cloud refuses these Kubernetes version moves; `pulumi up` would stop partway, after the cluster has "
           "started changing.", ""]
    for m in review.refused:
        out.append(f"- **{text(m.part)} {code(m.name)}** ({code(m.stack_key)}): {text(m.before)} → {text(m.after)} "
                   f"{text(m.why)}. **Instead:** {text(m.instead, _CELL)}. Source: {text(m.source, _CELL)}")
    return out


def hidden(review: Review) -> list[str]:
    """Changes inside secret inputs, named by key (plan digests, app/plan/secret_digests.py): never cut."""
    if not review.hidden:
        return []
    out = ["", "#### :eyes: Changes inside secret inputs", "",
           "A preview shows these inputs as `[secret]`; the plans' digests say which of their keys changed.", ""]
    for c in review.hidden:
        what = ", ".join(text(h) for h in c.hidden)
        out.append(f"- {code(c.name)} ({code(c.type)}, in {text(c.group)}): {what} changed")
    return out


def stack_file(review: Review) -> list[str]:
    """Changes outside `gpufleet:` (review/config.py): never cut, like the disruptive changes."""
    if not review.config and not review.config_note:
        return []
    out = ["", "#### :warning: Stack file outside `gpufleet:`", "",
           "Where the deploy's requests go and which keys decrypt its secrets: check each change is intended.", ""]
    out += [f"- {text(c.finding, _CELL)}" for c in review.config]
    return out + ([f"- not compared: {text(review.config_note, _CELL)}"] if review.config_note else [])


def warnings(review: Review) -> list[str]:
    """The head plan's warnings (support calendars first among them), new ones marked."""
    if not review.warnings:
        return []
    out = ["", "#### Plan warnings", ""]
    for w in review.warnings:
        out.append(f"- {'**new** ' if w.new else ''}{code(w.path)}: {text(w.message, _CELL)}")
    return out


def policies(review: Review) -> list[str]:
    current = [v for v in review.verdicts if v.status != "resolved"]
    resolved = [v for v in review.verdicts if v.status == "resolved"]
    out = ["", "#### Policy verdicts", ""]
    if not current:
        out.append("No policy findings.")
    else:
        out += table(["level", "policy", "resource", "finding", "rule", "status", "how to fix or exempt"],
                     [[f"**{text(v.level)}**" if v.level == "mandatory" else text(v.level), code(v.policy),
                       code(v.resource), text(v.finding, _CELL), text(v.rule, _CELL),
                       text(_STATUS.get(v.status, v.status)), _fix(v)] for v in current])
    if resolved:
        out += ["", "Resolved by this change: "
                + ", ".join(f"{code(v.policy)} on {code(v.resource)}" for v in resolved) + "."]
    return out


def _fix(v) -> str:
    """The exact stack change or exemption for a gpufleet pool's finding (its stack key in code), else the rule's
    exemption label."""
    if v.stack_fix:
        parts = v.stack_fix.split("`")
        def words(p: str) -> str:  # text() trims: keep the spaces around the code spans
            core = p.strip()
            return p[:len(p) - len(p.lstrip())] + (text(core) if core else "") + p[len(p.rstrip()):]
        return "".join(code(p) if i % 2 else words(p) for i, p in enumerate(parts))
    return v.FIX.format(code(v.exemption))


def reason_text(c: ResourceChange, code=code, text=text) -> str:
    """Why `c` is replaced or deleted; `code` and `text` format its values (Markdown by default, plain in text.py)."""
    forcing = [i for i in c.inputs if i.forces]
    if forcing:
        parts = [f"{code(i.path)}: {arrow(i.before, i.after, text)}" for i in forcing]
        sources = sorted({i.source for i in forcing if i.source})
        maybe = "" if c.op == "replace" else " (replaces only in some directions)"
        return f"forced by {'; '.join(parts)}{maybe} — source: {'; '.join(text(s) for s in sources)}"
    if c.replace_reasons:
        return "forced by " + ", ".join(code(r) for r in c.replace_reasons) + " (provider's replaceReasons)"
    if c.op == "replace":
        return "the provider replaces it (no reason reported)"
    return "removed from the program: `pulumi up` deletes it"


def disruptive(review: Review) -> list[str]:
    if not review.disruptive and not review.capacity_disruptions:
        return []
    out = ["", "#### :warning: Disruptive changes", ""]
    for p in review.capacity_disruptions:
        out.append(f"- **CAPACITY pool {code(p.pool)}**: {text(p.capacity_disruption)}")
    for c in review.disruptive:
        verb = verb_of(c)
        kind = c.kind or "resource"
        where = f"({code(c.type)}, in {text(c.group)})"
        if c.data_loss:
            out.append(f"- :rotating_light: **POSSIBLE DATA LOSS: {verb} {kind} {code(c.name)}** {where}, "
                       f"which holds {text(c.holds)}: {reason_text(c)}")
        elif c.unprotects and c.op == "update" and not c.may_replace:
            out.append(f"- **REMOVES PROTECTION from {kind} {code(c.name)}** {where}: {unprotect_text(c)}")
            continue
        elif c.rollout and c.op == "update" and not c.may_replace:
            out.append(f"- **REPLACES THE NODES of {kind} {code(c.name)}**, rolling {where}: {text(c.rollout, 2000)}")
        else:
            out.append(f"- **{verb} {kind} {code(c.name)}** {where}: {reason_text(c)}")
        if c.unprotects:
            out.append(f"  - and {unprotect_text(c)}")
    return out


def verb_of(c: ResourceChange) -> str:
    return "REPLACE" if c.op == "replace" else ("MAY REPLACE" if c.may_replace else c.op.upper())


def unprotect_text(c: ResourceChange, code=code, text=text) -> str:
    what = " and ".join(code(o) for o in c.unprotects)
    held = f"; it holds {text(c.holds)}" if c.holds else ""
    return f"turns {what} off: `pulumi destroy` and replacing changes will delete it from now on{held}"


def capacity(review: Review) -> list[str]:
    if review.capacity is None:
        return ["", "#### GPU capacity", "", "Not in this input: run `gpufleet diff` on two offline plans for capacity "
                "and cost."]
    out = ["", "#### GPU capacity", ""]
    if not review.capacity:
        return out + ["No GPU pools before or after."]
    rows = []
    for p in review.capacity:
        b, a = p.before or {}, p.after or {}
        status = {"added": "**added**", "removed": "**removed**", "changed": "changed"}.get(p.status, "")

        def v(key: str, fmt=lambda x: x) -> str:
            if p.before is None or p.after is None:  # added or removed: the side that exists
                return text(fmt((a or b).get(key)))
            x, y = fmt(b.get(key)), fmt(a.get(key))
            return text(y) if x == y else f"{text(x)} → {text(y)}"

        adv = lambda d: ", ".join(f"{n}× {k}" for k, n in sorted((d or {}).items())) or "–"  # noqa: E731
        price = lambda x: "unpriced" if x is None else money(x)  # noqa: E731
        def source(d: dict):
            return d.get("capacitySource") or d.get("capacityType")

        if p.before is None or p.after is None:
            src = text(source(a or b))
        else:
            src = text(source(a)) if source(a) == source(b) else f"{text(source(b))} → {text(source(a))}"
        rows.append([code(p.pool), status, v("gpu"), src,
                     f"{v('minNodes')} / {v('maxNodes')}", f"{v('minGpus')} / {v('maxGpus')}",
                     v("advertisedPerNode", adv), v("pricePerNodeHour", price)])
    return out + table(["pool", "", "GPU", "capacity", "nodes min / max", "GPUs min / max", "advertised per node",
                        "per node-hour"], rows)


def _opt(x) -> str:
    return "unpriced" if x is None else money(x)


def _signed_or_unknown(x) -> str:
    return "unknown" if x is None else signed(x)


def cost(review: Review) -> list[str]:
    if review.cost is None:
        return []
    c = review.cost
    before = "at least " if c.at_least_before else ""
    after = "at least " if c.at_least_after else ""
    out = ["", f"#### Cost ({text(c.currency, 12)} per hour)", ""]
    out += table(["", "before", "after", "delta"], [
        ["idle floor (everything billed while no GPU work runs)", before + money(c.min_before), after + money(c.min_after),
         f"**{signed(c.min_delta)}**"],
        ["at maximum size", before + money(c.max_before), after + money(c.max_after), f"**{signed(c.max_delta)}**"],
    ])
    if c.itemized:
        if c.changed:
            out += ["", "Cost items that change:", ""]
            out += table(["item", "", "before ($/h min / max)", "after ($/h min / max)", "delta min / max"], [
                [text(i.name), text(i.status),
                 "–" if i.before is None else f"{_opt(i.before.get('hourlyMin'))} / {_opt(i.before.get('hourlyMax'))}",
                 "–" if i.after is None else f"{_opt(i.after.get('hourlyMin'))} / {_opt(i.after.get('hourlyMax'))}",
                 f"{_signed_or_unknown(i.min_delta)} / {_signed_or_unknown(i.max_delta)}"] for i in c.changed])
        else:
            out += ["", "No cost item changes."]
        if c.unknown:
            out += ["", "**Unknown**: " + ", ".join(code(i.name) for i in c.unknown) + " is unpriced before or after, "
                    "so its change is unknown and left out of the delta (not a saving, not a cost)."]
    elif c.unpriced_after:
        out += ["", "No price for: " + ", ".join(code(p) for p in c.unpriced_after) + " (left out of the totals)."]
    teams = [t for t in c.teams if t.nominal_delta != 0 or t.max_delta != 0 or t.before is None or t.after is None]
    if c.teams:
        out += ["", "Team quotas ($/h nominal / with borrowing):", ""]
        out += table(["team", "pool", "before", "after", "delta"], [
            [text(t.team), text(t.pool),
             "–" if t.before is None else f"{_opt(t.before.get('hourlyNominal'))} / {_opt(t.before.get('hourlyMax'))}",
             "–" if t.after is None else f"{_opt(t.after.get('hourlyNominal'))} / {_opt(t.after.get('hourlyMax'))}",
             f"{_signed_or_unknown(t.nominal_delta)} / {_signed_or_unknown(t.max_delta)}"]
            for t in (teams or c.teams)])
    return out


def versions(review: Review) -> list[str]:
    out = ["", "#### Versions", ""]
    changed = [v for v in review.versions if v.changed]
    same = [v for v in review.versions if not v.changed]
    fmt = lambda vs: ", ".join(text(x) for x in vs) or "–"  # noqa: E731
    if changed:
        out += table(["component", "before", "after"], [[text(v.component), fmt(v.before), fmt(v.after)] for v in changed])
    else:
        out.append("No version changes.")
    if review.alignment:
        out += ["", "**Versions are not aligned:** " + "; ".join(
            f"{code(v.policy)} on {code(v.resource)}: {text(v.finding, _CELL)}" for v in review.alignment)]
    else:
        out += ["", "Versions aligned: no version policy findings."]
    if same:
        out += ["", "<details><summary>Unchanged versions</summary>", ""]
        out += table(["component", "version"], [[text(v.component), fmt(v.after)] for v in same])
        out += ["", "</details>"]
    return out


def kubernetes_bump(review: Review) -> list[str]:
    """A Kubernetes minor bump and what the new minor needs (review/kube.py)."""
    if not review.kubernetes_bump:
        return []
    return ["", f"#### {text(review.kubernetes_bump[0])}", ""] + [f"- {text(line, 2000)}" for line in review.kubernetes_bump[1:]]


def disruption_changes(review: Review) -> list[str]:
    """GPU node disruption settings that change (review/disruption.py); nothing when none does."""
    if not review.disruption:
        return []
    return ["", "#### Disruption changes", ""] + [f"- {text(line, 2000)}" for line in review.disruption]


def crd_changes(review: Review) -> list[str]:
    """A chart bump's CRD changes (review/crds.py, docs/upgrades.md); nothing when no chart version moves."""
    if not review.crds and not review.crd_notes:
        return []
    return ["", "#### CRD changes", ""] + [f"- {text(line, 2000)}" for line in crd_lines(review.crds, review.crd_notes)]


def change_rows(c: ResourceChange, max_inputs: int = 6) -> list[str]:
    if c.op in ("create", "delete"):
        detail = ""
    else:
        parts = []
        for i in c.inputs[:max_inputs]:
            delta = text_delta(i.before, i.after)
            path = code(i.path, 120)
            line = f"{path} {text(delta, 200)}" if delta else f"{path}: {arrow(i.before, i.after)}"
            parts.append(("**" + line + "**") if i.forces else line)
        if len(c.inputs) > max_inputs:
            parts.append(f"… {len(c.inputs) - max_inputs} more")
        detail = "<br>".join(parts)
    return [_OPS.get(c.op) or text(c.op), code(c.name), code(c.type), detail]


def changes(review: Review, limit_rows: int | None = None) -> list[str]:
    out = ["", "#### Changes by component", ""]
    if not review.changes:
        return out + ["No resource changes."]
    shown = review.changes if limit_rows is None else review.changes[:limit_rows]
    groups: dict[str, list[ResourceChange]] = {}
    for c in shown:
        groups.setdefault(c.group, []).append(c)
    out += ["<details><summary>" + f"{len(review.changes)} resource change(s) in {len(groups)} component(s)"
            + "</summary>", ""]
    for group, items in groups.items():
        out += [f"**{text(group, _CELL)}**", ""]
        out += table(["op", "resource", "type", "changed inputs (replacement-forcing in bold)"],
                     [change_rows(c) for c in items])
        out.append("")
    if len(shown) < len(review.changes):
        out.append(f"… {len(review.changes) - len(shown)} more change(s) left out to fit GitHub's comment limit: "
                   "run `gpufleet diff --format json` for the full list.")
    return out + ["</details>"]


def render(review: Review, limit: int = LIMIT) -> str:
    """The comment, at most `limit` characters unless the uncut sections alone are longer (they stay whole).

    Only the change list (already folded in `<details>`) is shortened to fit.
    """
    before = headline(review) + refused(review) + hidden(review) + stack_file(review) + disruptive(review) + warnings(review) + policies(review) + capacity(review) + cost(review) + versions(review)
    before += kubernetes_bump(review) + disruption_changes(review) + crd_changes(review)
    fixed = len("\n".join(before)) + 2
    rows = len(review.changes)
    if fixed + len("\n".join(changes(review))) > limit:
        lo, hi = 0, rows
        while lo < hi:  # the most change rows that still fit
            mid = (lo + hi + 1) // 2
            if fixed + len("\n".join(changes(review, mid))) <= limit:
                lo = mid
            else:
                hi = mid - 1
        rows = lo
    return "\n".join(before + changes(review, rows)) + "\n"
