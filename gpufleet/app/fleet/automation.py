"""One stack through Pulumi's Automation API (`pulumi.automation`): a LocalWorkspace on the project folder, the real
`pulumi` CLI on PATH, the policy pack on every operation.

Only `preview` and `up` are run, with `--policy-pack` and optionally `--refresh`; nothing that lifts protection or
skips a check is ever passed (no target, no replace, no `--skip-preview`, no state edits), so a change that would
delete or replace a protected resource fails in the engine as it does under `pulumi up` (ARGS below is the whole set).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from gpufleet.app.fleet.outcome import FAILED, LOCKED, SUCCEEDED, StackOutcome

# Every keyword argument a fleet run passes to Stack.preview / Stack.up (tests/unit/test_fleet_automation.py).
ARGS = ("policy_packs", "refresh", "on_event", "color", "message")


class Events:
    """What the engine reports while it runs: policy verdicts, the change summary, error diagnostics."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.policies: list[dict] = []
        self.changes: dict[str, int] | None = None
        self.errors: list[str] = []

    def __call__(self, event: Any) -> None:
        with self.lock:
            if event.policy_event is not None:
                p = event.policy_event
                self.policies.append({"policy": p.policy_name, "level": str(p.enforcement_level).lower(),
                                      "urn": p.resource_urn or "", "message": " ".join(str(p.message).split())})
            if event.summary_event is not None:
                self.changes = {str(op): int(n) for op, n in (event.summary_event.resource_changes or {}).items()}
            diag = event.diagnostic_event
            if diag is not None and diag.severity == "error" and diag.message.strip():
                self.errors.append(" ".join(diag.message.split()))


def lock_holder(stack: str, text: str) -> str:
    """The message for a stack another update holds: the CLI's lock line names who (a file backend names the lock
    file, user, host and pid; Pulumi Cloud says only that another update is in progress)."""
    lines = [ln.strip() for ln in text.splitlines()]
    holders = [ln for ln in lines if "created by" in ln or ln.startswith(("file://", "s3://", "gs://", "azblob://"))]
    if holders:
        return f"stack '{stack}' is locked by another update: {'; '.join(holders)} (nothing was run on it)"
    if "Another update is currently in progress" in text:
        return (f"stack '{stack}' is locked: another update is in progress (Pulumi Cloud; its console names who "
                "started it) (nothing was run on it)")
    return f"stack '{stack}' is locked by another update (nothing was run on it)"


def _failure(stack: str, exc: Exception, events: Events) -> str:
    if events.errors:
        return f"stack '{stack}': " + " | ".join(events.errors[:3])[:1500]
    text = str(exc)
    stderr = text.split("\n stderr: ", 1)[-1] if "\n stderr: " in text else text
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    return f"stack '{stack}': " + " | ".join(lines[-3:])[:1500]


class AutomationRunner:
    """`run_one(stack)` for schedule.run: preview or up of one stack of the project."""

    def __init__(self, project: Path, operation: str, policy_pack: Path, refresh: bool = False):
        from pulumi import automation as auto  # the Automation API starts the CLI: only fleet commands load it

        self.auto = auto
        self.operation = operation
        self.policy_pack = policy_pack
        self.refresh = refresh
        self.workspace = auto.LocalWorkspace(work_dir=str(project))

    def kwargs(self, events: Events) -> dict[str, Any]:
        return {"policy_packs": [str(self.policy_pack)], "refresh": self.refresh, "on_event": events,
                "color": "never", "message": f"gpufleet {self.operation}"}

    def _recorded(self, stack: str) -> dict[str, int]:
        """The changes the backend recorded for the stack's last update (when the engine sent no summary event)."""
        if self.operation != "up":
            return {}
        try:
            last = self.auto.Stack.select(stack, self.workspace).history(page_size=1)
        except self.auto.errors.CommandError:
            return {}
        return dict(last[0].resource_changes or {}) if last and last[0].kind == "update" else {}

    def deployed_outputs(self, stack: str) -> dict[str, Any]:
        """The stack's outputs as its last `up` left them (`pulumi stack output`, through the Automation API), plain
        values; {} for a stack never deployed or not in the backend (the run reports that itself)."""
        try:
            outputs = self.auto.Stack.select(stack, self.workspace).outputs()
        except (self.auto.errors.StackNotFoundError, self.auto.errors.CommandError):
            return {}
        return {k: getattr(v, "value", v) for k, v in (outputs or {}).items()}

    def __call__(self, stack: str) -> StackOutcome:
        auto = self.auto
        out = StackOutcome(stack)
        events = Events()
        start = time.monotonic()
        try:
            target = auto.Stack.select(stack, self.workspace)
            if self.operation == "preview":
                result = target.preview(**self.kwargs(events))
                out.changes = {k: v for k, v in (result.change_summary or {}).items() if k != "same"}
            else:
                result = target.up(**self.kwargs(events))
                out.changes = {k: v for k, v in (result.summary.resource_changes or {}).items() if k != "same"}
            out.result = SUCCEEDED
        except auto.errors.ConcurrentUpdateError as exc:
            out.result, out.message = LOCKED, lock_holder(stack, str(exc))
        except auto.errors.StackNotFoundError:
            out.result = FAILED
            out.message = (f"stack '{stack}' does not exist in the backend (allowed: a stack created with "
                           f"`pulumi stack init {stack}` in this project's backend)")
        except auto.errors.CommandError as exc:
            out.result, out.message = FAILED, _failure(stack, exc, events)
            out.changes = {k: v for k, v in (events.changes or self._recorded(stack)).items() if k != "same"}
        out.policies = events.policies
        out.seconds = round(time.monotonic() - start, 1)
        return out


def policy_pack_dir(project: Path, given: str | None) -> Path:
    """The pack folder: --policy-pack (relative to the working directory), else the project's `policies/`."""
    return (Path(given) if given else project / "policies").resolve()


