"""The review as plain text for a terminal or a CI log (values keep their characters, less control ones)."""

from __future__ import annotations

from gpufleet.app.review.crds import text_lines as crd_lines
from gpufleet.app.review.diff import short, text_delta
from gpufleet.app.escape import clean, visible
from gpufleet.base.spec.errors import inert
from gpufleet.app.review.markdown import reason_text as _reason, unprotect_text as _unprotect, verb_of
from gpufleet.app.review.summary import Review


def log_text(lines: list[str]) -> str:
    """`lines` as text for a terminal or a CI log: each line visible (gpufleet/app/escape.py) and inert."""
    return "".join(inert(visible(line)) + "\n" for line in lines)


def reason_text(ch) -> str:
    return _reason(ch, code=clean, text=clean)


def unprotect_text(ch) -> str:
    return _unprotect(ch, code=clean, text=clean).replace("`", "")


def _fmt(values: tuple[str, ...]) -> str:
    return ", ".join(values) or "-"


def render(review: Review) -> str:
    c = review.counts()
    what = ", ".join(f"{n} to {op}" for op, n in c.items() if n) or "no resource changes"
    out = [f"gpufleet review for stack '{review.stack}' (from {review.source}): {what}"]
    out += [f"note: {n}" for n in review.notes]
    if review.refused:
        out += ["", f"WILL FAIL AT `pulumi up`: {len(review.refused)} version move(s) the cloud refuses:"]
        out += [f"  x {clean(m.line())}" for m in review.refused]
        out.append("")
    out.append(f"MANDATORY POLICY VIOLATIONS: {len(review.blocking)}" if review.blocking else "no mandatory policy violations")
    if review.warnings:
        out += ["", "plan warnings:"] + [f"  {'(new) ' if w.new else ''}{clean(w.path)}: {clean(w.message)}"
                                         for w in review.warnings]

    if review.hidden:
        out += ["", "changes inside secret inputs (a preview shows [secret]):"]
        out += [f"  ~ {ch.name} ({ch.type}): {clean(', '.join(ch.hidden))} changed" for ch in review.hidden]

    if review.config or review.config_note:
        out += ["", "stack file outside gpufleet: (where requests go, which keys decrypt secrets):"]
        out += [f"  ! {clean(c.finding)}" for c in review.config]
        out += [f"  not compared: {clean(review.config_note)}"] if review.config_note else []

    out += ["", "disruptive changes:"]
    for ch in review.disruptive:
        verb = verb_of(ch)
        if ch.data_loss:
            out.append(f"  !! POSSIBLE DATA LOSS: {verb} {ch.kind or 'resource'} {ch.name} ({ch.type}), which holds "
                       f"{clean(ch.holds)}: {reason_text(ch)}")
        elif ch.unprotects and ch.op == "update" and not ch.may_replace:
            out.append(f"  ! REMOVES PROTECTION from {ch.kind or 'resource'} {ch.name} ({ch.type}): "
                       f"{unprotect_text(ch)}")
            continue
        elif ch.rollout and ch.op == "update" and not ch.may_replace:
            out.append(f"  ! REPLACES THE NODES of {ch.kind or 'resource'} {ch.name}, rolling ({ch.type}): {clean(ch.rollout)}")
        else:
            out.append(f"  ! {verb} {ch.kind or 'resource'} {ch.name} ({ch.type}): {reason_text(ch)}")
        if ch.unprotects:
            out.append(f"      and {unprotect_text(ch)}")
    for p in review.capacity_disruptions:
        out.append(f"  ! CAPACITY pool {p.pool}: {p.capacity_disruption}")
    if not review.disruptive and not review.capacity_disruptions:
        out.append("  none")

    out += ["", "policies:"]
    for v in review.verdicts:
        out.append(f"  [{v.level}] {v.policy} ({v.status}) on {v.resource}: {v.finding}")
        if v.status != "resolved":
            out.append(f"      rule: {v.rule}" if v.rule else "      rule: (no description)")
            out.append(f"      fix: {v.fix.replace('`', '')}")
    if not review.verdicts:
        out.append("  no findings")

    out += ["", "GPU capacity:"]
    if review.capacity is None:
        out.append("  not in this input (use `gpufleet diff` on two offline plans)")
    for p in review.capacity or []:
        b, a = p.before or {}, p.after or {}
        fields = p.changed_fields if p.status == "changed" else []
        detail = "; ".join(f"{f} {short(b.get(f))} -> {short(a.get(f))}" for f in fields)
        now = a or b
        out.append(f"  {p.pool}: {p.status}  {now.get('gpu')} x{now.get('gpusPerNode')} {now.get('capacitySource') or now.get('capacityType')}, "
                   f"GPUs {now.get('minGpus')}-{now.get('maxGpus')}" + (f"  ({detail})" if detail else ""))

    if review.cost is not None:
        k = review.cost
        b = "at least " if k.at_least_before else ""
        a = "at least " if k.at_least_after else ""
        out += ["", f"hourly cost ({k.currency}): idle floor {b}{k.min_before:.2f} -> {a}{k.min_after:.2f} ({k.min_delta:+.2f}), "
                f"maximum {b}{k.max_before:.2f} -> {a}{k.max_after:.2f} ({k.max_delta:+.2f})"]
        fmt = lambda x: "unknown" if x is None else f"{x:+.2f}"  # noqa: E731
        for i in k.changed:
            out.append(f"  {i.status} {i.name}: min {fmt(i.min_delta)}, max {fmt(i.max_delta)}")
        if k.unknown:
            out.append("  unknown (unpriced before or after, left out of the delta): " + ", ".join(i.name for i in k.unknown))
        for t in k.teams:
            out.append(f"  team {t.team} on {t.pool}: nominal {fmt(t.nominal_delta)}, with borrowing {fmt(t.max_delta)}")

    out += ["", "versions:"]
    for v in review.versions:
        out.append(f"  {v.component}: {_fmt(v.before)} -> {_fmt(v.after)}" if v.changed else f"  {v.component}: {_fmt(v.after)}")
    out.append("  aligned" if not review.alignment else "  NOT ALIGNED: " + "; ".join(
        f"{v.policy}: {v.finding}" for v in review.alignment))

    if review.kubernetes_bump:  # review/kube.py
        out += [""] + [review.kubernetes_bump[0] + ":"] + [f"  {line}" for line in review.kubernetes_bump[1:]]
    if review.disruption:  # GPU node disruption settings (review/disruption.py, docs/upgrades.md)
        out += ["", "disruption changes:"] + [f"  {line}" for line in review.disruption]
    if review.crds or review.crd_notes:  # a chart bump's CRDs (review/crds.py, docs/upgrades.md)
        out += ["", "CRD changes:"] + [f"  {line}" for line in crd_lines(review.crds, review.crd_notes)]

    out += ["", "changes by component:"]
    group = None
    for ch in review.changes:
        if ch.group != group:
            group = ch.group
            out.append(f"  {group}")
        out.append(f"    {ch.op:<8} {ch.name}  ({ch.type})")
        for i in ch.inputs:
            delta = text_delta(i.before, i.after)
            mark = "  [forces replacement]" if i.forces and i.certain else ("  [may replace]" if i.forces else "")
            out.append(f"        {i.path}: {delta or short(i.before) + ' -> ' + short(i.after)}{mark}")
    if not review.changes:
        out.append("  none")
    # One value, one line: a newline or an escape sequence in a value must not start a line of its own in a CI
    # log or recolour a terminal, and no line is a workflow command (`::command::` after leading whitespace, `##[`
    # anywhere: gpufleet.base.spec.errors `inert`). The one place the text review leaves gpufleet.
    return log_text(out)
