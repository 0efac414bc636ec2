"""One shared GKE plan with the default metrics backend (gke-managed) and both scraped add-ons on (the dws-gke
example, which runs Kueue, plus KEDA, with alerts sent to a notification channel), planned once per test process for the component and upstream-format tests of
components/observability/gke_managed.py."""

from __future__ import annotations

import functools

from gpufleet.app.plan.engine import Plan
from tests.helpers import example_config, plan_config

STACK = "dws-gke-managed"
CHANNEL = "projects/my-gpu-project/notificationChannels/1234567890"


@functools.cache
def managed() -> Plan:
    config = example_config("dws-gke")
    addons = dict(config["gpufleet:addons"])
    addons["keda"] = {"enabled": True}
    config["gpufleet:addons"] = addons
    config["gpufleet:observability"] = {"alerts": {"notificationChannels": [CHANNEL]}}
    return plan_config(config, stack=STACK, policies=True)
