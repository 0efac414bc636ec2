"""`gpufleet verify STACK`: accept a cluster after `pulumi up`. Reads the stack (its validated spec and the plan's
per-pool capacity), then checks the live cluster with the official Kubernetes client: the GPU stack's operator
DaemonSets are Ready; per GPU pool a one-GPU pod schedules (time to schedule: scale-from-zero works); each Ready
node advertises the planned resources; DCGM diagnostics pass (a Job); on RDMA pools with --level full an NCCL
all-reduce across two nodes reaches 80 % of the expected bus bandwidth. docs/verify.md.

Exit codes: 0 every check passed (skips allowed), 1 a check failed or the run was interrupted, 2 usage,
connection or stack errors (one line on stderr)."""

from __future__ import annotations

import json
from typing import Mapping, Optional

from gpufleet.base.catalog import nccl as nccl_catalog  # not `nccl`: that is the subpackage .nccl
from gpufleet.app.verify.busbw import ExpectedBusbw
from gpufleet.app.verify.run import FAIL, PASS, SKIP, ConnectionProblem, Result, Runner
from gpufleet.app.verify.targets import PoolTarget, Targets, targets

__all__ = ["ConnectionProblem", "ExpectedBusbw", "Result", "Runner", "VerifyUsageError", "expected_busbw", "render",
           "select_pools", "targets", "verify"]


class VerifyUsageError(Exception):
    """Bad --pools, or a stack with nothing to verify: exit 2."""


def expected_busbw() -> dict[str, ExpectedBusbw]:
    """Expected two-node NCCL all-reduce bus bandwidth per instance/machine type, with the message size it was
    measured at, from the catalog (gpufleet/base/catalog/nccl_busbw.yaml: published, measured figures with their
    sources). A type without a sourced figure is absent, so its comparison is reported as skipped, never guessed."""
    return {t: ExpectedBusbw(f.busbw_gbps, f.message_bytes) for t, f in nccl_catalog.busbw_figures().items()}


def select_pools(t: Targets, names: Optional[list[str]]) -> list[PoolTarget]:
    if not t.pools:
        raise VerifyUsageError(f"stack '{t.stack}' has no GPU pool to verify")
    if not names:
        return list(t.pools)
    known = {p.name: p for p in t.pools}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise VerifyUsageError(f"--pools {','.join(unknown)}: not a GPU pool of stack '{t.stack}' "
                               f"(pools: {', '.join(known)})")
    return [known[n] for n in names]


def verify(api_client, t: Targets, pools: list[PoolTarget], level: str = "quick", timeout: float = 600,
           namespace: str = "default", expected: Optional[Mapping[str, "float | ExpectedBusbw"]] = None, poll: Optional[float] = None,
           run_id: Optional[str] = None) -> Result:
    runner = Runner(api_client, t, level, timeout, namespace, expected_busbw() if expected is None else expected,
                    poll=min(2.0, timeout / 10) if poll is None else poll, run_id=run_id)
    return runner.run(pools)


_MARK = {PASS: "PASS", FAIL: "FAIL", SKIP: "SKIP"}


def render(result: Result, fmt: str) -> str:
    if fmt == "json":
        return json.dumps({
            "stack": result.stack, "runId": result.run_id, "level": result.level, "ok": result.ok,
            "interrupted": result.interrupted,
            "checks": [{"check": c.name, "target": c.target, "status": c.status, "detail": c.detail,
                        "seconds": c.seconds} for c in result.checks],
        }, indent=2) + "\n"
    verdict = "interrupted (cleaned up)" if result.interrupted else "all checks passed" if result.ok else "FAILED"
    if fmt == "markdown":
        rows = [f"### gpufleet verify `{result.stack}` ({result.level}): {verdict}", "",
                "| check | target | result | seconds | detail |", "|---|---|---|---|---|"]
        rows += [f"| {c.name} | {c.target} | {_MARK[c.status]} | {'' if c.seconds is None else c.seconds} | "
                 f"{c.detail.replace('|', '/')} |" for c in result.checks]
        return "\n".join(rows) + "\n"
    lines = [f"gpufleet verify {result.stack} ({result.level}, run {result.run_id}): {verdict}"]
    for c in result.checks:
        took = f" [{c.seconds}s]" if c.seconds is not None else ""
        lines.append(f"  {_MARK[c.status]}  {c.name:<10} {c.target:<20} {c.detail}{took}")
    return "\n".join(lines) + "\n"
