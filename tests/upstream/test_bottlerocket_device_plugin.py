"""Real-chart test (DESIGN.md section 6, layer 6): Bottlerocket GPU pools get no second NVIDIA device plugin.

Bottlerocket's aws-k8s-*-nvidia variants run their own NVIDIA device plugin. The GPU Operator deploys its device
plugin DaemonSet on nodes labelled nvidia.com/gpu.deploy.device-plugin=true (NVIDIA/gpu-operator v26.7.0, commit
10ee5b36, assets/state-device-plugin/0500_daemonset.yaml line 20) and sets that label itself only where it is absent
or empty (controllers/state_manager.go lines 476-485). So gpufleet labels Bottlerocket node groups with "false", and
when every GPU pool is Bottlerocket it turns the operator's device plugin off in the chart values: the rendered
ClusterPolicy must say so.
"""

from __future__ import annotations

import pytest

from gpufleet.base import labels as L
from tests.helm import template
from tests.helpers import REFERENCE, example_config, one, plan_config, planned

CHART = REFERENCE / "charts" / "gpu-operator-v26.7.0.tgz"
RELEASE = "kubernetes:helm.sh/v3:Release"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"

pytestmark = pytest.mark.skipif(not CHART.exists(), reason=f"pinned chart not found: {CHART} (../shared/reference absent)")


def cluster_policy(values: dict) -> dict:
    objs = template(CHART, values, "gpu-operator", release="gpu-operator")
    (policy,) = [o for o in objs if o["kind"] == "ClusterPolicy"]
    return policy["spec"]


@pytest.fixture(scope="module")
def bottlerocket_only():
    return planned("ai-on-eks", policies=True)


@pytest.fixture(scope="module")
def mixed():
    """prod-eks with its L4 inference pool on Bottlerocket, the H100 pool on AL2023."""
    config = example_config("prod-eks")
    config["gpufleet:nodePools"][1]["ami"] = "bottlerocket-nvidia"
    config["gpufleet:workloads"]["cudaVersions"] = ["12.8"]  # the catalog's Bottlerocket driver branch is 570
    return plan_config(config, stack="mixed")


def test_all_bottlerocket_renders_no_operator_device_plugin(bottlerocket_only):
    values = one(bottlerocket_only, RELEASE, "ai-stack-gpu-operator-release").inputs["values"]
    spec = cluster_policy(values)
    assert spec["devicePlugin"]["enabled"] is False
    # The AMI ships the driver and toolkit too: the operator installs neither.
    assert spec["driver"]["enabled"] is False and spec["toolkit"]["enabled"] is False


def test_mixed_pools_keep_the_plugin_for_al2023_and_label_bottlerocket_off(mixed):
    values = one(mixed, RELEASE, "prod-gpu-gpu-operator-release").inputs["values"]
    spec = cluster_policy(values)
    # AL2023 nodes need the operator's device plugin ...
    assert spec["devicePlugin"]["enabled"] is True
    # ... and the Bottlerocket group's nodes opt out of it by the operator's own deploy label.
    bottlerocket = one(mixed, NODE_GROUP, "prod-gpu-pool-l4-infer-ng").inputs
    al2023 = one(mixed, NODE_GROUP, "prod-gpu-pool-h100-train-ng").inputs
    assert bottlerocket["amiType"] == "BOTTLEROCKET_x86_64_NVIDIA"
    assert bottlerocket["labels"][L.GPU_OPERATOR_DEVICE_PLUGIN_DEPLOY_LABEL] == "false"
    assert L.GPU_OPERATOR_DEVICE_PLUGIN_DEPLOY_LABEL not in al2023["labels"]
    # The label reaches the autoscaler's node template, so a group scaled to zero is planned the same way.
    tags = bottlerocket["tags"]
    assert tags[f"{L.CA_TEMPLATE_LABEL}{L.GPU_OPERATOR_DEVICE_PLUGIN_DEPLOY_LABEL}"] == "false"


def test_label_key_is_the_operators():
    """The key gpufleet sets is the one the pinned operator's device-plugin DaemonSet selects on. The chart does not
    ship the operand assets, but its ClusterPolicy keeps the device plugin managed per node: the rendered
    ClusterPolicy has no node selector of its own that would bypass the deploy label."""
    spec = cluster_policy({"driver": {"enabled": False}})
    assert "nodeSelector" not in spec["devicePlugin"]
    assert L.GPU_OPERATOR_DEVICE_PLUGIN_DEPLOY_LABEL == "nvidia.com/gpu.deploy.device-plugin"
