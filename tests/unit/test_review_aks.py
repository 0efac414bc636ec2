"""`gpufleet diff` on AKS plans: a node pool's VM size or OS disk change is a replacement (pulumi-azure rebuilds the
pool through temporary_name_for_rotation: every node goes) with its source; a resize updates in place. Both plans
are the aks-train example planned for real (one change each)."""

from __future__ import annotations

import pytest

from gpufleet.app.plan.render import to_json
from gpufleet.app.review import review_plans
from tests.helpers import example_config, plan_config

POOL = "azure:containerservice/kubernetesClusterNodePool:KubernetesClusterNodePool"


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
        "replace", "aks-train-pool-a100spot-pool", ["osDiskSizeGb", "vmSize"])
    assert sorted((i.path, i.before, i.after) for i in change.inputs if i.forces) == [
        ("osDiskSizeGb", 256.0, 512.0), ("vmSize", "Standard_NC24ads_A100_v4", "Standard_NC48ads_A100_v4")]
    assert all("temporary_name_for_rotation" in i.source for i in change.inputs if i.forces)
    assert [c.name for c in review.disruptive] == ["aks-train-pool-a100spot-pool"]


def test_spot_to_on_demand_replaces_the_pool(base):
    def on_demand(c):
        _spot_pool(c)["capacity"] = "on-demand"

    review = review_plans(base, aks_plan(on_demand))
    [change] = [c for c in review.changes if c.type == POOL]
    assert change.op == "replace" and {"priority", "evictionPolicy", "spotMaxPrice"} <= set(change.replace_reasons)


def test_resizing_a_pool_updates_it_in_place(base):
    def resize(c):
        _spot_pool(c)["maxNodes"] = 16

    review = review_plans(base, aks_plan(resize))
    [change] = [c for c in review.changes if c.type == POOL]
    assert (change.op, change.disruptive) == ("update", False)
    assert [(i.path, i.before, i.after, i.forces) for i in change.inputs] == [("maxCount", 8.0, 16.0, None)]
