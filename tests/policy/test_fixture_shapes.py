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
from tests.policy.test_inline_pools import INLINE_NODE_POOL_IN, INLINE_POOL_IN, SYSTEM_PROFILE

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
    # GPU pools declared inline (issue 50): a ClusterNodePool, and the cluster's own default pool.
    ("gcp", "cluster", {**F.GKE_CLUSTER_IN, "nodePools": [INLINE_NODE_POOL_IN]}),
    ("gcp", "cluster", {**F.GKE_CLUSTER_IN, "initialNodeCount": 1.0, "nodeConfig": F.NODE_POOL_IN["nodeConfig"]}),
]


@pytest.mark.parametrize("sdk,kind,inputs", CASES, ids=[f"{s}-{k}-{i}" for i, (s, k, _) in enumerate(CASES)])
def test_fixture_matches_sdk_wire_shape(sdk, kind, inputs):
    cls = _aws(kind) if sdk == "aws" else _gcp(kind)
    args = {snake(k): to_python(v, snake(k)) for k, v in inputs.items()}
    got = register(lambda: cls("subject", **args))
    assert {k: got[k] for k in inputs if k in got} == inputs
    assert set(inputs) <= set(got)


def test_the_inline_agent_pool_fixture_is_what_azure_native_sends():
    """An agent pool profile as pulumi-azure-native's ManagedCluster sends it (acronyms keep their case on the wire,
    so the profile is written out in Python rather than converted): the names the inline agent pool type reads."""
    from pulumi_azure_native import containerservice as cs

    def profile(p: dict) -> "cs.ManagedClusterAgentPoolProfileArgs":
        extra = {"gpu_profile": cs.GPUProfileArgs(driver=p["gpuProfile"]["driver"])} if "gpuProfile" in p else {}
        keys = {"name": "name", "mode": "mode", "vmSize": "vm_size", "enableAutoScaling": "enable_auto_scaling",
                "minCount": "min_count", "maxCount": "max_count", "count": "count", "scaleSetPriority": "scale_set_priority",
                "nodeLabels": "node_labels", "nodeTaints": "node_taints"}
        return cs.ManagedClusterAgentPoolProfileArgs(**{py: p[wire] for wire, py in keys.items() if wire in p}, **extra)

    got = register(lambda: cs.ManagedCluster("subject", resource_group_name="rg", location="eastus", dns_prefix="prod",
                                             agent_pool_profiles=[profile(SYSTEM_PROFILE), profile(INLINE_POOL_IN)]))
    assert got["agentPoolProfiles"] == [SYSTEM_PROFILE, INLINE_POOL_IN]
