"""The cluster autoscaler's scale-down settings for GPU node groups (issue 51, docs/upgrades.md): EKS GPU node groups
carry autoscaling-options tags (on the group and its Auto Scaling group, where the autoscaler reads them) that keep a
GPU node while any pod requests a GPU; AKS's cluster-wide profile and GKE's autoscaling profile are set from the stack;
bad values name their key; the review lists a change of any of them as a disruption change."""

from __future__ import annotations

import copy

import pytest

from gpufleet.app.review.diff import InputChange, ResourceChange
from gpufleet.app.review.disruption import disruption_lines
from tests.helpers import by_type, example_config, plan_config, planned, spec_problems

NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
ASG_TAG = "aws:autoscaling/tag:Tag"
OPTION = "k8s.io/cluster-autoscaler/node-template/autoscaling-options/"
GPU_DEFAULTS = {f"{OPTION}scaledowngpuutilizationthreshold": "0", f"{OPTION}scaledownunneededtime": "30m",
                f"{OPTION}scaledownunreadytime": "20m"}


def _options(tags: dict) -> dict:
    return {k: v for k, v in tags.items() if k.startswith(OPTION)}


def test_gpu_node_groups_carry_the_gpu_scale_down_options_and_the_system_group_none():
    plan = planned("prod-eks")
    groups = {r.name: r.inputs for r in by_type(plan, NODE_GROUP)}
    assert {n: _options(i["tags"]) for n, i in groups.items()} == {
        "prod-gpu-pool-system-ng": {}, "prod-gpu-pool-l4-infer-ng": GPU_DEFAULTS, "prod-gpu-pool-h100-train-ng": GPU_DEFAULTS}
    # The autoscaler reads them from the Auto Scaling group, which managed node groups do not tag: one Tag each.
    asg = {r.name: r.inputs["tag"] for r in by_type(plan, ASG_TAG) if r.inputs["tag"]["key"].startswith(OPTION)}
    assert asg == {f"prod-gpu-pool-{pool}-asg-node-template-autoscaling-options-{key.removeprefix(OPTION)}":
                   {"key": key, "value": value, "propagateAtLaunch": False}
                   for pool in ("l4-infer", "h100-train") for key, value in GPU_DEFAULTS.items()}


def _eks(scale_down: dict, **autoscaler) -> dict:
    config = example_config("prod-eks")
    config["gpufleet:cluster"]["eks"]["autoscaler"] = {"gpuScaleDown": scale_down, **autoscaler}
    return config


@pytest.mark.parametrize("scale_down, key, message", [
    ({"unneededTime": "2d"}, "unneededTime", "'2d' is not a duration of hours, minutes and seconds"),
    ({"unreadyTime": "-1m"}, "unreadyTime", "'-1m' is not a duration of hours, minutes and seconds"),
    ({"gpuUtilizationThreshold": 1.5}, "gpuUtilizationThreshold", "Input should be less than or equal to 1 (got 1.5)"),
    ({"utilizationThreshold": -0.1}, "utilizationThreshold", "Input should be greater than or equal to 0 (got -0.1)"),
])
def test_a_bad_scale_down_value_names_its_key(scale_down, key, message):
    problems = spec_problems(_eks(scale_down), stack="prod-eks")
    assert len(problems) == 1 and problems[0].startswith(
        f"stack 'prod-eks': gpufleet:cluster.eks.autoscaler.gpuScaleDown.{key}: {message}"), problems


def test_gpu_scale_down_is_refused_with_karpenter():
    problems = spec_problems(_eks({}, kind="karpenter"), stack="karpenter-eks")
    assert "stack 'karpenter-eks': gpufleet:cluster.eks.autoscaler.gpuScaleDown: only used with kind: cluster-autoscaler " \
           "(Karpenter consolidates with consolidateAfter and disruptionBudget)" in problems


def test_aks_profile_defaults_and_bad_minutes():
    cluster = by_type(planned("aks-train"), "azure-native:containerservice:ManagedCluster")[0]
    assert cluster.inputs["autoScalerProfile"] == {"expander": "least-waste", "scaleDownUnneededTime": "30m",
                                                   "scaleDownUnreadyTime": "20m",
                                                   "scaleDownUtilizationThreshold": "0.5"}
    config = example_config("aks-train")
    config["gpufleet:cluster"]["aks"]["scaleDown"] = {"unneededTime": "1h"}
    assert spec_problems(config, stack="aks-train") == [
        "stack 'aks-train': gpufleet:cluster.aks.scaleDown.unneededTime: '1h' is not a whole number of minutes such as "
        "\"30m\" (AKS's cluster autoscaler profile takes minutes: write 120m for two hours)"]


def test_gke_profile_only_when_asked():
    config = example_config("prod-gke")
    assert "clusterAutoscaling" not in by_type(planned("prod-gke"), "gcp:container/cluster:Cluster")[0].inputs
    config["gpufleet:cluster"]["gke"]["autoscalingProfile"] = "optimize-utilization"
    cluster = by_type(plan_config(config, stack="prod-gke", policies=False), "gcp:container/cluster:Cluster")[0]
    assert cluster.inputs["clusterAutoscaling"] == {"enabled": False, "autoscalingProfile": "OPTIMIZE_UTILIZATION"}
    config["gpufleet:cluster"]["gke"]["autoscalingProfile"] = "fast"
    problems = spec_problems(config, stack="prod-gke")
    assert len(problems) == 1 and problems[0].startswith(
        "stack 'prod-gke': gpufleet:cluster.gke.autoscalingProfile: ") and "'fast'" in problems[0], problems


def test_the_review_shows_a_change_of_gpu_scale_down_as_a_disruption_change():
    from gpufleet.app.plan.render import to_json
    from gpufleet.app.review import render, review_plans

    base = to_json(planned("prod-eks"))
    head = to_json(plan_config(_eks({"unneededTime": "1h", "gpuUtilizationThreshold": 0.5},
                                    scaleDownUnneededTime="15m"), stack="prod-eks", policies=False))
    review = review_plans(copy.deepcopy(base), head)
    tags = f"tags.{OPTION}"
    assert review.disruption == ["prod-gpu-autoscaler-release: values.extraArgs.scale-down-unneeded-time 10m -> 15m "
                                 "(how long a node stays unneeded before it goes)"] + [
        f"prod-gpu-pool-{pool}-ng: {tags}{key} {before} -> {after} ({why})"
        for pool in ("h100-train", "l4-infer") for key, before, after, why in (
            ("scaledowngpuutilizationthreshold", "0", "0.5",
             "a GPU node with more of its GPUs requested is never removed; 0: only nodes without GPU pods"),
            ("scaledownunneededtime", "30m", "1h", "how long a GPU node stays unneeded before it goes"))]
    assert "#### Disruption changes" in render(review, "markdown")


def test_platform_scale_down_rows_reach_the_review():
    """GKE's profile and AKS's profile, as their plans name the inputs (no plan needed: the rows are the traits')."""
    changes = [
        ResourceChange("update", "urn:gke", "gcp:container/cluster:Cluster", "g-cluster", "g", inputs=[
            InputChange("clusterAutoscaling.autoscalingProfile", None, "OPTIMIZE_UTILIZATION")]),
        ResourceChange("update", "urn:aks", "azure-native:containerservice:ManagedCluster", "a-aks", "a",
                       inputs=[InputChange("autoScalerProfile.scaleDownUnneededTime", "30m", "10m"),
                               InputChange("autoScalerProfile.expander", "least-waste", "random")]),
    ]
    assert disruption_lines(changes) == [
        "g-cluster: clusterAutoscaling.autoscalingProfile unset -> OPTIMIZE_UTILIZATION "
        "(OPTIMIZE_UTILIZATION removes more nodes, and faster, than BALANCED)",
        "a-aks: autoScalerProfile.scaleDownUnneededTime 30m -> 10m (how long a node stays unneeded before it goes)"]
