"""GPU nodes not disrupted mid-job (issue 51, docs/upgrades.md): Karpenter GPU NodePools never expire by default
(expiration is forceful and ignores karpenter.sh/do-not-disrupt), consolidate only empty nodes, and take the stack's
scheduled disruption windows as budgets, validated in the plan against the pinned NodePool CRD."""

from __future__ import annotations

import pytest

from gpufleet.base.spec import SpecError
from tests.helpers import example_config, plan_config, spec_problems
from tests.karpenter_plan import STACK, karpenter_eks

NODEPOOL = "kubernetes:karpenter.sh/v1:NodePool"


def _node_pools(plan) -> dict:
    return {r.inputs["metadata"]["name"]: r.inputs["spec"] for r in plan.resources
            if r.type == NODEPOOL and r.inputs.get("kind") == "NodePool"}


def test_gpu_node_pools_never_expire_and_consolidate_only_empty_nodes():
    pools = _node_pools(karpenter_eks())
    assert pools
    for spec in pools.values():
        assert spec["template"]["spec"]["expireAfter"] == "Never"
        assert spec["disruption"] == {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "30m",
                                      "budgets": [{"nodes": "1"}]}


def _with_windows(windows) -> dict:
    config = example_config(STACK)
    config["gpufleet:cluster"]["eks"]["autoscaler"]["disruptionWindows"] = windows
    return config


def test_scheduled_windows_become_budgets_that_the_nodepool_crd_accepts():
    config = _with_windows([{"schedule": "0 9 * * mon-fri", "duration": "10h"},
                            {"schedule": "@daily", "duration": "1h30m", "nodes": "50%"}])
    config["gpufleet:cluster"]["eks"]["autoscaler"]["expireAfter"] = "2160h"
    pools = _node_pools(plan_config(config, stack=STACK, policies=False))  # the plan validates them against the CRD
    for spec in pools.values():
        assert spec["template"]["spec"]["expireAfter"] == "2160h"
        assert spec["disruption"]["budgets"] == [
            {"nodes": "1"}, {"nodes": "0", "schedule": "0 9 * * mon-fri", "duration": "10h"},
            {"nodes": "50%", "schedule": "@daily", "duration": "1h30m"}]


@pytest.mark.parametrize("window, message", [
    ({"schedule": "0 9 * * mon-fri", "duration": "10s"}, "disruptionWindows[0].duration"),
    ({"schedule": "mondays", "duration": "1h"}, "disruptionWindows[0].schedule"),
    ({"schedule": "@daily", "duration": "1h", "nodes": "150%"}, "disruptionWindows[0].nodes"),
    ({"schedule": "@daily"}, "disruptionWindows[0].duration"),
])
def test_a_window_the_crd_would_refuse_is_a_spec_problem(window, message):
    problems = spec_problems(_with_windows([window]), stack=STACK)
    assert len(problems) == 1 and f"gpufleet:cluster.eks.autoscaler.{message}" in problems[0], problems


def test_the_review_shows_a_change_of_disruption_settings_as_a_disruption_change():
    from gpufleet.app.plan.render import to_json
    from gpufleet.app.review import render, review_plans

    base = to_json(karpenter_eks())
    config = _with_windows([{"schedule": "0 9 * * mon-fri", "duration": "10h"}])
    config["gpufleet:cluster"]["eks"]["autoscaler"]["expireAfter"] = "720h"
    review = review_plans(base, to_json(plan_config(config, stack=STACK)))
    pools = sorted(_node_pools(karpenter_eks()))
    budgets = "(how many nodes may be drained at once, and when)"
    assert review.disruption == [line for pool in pools for line in (
        f"karpenter-gpu-pool-{pool}-nodepool: spec.disruption.budgets[1].duration unset -> 10h {budgets}",
        f"karpenter-gpu-pool-{pool}-nodepool: spec.disruption.budgets[1].nodes unset -> 0 {budgets}",
        f"karpenter-gpu-pool-{pool}-nodepool: spec.disruption.budgets[1].schedule unset -> 0 9 * * mon-fri {budgets}",
        f"karpenter-gpu-pool-{pool}-nodepool: spec.template.spec.expireAfter Never -> 720h (expiration is forceful: "
        "do-not-disrupt does not hold it)")]
    assert "#### Disruption changes" in render(review, "markdown")
