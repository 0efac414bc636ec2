import pytest

from gpufleet.policies import inputs as I
from tests.policy.fixtures import DELETE, NODE_GROUP_IN, NODE_POOL_IN, TEMPLATE, findings, messages, res, with_

P = "gpu-pool-scale-to-zero"


def run(stack: dict, config=None) -> set:
    return findings(list(stack.values()), config, policy=P)


def test_eks_min_size_FAILED(eks_stack):
    eks_stack["h100"] = res(I.EKS_NODE_GROUP, "h100", with_(NODE_GROUP_IN, "scalingConfig.minSize", 1.0))
    assert run(eks_stack) == {(P, "h100", "mandatory")}


@pytest.mark.parametrize(
    "tag",
    [f"{TEMPLATE}/resources/nvidia.com/gpu", f"{TEMPLATE}/label/gpufleet.io/pool", f"{TEMPLATE}/taint/nvidia.com/gpu"],
    ids=["gpu-resource", "label", "taint"],
)
def test_eks_missing_node_template_tag_FAILED(eks_stack, tag):
    inputs = with_(NODE_GROUP_IN, "tags", {k: v for k, v in NODE_GROUP_IN["tags"].items() if k != tag})
    eks_stack["h100"] = res(I.EKS_NODE_GROUP, "h100", inputs)
    assert run(eks_stack) == {(P, "h100", "mandatory")}
    assert tag in messages(list(eks_stack.values()), P)[0]


def test_eks_PASSED_with_tags_on_asg_tag_resources(eks_stack):
    """Node-template tags as aws:autoscaling/tag:Tag resources beside the node group count too."""
    parent = "urn:pulumi:test::gpufleet::gpufleet:eks:EksNodePool::h100"
    eks_stack["h100"] = res(I.EKS_NODE_GROUP, "h100", {**NODE_GROUP_IN, "tags": {}}, parent=parent)
    for key in NODE_GROUP_IN["tags"]:
        eks_stack[key] = res("aws:autoscaling/tag:Tag", key, {"autoscalingGroupName": "asg", "tag": {"key": key, "value": "x", "propagateAtLaunch": False}}, parent=parent)
    eks_stack["pool"] = res("gpufleet:eks:EksNodePool", "h100", {}, None)
    eks_stack["pool"].urn = parent
    assert run(eks_stack) == set()


def test_eks_FAILED_without_autoscaler(eks_stack):
    del eks_stack["cluster-autoscaler"]
    assert messages(list(eks_stack.values()), P)[0].endswith("no cluster-autoscaler Helm release in the stack: nothing scales this pool up from 0")


def test_message_names_idle_cost_from_catalog(eks_stack):
    eks_stack["h100"] = res(I.EKS_NODE_GROUP, "h100", with_(NODE_GROUP_IN, "scalingConfig.minSize", 2.0))
    (message,) = messages(list(eks_stack.values()), P)
    assert "minSize is 2, not 0: 2 idle node(s) cost $110.08/h ($55.04/h each" in message


def test_a_spot_pools_idle_cost_is_at_the_spot_price(eks_stack):
    """Issue 50: the cost a finding names is at the pool's own capacity type (p5.48xlarge: on-demand 55.04, spot
    30.0 in aws_instances.yaml)."""
    spot = with_(with_(NODE_GROUP_IN, "scalingConfig.minSize", 2.0), "capacityType", "SPOT")
    eks_stack["h100"] = res(I.EKS_NODE_GROUP, "h100", spot)
    (message,) = messages(list(eks_stack.values()), P)
    assert "minSize is 2, not 0: 2 idle node(s) cost $60.00/h ($30.00/h each, catalog spot estimate)" in message


def test_non_gpu_node_group_is_not_judged(eks_stack):
    eks_stack["cpu"] = res(I.EKS_NODE_GROUP, "cpu", {**NODE_GROUP_IN, "instanceTypes": ["m7i.large"], "amiType": "AL2023_x86_64_STANDARD", "scalingConfig": {"minSize": 2.0}})
    assert run(eks_stack) == set()


@pytest.mark.parametrize(
    "path,value",
    [("autoscaling.minNodeCount", 1.0), ("autoscaling.totalMinNodeCount", 2.0), ("autoscaling", DELETE)],
)
def test_gke_FAILED(gke_stack, path, value):
    gke_stack["h100"] = res(I.GKE_NODE_POOL, "h100", with_(NODE_POOL_IN, path, value))
    assert run(gke_stack) == {(P, "h100", "mandatory")}


def test_gke_per_zone_minimum_counts_every_zone(gke_stack):
    inputs = with_(with_(NODE_POOL_IN, "autoscaling.minNodeCount", 1.0), "nodeLocations", ["us-central1-a", "us-central1-b"])
    gke_stack["h100"] = res(I.GKE_NODE_POOL, "h100", inputs)
    (message,) = messages(list(gke_stack.values()), P)
    assert "2 idle node(s) cost $176.98/h ($88.49/h each" in message  # a3-highgpu-8g, gcp_machines.yaml


def test_exempt_by_tag_with_reason(eks_stack):
    inputs = with_(NODE_GROUP_IN, "scalingConfig.minSize", 1.0)
    inputs["tags"]["gpufleet.io/exempt-gpu-pool-scale-to-zero"] = "always-on inference"
    eks_stack["h100"] = res(I.EKS_NODE_GROUP, "h100", inputs)
    assert run(eks_stack) == set()


def test_exempt_tag_without_reason_does_not_exempt(eks_stack):
    inputs = with_(NODE_GROUP_IN, "scalingConfig.minSize", 1.0)
    inputs["tags"]["gpufleet.io/exempt-gpu-pool-scale-to-zero"] = " "
    eks_stack["h100"] = res(I.EKS_NODE_GROUP, "h100", inputs)
    assert run(eks_stack) == {(P, "h100", "mandatory")}


def test_exempt_by_policy_config(gke_stack):
    gke_stack["h100"] = res(I.GKE_NODE_POOL, "h100", with_(NODE_POOL_IN, "autoscaling.minNodeCount", 1.0))
    assert run(gke_stack, {P: {"exemptions": {"h100": "always-on inference"}}}) == set()


def test_policy_config_can_lower_the_level(gke_stack):
    gke_stack["h100"] = res(I.GKE_NODE_POOL, "h100", with_(NODE_POOL_IN, "autoscaling.minNodeCount", 1.0))
    assert run(gke_stack, {P: {"enforcementLevel": "advisory"}}) == {(P, "h100", "advisory")}
    assert run(gke_stack, {P: {"enforcementLevel": "disabled"}}) == set()


@pytest.mark.parametrize("instance_type", ["p6e-gb200.36xlarge", "p6e-gb300.36xlarge"])
def test_eks_grace_blackwell_pool_is_judged(eks_stack, instance_type):
    """Issue 32: a GB200/GB300 node group (no catalog row, non-NVIDIA AMI string) is a GPU pool by its family."""
    inputs = {**NODE_GROUP_IN, "instanceTypes": [instance_type], "amiType": "CUSTOM"}
    eks_stack["gb"] = res(I.EKS_NODE_GROUP, "gb", with_(inputs, "scalingConfig.minSize", 1.0))
    assert run(eks_stack) == {(P, "gb", "mandatory")}
    eks_stack["gb"] = res(I.EKS_NODE_GROUP, "gb", inputs)
    assert run(eks_stack) == set()


# Survivors of the mutation sample (docs/testing.md).
def test_eks_tags_on_asg_tag_resources_count_under_the_group_and_its_pool_alike(eks_stack):
    """Tag resources may sit under the node group or under its pool component; a key present under both still
    counts (the union of the two, not their symmetric difference)."""
    pool_urn = "urn:pulumi:test::gpufleet::gpufleet:eks:EksNodePool::h100"
    eks_stack["h100"] = res(I.EKS_NODE_GROUP, "h100", {**NODE_GROUP_IN, "tags": {}}, parent=pool_urn)
    group_urn = eks_stack["h100"].urn
    keys = sorted(NODE_GROUP_IN["tags"])
    for i, key in enumerate(keys):
        parents = [pool_urn, group_urn] if i == 0 else [(pool_urn, group_urn)[i % 2]]
        for j, parent in enumerate(parents):
            eks_stack[f"{key}-{j}"] = res("aws:autoscaling/tag:Tag", f"{key}-{j}", {
                "autoscalingGroupName": "asg", "tag": {"key": key, "value": "x", "propagateAtLaunch": False}}, parent=parent)
    eks_stack["pool"] = res("gpufleet:eks:EksNodePool", "h100", {}, None)
    eks_stack["pool"].urn = pool_urn
    assert run(eks_stack) == set()


@pytest.mark.parametrize("path", ["nodeCount", "initialNodeCount"])
def test_gke_pool_without_autoscaling_names_the_idle_cost_of_either_count(gke_stack, path):
    inputs = with_(with_(NODE_POOL_IN, "autoscaling", DELETE), path, 2.0)
    gke_stack["h100"] = res(I.GKE_NODE_POOL, "h100", inputs)
    (message,) = messages(list(gke_stack.values()), P)
    assert message.endswith("GPU pool 'h100': autoscaling is not enabled, so the pool never scales to or from 0: "
                            "2 idle node(s) cost $176.98/h ($88.49/h each, catalog on-demand estimate)")


def test_an_eks_dra_pool_at_zero_names_each_autoscaler_that_cannot_bring_it_back(eks_stack):
    """Issue 56: `or` -> `and` before the fallback text survived, so the message could name no autoscaler at all."""
    from gpufleet.base import labels
    from gpufleet.base.catalog import dra as dra_facts

    value = "".join(["d", "r", "a"])  # as inputs arrive over gRPC: a string built at run time (`is not` fails on it)
    dra = {**NODE_GROUP_IN, "labels": {**NODE_GROUP_IN["labels"], labels.GPU_ALLOCATION_LABEL: value},
           "tags": {**NODE_GROUP_IN["tags"], f"{TEMPLATE}/label/{labels.GPU_ALLOCATION_LABEL}": "dra"}}
    eks_stack["h100"] = res(I.EKS_NODE_GROUP, "h100", dra)
    (message,) = [m.split("\n", 1)[-1] for m in messages(list(eks_stack.values()), P)]
    unable = [a for a in dra_facts.autoscalers("eks").values() if not a.can_scale_from_zero]
    assert unable, "the catalog knows EKS's autoscalers"
    why = "; ".join(f"{a.name} (DRA since {a.dra_since}, {a.flag}) cannot scale a DRA pool up from zero" for a in unable)
    assert message == (f"GPU pool 'h100': a DRA pool with a minimum of 0 would be stranded: {why} (sources: "
                       "gpufleet/base/catalog/dra.yaml). Fix: set minNodes to at least 1 (a whole NVLink domain on GB200 "
                       "NVL72 pools), or put the pool on the device plugin")
    eks_stack["h100"] = res(I.EKS_NODE_GROUP, "h100", with_(dra, "scalingConfig.minSize", 1.0))
    assert messages(list(eks_stack.values()), P) != []  # min 1 is not zero: only the idle cost is said
    assert not [m for m in messages(list(eks_stack.values()), P) if "stranded" in m]


def test_gke_pool_without_autoscaling_or_a_count_names_no_idle_cost(gke_stack):
    """No node count: the message names no idle nodes (issue 56: the count's fallback `or 0` -> `or 1` survived)."""
    gke_stack["h100"] = res(I.GKE_NODE_POOL, "h100", with_(NODE_POOL_IN, "autoscaling", DELETE))
    (message,) = messages(list(gke_stack.values()), P)
    assert message.endswith("GPU pool 'h100': autoscaling is not enabled, so the pool never scales to or from 0")


def test_gke_total_minimum_of_one_is_one_idle_node(gke_stack):
    """totalMinNodeCount 1, one past the limit (issue 56: `total > 0` -> `> 1` survived; the FAILED case above uses 2)."""
    gke_stack["h100"] = res(I.GKE_NODE_POOL, "h100", with_(NODE_POOL_IN, "autoscaling.totalMinNodeCount", 1.0))
    (message,) = messages(list(gke_stack.values()), P)
    assert message.endswith("GPU pool 'h100': autoscaling.totalMinNodeCount is 1, not 0: "
                            "1 idle node(s) cost $88.49/h ($88.49/h each, catalog on-demand estimate)")
