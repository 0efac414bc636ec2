"""One shared plan with the observability layer on (k3s `teams` + kube-prometheus-stack, Kueue and KEDA), planned
once per test process for the upstream-format and component tests of components/observability/."""

from __future__ import annotations

import functools

from gpufleet.app.plan.engine import Plan
from tests.helpers import example_config, plan_config

STACK = "teams-observed"


@functools.cache
def observed() -> Plan:
    config = example_config("teams")
    config["gpufleet:observability"] = {"metrics": {"backend": "kube-prometheus-stack", "storageGib": 80}}
    return plan_config(config, stack=STACK, policies=True)
