"""The EKS example stack planned once per test process (planning imports pulumi_aws: seconds)."""

from __future__ import annotations

import functools
from typing import Callable

from gpufleet.app.plan.engine import Plan, plan
from gpufleet.app.plan.mocks import RecordingMonitor
from gpufleet.app.plan import engine
from tests.helpers import example

STACK = "prod-eks"


def recorded(make_plan: Callable[[], Plan]) -> tuple[Plan, RecordingMonitor]:
    """`make_plan()`'s plan and the monitor that recorded its program (for data-source calls)."""
    monitors: list[RecordingMonitor] = []
    original = engine.register

    def recording(stack_file):
        spec, monitor = original(stack_file)
        monitors.append(monitor)
        return spec, monitor

    engine.register = recording
    try:
        result = make_plan()
    finally:
        engine.register = original
    return result, monitors[0]


@functools.cache
def prod_eks() -> tuple[Plan, RecordingMonitor]:
    """The plan of stacks/Pulumi.prod-eks.yaml and the monitor that recorded it (for data-source calls)."""
    return recorded(lambda: plan(example(STACK)))
