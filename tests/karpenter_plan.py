"""The Karpenter example stack planned once per test process (shared by component, upstream and policy tests)."""

from __future__ import annotations

import functools

from gpufleet.app.plan.engine import Plan, plan
from tests.helpers import example

STACK = "karpenter-eks"


@functools.cache
def karpenter_eks() -> Plan:
    return plan(example(STACK))
