"""The Karpenter example stack planned once per test process (shared by component, upstream and policy tests)."""

from __future__ import annotations

from gpufleet.app.plan.engine import Plan
from tests.helpers import planned

STACK = "karpenter-eks"


def karpenter_eks() -> Plan:
    return planned(STACK, policies=True)
