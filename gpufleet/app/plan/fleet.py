"""Plan every stack at once: `gpufleet plan --all`.

Each worker process imports the SDKs once and plans its share of the stacks one after another, each
with a fresh mock monitor and a fresh root Stack resource (`engine.register`), so a stack's result is
exactly what `gpufleet plan STACK` gives for it alone. One stack's failure (an invalid file, an
exception in the program) is recorded as that stack's result and never hides the others.
"""

from __future__ import annotations

import fnmatch
import multiprocessing
import os
import traceback
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from gpufleet.app import escape as md
from gpufleet.base import platforms

EXIT_OK, EXIT_POLICY, EXIT_INVALID = 0, 1, 2
# What each per-stack status means for the fleet's exit code (the worst stack decides).
STATUS_EXIT = {"ok": EXIT_OK, "violations": EXIT_POLICY, "invalid": EXIT_INVALID, "error": EXIT_INVALID}


@dataclass(frozen=True)
class StackResult:
    stack: str
    status: str  # ok | violations | invalid | error
    plan: Optional[dict] = None  # the plan JSON contract (DESIGN.md §5) when it planned
    message: str = ""  # why it did not plan
    rendered: str = ""  # the stack's own plan in the requested text format (what `gpufleet plan STACK` prints)

    @property
    def exit_code(self) -> int:
        return STATUS_EXIT[self.status]


def discover(stacks_dir: Path, patterns: list[str]) -> list[tuple[str, Path]]:
    """`stacks/Pulumi.<name>.yaml` whose name matches any of the glob patterns, sorted by name."""
    found = []
    for path in sorted(stacks_dir.glob("Pulumi.*.yaml")):
        name = path.name[len("Pulumi."):-len(".yaml")]
        if any(fnmatch.fnmatchcase(name, p) for p in patterns):
            found.append((name, path))
    return found


def plan_one(stack: str, path: str, fmt: str = "json") -> StackResult:
    """Plan one stack in this process; every failure becomes the stack's result."""
    from gpufleet.app.plan.engine import plan
    from gpufleet.app.plan.render import render, to_json
    from gpufleet.app.plan.stackfile import StackFileError, read_stack_file
    from gpufleet.base.spec import SpecError

    try:
        result = plan(read_stack_file(stack, Path(path)))
    except (StackFileError, SpecError) as exc:
        return StackResult(stack, "invalid", message=str(exc))
    except Exception as exc:  # noqa: BLE001 - one stack's crash must not hide the other stacks
        last = traceback.extract_tb(exc.__traceback__)[-1:]
        where = f" (at {last[0].filename}:{last[0].lineno})" if last else ""
        return StackResult(stack, "error", message=f"stack '{stack}': the program failed: {type(exc).__name__}: {exc}{where}")
    rendered = "" if fmt == "json" else render(result, fmt)
    status = "violations" if result.has_mandatory_violation else "ok"
    return StackResult(stack, status, plan=to_json(result), rendered=rendered)


def _warm() -> None:
    """Worker initializer: import the SDKs once (they dominate a single plan's time)."""
    import gpufleet.app.plan.engine  # noqa: F401
    import gpufleet.app.plan.render  # noqa: F401
    import gpufleet.policies.pack  # noqa: F401

    sdks = {"pulumi_kubernetes", *(m for name in platforms.names() for m in platforms.get(name).program.sdk_modules)}
    for sdk in sorted(sdks):
        try:
            __import__(sdk)
        except ImportError:  # an SDK the fleet never uses may be absent (its platform's extra not installed)
            pass


def plan_fleet(stacks: list[tuple[str, Path]], jobs: int = 0, fmt: str = "json", progress=None) -> list[StackResult]:
    """Plan every stack; results in the order given. `jobs` 0 means one worker per core; 1 plans here."""
    jobs = jobs or os.cpu_count() or 1
    jobs = min(jobs, len(stacks)) or 1
    done = 0

    def finished(name: str) -> None:  # `progress` (done, total, stack) after each stack, in the order they finish
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, len(stacks), name)

    if jobs == 1:
        results = []
        for name, path in stacks:
            results.append(plan_one(name, str(path), fmt))
            finished(name)
        return results
    # spawn: each worker starts clean (no inherited gRPC or SDK state) and imports the SDKs once.
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_warm) as pool:
        futures = [pool.submit(plan_one, name, str(path), fmt) for name, path in stacks]
        for future, (name, _) in zip(futures, stacks):
            future.add_done_callback(lambda _f, name=name: finished(name))
        return [f.result() for f in futures]


def exit_code(results: list[StackResult]) -> int:
    return max((r.exit_code for r in results), default=EXIT_OK)


def summary_row(result: StackResult) -> dict:
    """One stack in the fleet summary: GPUs, idle floor and maximum cost, violations, or why it failed."""
    if result.plan is None:
        return {"stack": result.stack, "status": result.status, "message": result.message}
    plan = result.plan
    cost = plan.get("cost", {})
    violations = plan.get("violations", [])
    return {
        "stack": result.stack,
        "status": result.status,
        "platform": plan.get("outputs", {}).get("platform"),
        "resources": len(plan.get("resources", [])),
        "gpusMin": sum(c.get("minGpus", 0) for c in plan.get("capacity", [])),
        "gpusMax": sum(c.get("maxGpus", 0) for c in plan.get("capacity", [])),
        "hourlyMin": cost.get("hourlyMin"),
        "hourlyMax": cost.get("hourlyMax"),
        "costIsLowerBound": bool(cost.get("unpricedPools") or cost.get("unpriced")),
        # How much the bound misses (issue 49): unpriced of billed items, unpriced of all GPUs at maximum size.
        "unpricedShare": cost.get("unpricedShare") or {},
        "currency": cost.get("currency", "USD"),
        "mandatory": sum(1 for v in violations if v.get("level") == "mandatory"),
        "advisory": sum(1 for v in violations if v.get("level") != "mandatory"),
    }


def to_json(results: list[StackResult]) -> dict:
    """The fleet document: a summary and each stack's own plan JSON (or its error), keyed by stack."""
    rows = [summary_row(r) for r in results]
    planned = [r for r in rows if "hourlyMin" in r]
    return {
        "fleet": {
            "stacks": len(results),
            "exitCode": exit_code(results),
            "gpusMin": sum(r["gpusMin"] for r in planned),
            "gpusMax": sum(r["gpusMax"] for r in planned),
            "hourlyMin": round(sum(r["hourlyMin"] or 0 for r in planned), 4),
            "hourlyMax": round(sum(r["hourlyMax"] or 0 for r in planned), 4),
            "costIsLowerBound": any(r["costIsLowerBound"] for r in planned),
            "unpricedShare": {k: sum(r["unpricedShare"].get(k, 0) for r in planned)
                              for k in ("items", "billedItems", "gpusMax", "allGpusMax")},
            "summary": rows,
        },
        "stacks": {r.stack: (r.plan if r.plan is not None else {"stack": r.stack, "error": r.message, "status": r.status})
                   for r in results},
    }


def _money(row: dict, key: str) -> str:
    value = row.get(key)
    if value is None:
        return "-"
    return f"{'at least ' if row.get('costIsLowerBound') else ''}{value:.2f}"


_HEADER = ["stack", "status", "platform", "GPUs min-max", "$/h idle floor", "$/h max", "mandatory", "advisory"]


def _rows(doc: dict) -> list[list[str]]:
    rows = []
    for r in doc["fleet"]["summary"]:
        if "hourlyMin" not in r:
            rows.append([r["stack"], r["status"], "-", "-", "-", "-", "-", "-"])
            continue
        rows.append([
            r["stack"], r["status"], r.get("platform") or "?", f"{r['gpusMin']}-{r['gpusMax']}",
            _money(r, "hourlyMin"), _money(r, "hourlyMax"), str(r["mandatory"]), str(r["advisory"]),
        ])
    return rows


def _totals(doc: dict) -> str:
    f = doc["fleet"]
    bound = "at least " if f["costIsLowerBound"] else ""
    share = f["unpricedShare"]
    missing = (f" (unpriced: {share['items']} of {share['billedItems']} billed items, {share['gpusMax']} of "
               f"{share['allGpusMax']} GPUs at maximum size)") if share["items"] else ""
    return (f"{f['stacks']} stacks, {f['gpusMin']}-{f['gpusMax']} GPUs, idle floor {bound}{f['hourlyMin']:.2f} USD/h, "
            f"maximum {bound}{f['hourlyMax']:.2f} USD/h{missing}")


def to_text(results: list[StackResult], details: bool = False) -> str:
    doc = to_json(results)
    rows = [_HEADER] + _rows(doc)
    widths = [max(len(r[i]) for r in rows) for i in range(len(_HEADER))]
    out = ["gpufleet fleet plan: " + _totals(doc), ""]
    out += ["  " + "  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
    failed = [r for r in results if r.plan is None]
    if failed:
        out += ["", "stacks that did not plan:"] + [f"  - {r.message}" for r in failed]
    if details:
        for r in results:
            if r.plan is not None:
                out += ["", "=" * 78, r.rendered.rstrip("\n")]
    else:
        out += ["", "each stack's plan: `gpufleet plan STACK`, or this command with --details"]
    return "\n".join(out) + "\n"


def to_markdown(results: list[StackResult], details: bool = False) -> str:
    doc = to_json(results)
    out = ["### gpufleet fleet plan", "", _totals(doc) + ".", ""]
    out += ["| " + " | ".join(_HEADER) + " |", "|" + "---|" * len(_HEADER)]
    out += ["| " + " | ".join(md.cell(md.text(c)) for c in row) + " |" for row in _rows(doc)]
    failed = [r for r in results if r.plan is None]
    if failed:
        out += ["", "#### Stacks that did not plan", ""]
        for r in failed:
            out += [f"- {md.code(r.stack)} ({md.text(r.status)}):", "", *("  " + line for line in md.block(r.message))]
    for r in results if details else []:
        if r.plan is not None:
            out += ["", r.rendered.rstrip("\n")]
    return "\n".join(out) + "\n"


def render(results: list[StackResult], fmt: str, details: bool = False) -> str:
    """The fleet summary; with `details` (text, markdown) each stack's own plan after it. JSON always carries every
    stack's plan (the review reads them)."""
    import json

    if fmt == "json":
        return json.dumps(to_json(results), indent=2, sort_keys=True) + "\n"
    if fmt == "markdown":
        return to_markdown(results, details)
    return to_text(results, details)
