"""A platform only the tests know (tests/toy_platform/) plugs into every layer with no shared edit: the spec
validates its stack, GpuCluster builds it, the plan lists its resources and capacity, the cost prices its pools,
the review sees a change to its node pool as a replacement, and the policy pack judges its pools (issue 47)."""

from __future__ import annotations

import subprocess

import pytest

from gpufleet.app.plan.render import to_json
from gpufleet.app.review.diff import diff_resources
from gpufleet.base import platforms
from tests import toy_platform
from tests.helpers import ROOT, by_type, plan_config
from tests.toy_platform.components import CLUSTER_TYPE, NODE_POOL_TYPE

CONFIG = {
    "gpufleet:cluster": {"platform": "toy", "kubernetesVersion": "1.34"},
    "gpufleet:nodePools": [
        {"name": "h100", "gpu": "H100-80GB", "gpusPerNode": 8, "minNodes": 0, "maxNodes": 4, "pricePerNodeHour": 30.0},
        {"name": "l4", "gpu": "L4", "gpusPerNode": 1, "minNodes": 1, "maxNodes": 2},
    ],
}


@pytest.fixture(scope="module")
def toy():
    platforms.register(toy_platform.TRAITS)
    try:
        yield toy_platform.TRAITS
    finally:
        platforms.unregister("toy")


@pytest.fixture(scope="module")
def plan(toy):
    return plan_config(CONFIG, stack="lab")


def test_gpu_cluster_builds_the_toy_platform_and_the_shared_layers(plan):
    (root,) = by_type(plan, "gpufleet:index:GpuCluster")
    (control,) = by_type(plan, "gpufleet:toy:ToyCluster")
    assert control.name == "lab-toy" and control.parent == root.urn
    (cluster,) = by_type(plan, CLUSTER_TYPE)
    assert cluster.name == "lab-toy-cluster" and cluster.parent == control.urn
    pools = {r.name: r for r in by_type(plan, NODE_POOL_TYPE)}
    assert set(pools) == {"lab-pool-h100", "lab-pool-l4"}
    assert all(p.parent == root.urn for p in pools.values())
    h100 = pools["lab-pool-h100"].inputs
    assert (h100["minSize"], h100["maxSize"], h100["gpu"], h100["gpusPerNode"]) == (0, 4, "H100-80GB", 8)
    assert {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"} in h100["taints"]
    # The shared layers run on the toy's ClusterAccess: the GPU Operator, with the defaults' taints tolerated.
    (operator,) = by_type(plan, "gpufleet:addons:GpuOperator")
    assert operator.parent == root.urn and operator.name == "lab-gpu-operator"
    assert not [r for r in plan.resources if r.type.startswith(("aws:", "gcp:", "azure-native:", "command:"))]


def test_capacity_and_cost_price_the_pools_from_the_stack(plan):
    capacity = {c.pool: c for c in plan.capacity}
    assert (capacity["h100"].min_nodes, capacity["h100"].max_nodes, capacity["h100"].gpus_per_node) == (0, 4, 8)
    assert capacity["h100"].price_per_node_hour == 30.0
    assert capacity["l4"].price_per_node_hour is None
    cost = to_json(plan)["cost"]
    items = {i["name"]: i for i in cost["items"]}
    assert set(items) == {"GPU pool h100 (H100-80GB)", "GPU pool l4 (L4)"}  # no cluster-level charge by default
    h100 = items["GPU pool h100 (H100-80GB)"]
    assert (h100["hourlyMin"], h100["hourlyMax"], h100["unitHourly"]) == (0.0, 120.0, 30.0)
    assert items["GPU pool l4 (L4)"]["unitHourly"] is None  # unpriced, never a silent zero
    assert (cost["hourlyMin"], cost["hourlyMax"], cost["atLeast"], cost["unpricedPools"]) == (0.0, 120.0, True, ["l4"])


def test_the_policy_pack_judges_the_toy_pools(plan):
    """The l4 pool keeps a node at minimum: the mandatory scale-to-zero rule names it, and only it."""
    flagged = {v.urn.rsplit("::", 1)[-1] for v in plan.violations if v.policy == "gpu-pool-scale-to-zero"}
    assert flagged == {"lab-pool-l4"}


def test_the_review_sees_a_changed_gpu_as_a_replacement_of_the_toy_pool(plan, toy):
    head = {**CONFIG, "gpufleet:nodePools": [{**CONFIG["gpufleet:nodePools"][0], "gpu": "H200"},
                                             CONFIG["gpufleet:nodePools"][1]]}
    changes = diff_resources(to_json(plan)["resources"], to_json(plan_config(head, stack="lab"))["resources"])
    pool = next(c for c in changes if c.type == NODE_POOL_TYPE)
    assert (pool.name, pool.op, pool.replace_reasons, pool.kind) == ("lab-pool-h100", "replace", ["gpu"], "node pool")
    assert pool.disruptive


def test_no_file_of_gpufleet_names_the_toy():
    """Adding the platform edited no shared file: only tests/ know it."""
    found = subprocess.run(["git", "grep", "-l", "-w", "toy", "--", "gpufleet", "components", "policies"],
                           cwd=ROOT, capture_output=True, text=True)
    assert found.stdout == ""
