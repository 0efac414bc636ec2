"""The fleet scheduler (gpufleet/app/fleet/schedule.py): dependency order, N at a time, and after a failure no new
stack starts while the running ones finish."""

from __future__ import annotations

import threading
import time

from gpufleet.app.fleet import schedule
from gpufleet.app.fleet.outcome import FAILED, NOT_STARTED, SUCCEEDED, StackOutcome


class Fake:
    """run_one: each stack takes `seconds[name]` and ends with `results[name]` (default succeeded)."""

    def __init__(self, results=None, seconds=None):
        self.results, self.seconds = results or {}, seconds or {}
        self.started: list[str] = []
        self.running, self.most = 0, 0
        self.lock = threading.Lock()

    def __call__(self, name: str) -> StackOutcome:
        with self.lock:
            self.started.append(name)
            self.running += 1
            self.most = max(self.most, self.running)
        time.sleep(self.seconds.get(name, 0.01))
        with self.lock:
            self.running -= 1
        result = self.results.get(name, SUCCEEDED)
        return StackOutcome(name, result=result, changes={"create": 1}, message="" if result == SUCCEEDED else "boom")


def test_after_a_failure_nothing_new_starts_and_the_running_stack_finishes():
    fake = Fake(results={"b": FAILED}, seconds={"a": 0.3, "b": 0.05})
    out = schedule.run(["a", "b", "c", "d"], {}, 2, fake)
    assert fake.started == ["a", "b"]  # c and d never start: b failed while a was still running
    assert [(o.stack, o.result) for o in out] == [("a", SUCCEEDED), ("b", FAILED), ("c", NOT_STARTED), ("d", NOT_STARTED)]
    assert out[0].finished > out[1].finished  # a ran to its end after b's failure
    assert out[2].message == "not started: stack 'b' failed first" and out[2].started == 0


def test_parallel_bounds_how_many_run_at_once():
    fake = Fake(seconds={n: 0.05 for n in "abcdef"})
    out = schedule.run(list("abcdef"), {}, 3, fake)
    assert fake.most == 3 and all(o.result == SUCCEEDED for o in out)
    fake = Fake()
    schedule.run(list("abcd"), {}, 1, fake)
    assert fake.most == 1 and fake.started == list("abcd")


def test_a_stack_waits_for_its_dependencies_and_never_starts_when_one_failed():
    fake = Fake(seconds={"net": 0.2})
    out = schedule.run(["net", "x", "app"], {"app": {"net"}, "net": set(), "x": set()}, 3, fake)
    assert fake.started.index("app") > fake.started.index("net")
    assert out[2].started >= out[0].finished
    fake = Fake(results={"net": FAILED})
    out = schedule.run(["net", "app"], {"app": {"net"}, "net": set()}, 2, fake, stop_on_failure=False)
    assert fake.started == ["net"]
    assert (out[1].result, out[1].message) == (NOT_STARTED, "not started: it depends on 'net', which did not succeed")


def test_previews_do_not_stop_on_a_failure():
    fake = Fake(results={"a": FAILED})
    out = schedule.run(["a", "b", "c"], {}, 1, fake, stop_on_failure=False)
    assert fake.started == ["a", "b", "c"] and [o.result for o in out] == [FAILED, SUCCEEDED, SUCCEEDED]


def test_an_unexpected_exception_is_that_stacks_failure_and_stops_the_run():
    def run_one(name):
        if name == "b":
            raise OSError("no such file: pulumi")
        return StackOutcome(name, SUCCEEDED)

    out = schedule.run(["a", "b", "c"], {}, 1, run_one)
    assert [(o.stack, o.result) for o in out] == [("a", SUCCEEDED), ("b", FAILED), ("c", NOT_STARTED)]
    assert out[1].message == "stack 'b': gpufleet could not run it: OSError: no such file: pulumi"
