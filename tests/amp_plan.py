"""EKS plans with gpufleet:observability.metrics.backend: amp, planned once per test process (planning imports
pulumi_aws: seconds): teams-eks (Kueue on) with KEDA added, a new workspace and alerts sent to an SNS topic, and
prod-eks sending to an existing workspace (alerts sent nowhere)."""

from __future__ import annotations

import functools

from gpufleet.app.plan.engine import Plan
from tests.helpers import example_config, plan_config

WORKSPACE_ARN = "arn:aws:aps:us-east-1:123456789012:workspace/ws-1234abcd-5678-ef90-ab12-cdef3456a78"
TOPIC_ARN = "arn:aws:sns:us-east-1:123456789012:gpu-alerts"


def amp_config() -> dict:
    config = example_config("teams-eks")
    config["gpufleet:addons"] = {**config["gpufleet:addons"], "keda": {"enabled": True}}
    config["gpufleet:observability"] = {"metrics": {"backend": "amp"}, "alerts": {"snsTopicArn": TOPIC_ARN}}
    return config


@functools.cache
def amp_teams() -> Plan:
    return plan_config(amp_config(), stack="teams-amp", policies=True)


@functools.cache
def amp_existing_workspace() -> Plan:
    config = example_config("prod-eks")
    config["gpufleet:observability"] = {"metrics": {"backend": "amp", "ampWorkspaceArn": WORKSPACE_ARN, "scrapeInterval": "1m"},
                                        "alerts": {"idleMinutes": 45}}
    return plan_config(config, stack="prod-amp", policies=True)
