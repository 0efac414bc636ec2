"""The fixtures are the shapes the real SDKs send: each is registered through pulumi_aws / pulumi_gcp /
pulumi_kubernetes under mocks, and what reaches the monitor must equal the fixture. A renamed input in a
provider upgrade fails here instead of silently making a rule judge nothing."""

from __future__ import annotations

import re

import pulumi
import pytest
from pulumi.runtime.sync_await import _sync_await
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime import settings as runtime_settings

from gpufleet.app.plan.mocks import PlanMocks, RecordingMonitor
from tests.policy import fixtures as F

# Map-valued inputs keep their keys as written (tags, labels); everything else is snake_case in Python.
MAPS = {"tags", "labels", "resource_labels", "annotations", "data", "values"}


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def to_python(value, key: str = ""):
    if isinstance(value, dict) and key not in MAPS:
        return {snake(k): to_python(v, snake(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [to_python(v, key) for v in value]
    return value


def register(build) -> dict:
    monitor = RecordingMonitor(PlanMocks())
    runtime_settings.ROOT.set(None)
    pulumi.runtime.set_mocks(PlanMocks(), project="gpufleet", stack="shapes", preview=False, monitor=monitor)
    _sync_await(run_pulumi_func(build))
    (reg,) = [r for r in monitor.registrations if r.custom]
    return reg.inputs


def _aws(kind):
    import pulumi_aws as aws

    return {"nodeGroup": aws.eks.NodeGroup, "cluster": aws.eks.Cluster, "launchTemplate": aws.ec2.LaunchTemplate, "placementGroup": aws.ec2.PlacementGroup}[kind]


def _gcp(kind):
    import pulumi_gcp as gcp

    return {"nodePool": gcp.container.NodePool, "cluster": gcp.container.Cluster}[kind]


CASES = [
    ("aws", "nodeGroup", F.NODE_GROUP_IN),
    ("aws", "nodeGroup", F.SPOT_NODE_GROUP_IN),
    ("aws", "cluster", F.EKS_CLUSTER_IN),
    ("aws", "launchTemplate", F.LAUNCH_TEMPLATE_IN),
    ("aws", "placementGroup", F.PLACEMENT_GROUP_IN),
    ("gcp", "nodePool", F.NODE_POOL_IN),
    ("gcp", "cluster", F.GKE_CLUSTER_IN),
]


@pytest.mark.parametrize("sdk,kind,inputs", CASES, ids=[f"{s}-{k}-{i}" for i, (s, k, _) in enumerate(CASES)])
def test_fixture_matches_sdk_wire_shape(sdk, kind, inputs):
    cls = _aws(kind) if sdk == "aws" else _gcp(kind)
    args = {snake(k): to_python(v, snake(k)) for k, v in inputs.items()}
    got = register(lambda: cls("subject", **args))
    assert {k: got[k] for k in inputs if k in got} == inputs
    assert set(inputs) <= set(got)
