"""Run stacks in dependency order, up to N at a time; after a failure start nothing new (`up`), let the running
ones finish, and mark the rest not started with the reason."""

from __future__ import annotations

import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Callable

from gpufleet.app.fleet.outcome import FAILED, NOT_STARTED, SUCCEEDED, StackOutcome


def _guarded(run_one: Callable[[str], StackOutcome], name: str) -> StackOutcome:
    """run_one, with an unexpected exception (not the engine's failure, which run_one reports itself) recorded as the
    stack's failure, so one stack never hides the others' outcomes."""
    try:
        return run_one(name)
    except Exception as exc:  # noqa: BLE001
        return StackOutcome(name, FAILED, message=f"stack '{name}': gpufleet could not run it: {type(exc).__name__}: {exc}")


def run(order: list[str], deps: dict[str, set[str]], parallel: int, run_one: Callable[[str], StackOutcome],
        stop_on_failure: bool = True) -> list[StackOutcome]:
    """Outcomes in `order`. A stack starts once its dependencies (within `order`) succeeded; one whose dependency
    did not succeed never starts. With `stop_on_failure`, the first stack that does not succeed stops every start."""
    outcomes = {n: StackOutcome(n) for n in order}
    pending, running = list(order), {}  # type: list[str], dict[Future, str]
    first_failure = ""
    with ThreadPoolExecutor(max_workers=max(1, parallel)) as pool:
        while pending or running:
            for name in list(pending):
                if first_failure and stop_on_failure:
                    outcomes[name].message = f"not started: stack '{first_failure}' failed first"
                    pending.remove(name)
                    continue
                blocked = [d for d in sorted(deps.get(name, ())) if outcomes[d].result != SUCCEEDED and
                           d not in pending and d not in running.values()]
                if blocked:
                    outcomes[name].message = f"not started: it depends on '{blocked[0]}', which did not succeed"
                    pending.remove(name)
                    continue
                if len(running) >= parallel or any(d in pending or d in running.values() for d in deps.get(name, ())):
                    continue
                outcomes[name].started = time.monotonic()
                running[pool.submit(_guarded, run_one, name)] = name
                pending.remove(name)
            if not running:
                break
            finished, _ = wait(list(running), return_when=FIRST_COMPLETED)
            for future in sorted(finished, key=lambda f: running[f]):
                name = running.pop(future)
                started = outcomes[name].started
                outcomes[name] = future.result()
                outcomes[name].started, outcomes[name].finished = started, time.monotonic()
                if outcomes[name].result != SUCCEEDED and not first_failure:
                    first_failure = name
    for name in pending:  # unreachable with an acyclic order, kept so nothing is ever silently dropped
        outcomes[name].result, outcomes[name].message = NOT_STARTED, "not started"
    return [outcomes[n] for n in order]
