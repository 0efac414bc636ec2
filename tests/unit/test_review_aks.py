"""`gpufleet diff` on AKS plans: an agent pool's VM size change is a replacement Azure Native makes itself, its OS disk
size one gpufleet asks for (replace_on_changes: AKS cannot change it in place), each with its source, and both replace
every node; a resize updates in place. The plans are the aks-train example planned for real (one change each)."""

from __future__ import annotations

import pytest

from gpufleet.app.plan.render import to_json
from gpufleet.app.review import review_plans
from gpufleet.base.platforms.aks.review import GPUFLEET_POOL_REPLACES
from gpufleet.components.aks.node_pool import REPLACE_ON_CHANGES
from tests.helpers import example_config, plan_config, planned

POOL = "azure-native:containerservice:AgentPool"


def aks_plan(mutate=None) -> dict:
    config = example_config("aks-train")
    if mutate:
        mutate(config)
    return to_json(plan_config(config, stack="aks-train", policies=False))


@pytest.fixture(scope="module")
def base():
    return aks_plan()


def _spot_pool(c):
    return c["gpufleet:nodePools"][1]


def test_vm_size_and_os_disk_changes_replace_the_pool(base):
    def bigger(c):
        _spot_pool(c)["vmSize"] = "Standard_NC48ads_A100_v4"
        _spot_pool(c)["aks"] = {"osDiskSizeGb": 512}

    review = review_plans(base, aks_plan(bigger))
    [change] = [c for c in review.changes if c.type == POOL]
    assert (change.op, change.name, sorted(change.replace_reasons)) == (
        "replace", "aks-train-pool-a100spot-pool", ["osDiskSizeGB", "vmSize"])
    assert sorted((i.path, i.before, i.after) for i in change.inputs if i.forces) == [
        ("osDiskSizeGB", 256.0, 512.0), ("vmSize", "Standard_NC24ads_A100_v4", "Standard_NC48ads_A100_v4")]
    assert all(i.source.startswith("pulumi-azure-native 3.29.0 AgentPool:") for i in change.inputs if i.forces)
    assert [c.name for c in review.disruptive] == ["aks-train-pool-a100spot-pool"]


def test_spot_to_on_demand_replaces_the_pool(base):
    def on_demand(c):
        _spot_pool(c)["capacity"] = "on-demand"

    review = review_plans(base, aks_plan(on_demand))
    [change] = [c for c in review.changes if c.type == POOL]
    assert change.op == "replace" and {"scaleSetPriority", "scaleSetEvictionPolicy", "spotMaxPrice"} <= set(
        change.replace_reasons)


def test_the_review_knows_every_input_the_pools_replace_on():
    """The base layer's copy of components/aks/node_pool.py REPLACE_ON_CHANGES (the review cannot import components)
    is the same list, and the plan registers the pools with it and with delete-before-replace (the name is fixed)."""
    assert GPUFLEET_POOL_REPLACES == REPLACE_ON_CHANGES
    pools = [r for r in planned("aks-train").resources if r.type == POOL]
    assert len(pools) == 2
    assert all((p.replace_on_changes, p.delete_before_replace) == (list(REPLACE_ON_CHANGES), True) for p in pools)


def test_resizing_a_pool_updates_it_in_place(base):
    def resize(c):
        _spot_pool(c)["maxNodes"] = 16

    review = review_plans(base, aks_plan(resize))
    [change] = [c for c in review.changes if c.type == POOL]
    assert (change.op, change.disruptive) == ("update", False)
    assert [(i.path, i.before, i.after, i.forces) for i in change.inputs] == [("maxCount", 8.0, 16.0, None)]
