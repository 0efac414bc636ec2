"""Unit tests (layer 1): the PR review flags a change that breaks an NVLink domain (a pool of multi-node NVLink machines
sized off a whole domain) or moves a pool off DRA (allocation dra -> device-plugin), from a before/after pair of plans
of the NVL72 k3s stack (a partial rack plans there: a warning, docs/dra.md)."""

from gpufleet.app.review import markdown, text
from gpufleet.app.review.summary import review_plans
from gpufleet.base.capacity import capacity
from gpufleet.base.spec import load_spec
from tests.helpers import example_config, stack_file

STACK = "nvl72-k3s"


def plan_doc(config: dict) -> dict:
    sf = stack_file(config, STACK)
    caps = [c.to_json() for c in capacity(load_spec(sf.stack, sf.config, sf.secret_keys))]
    return {"stack": STACK, "resources": [], "violations": [], "capacity": caps,
            "cost": {"hourlyMin": 0, "hourlyMax": 0, "currency": "USD", "unpricedPools": []}}


def off_dra(config: dict) -> dict:
    config["gpufleet:nodePools"][0]["allocation"] = "device-plugin"
    del config["gpufleet:dra"]
    del config["gpufleet:addons"]["kueue"]
    return config


def test_a_partial_nvlink_domain_is_disruptive():
    head = example_config(STACK)
    head["gpufleet:nodePools"][0]["hosts"] = head["gpufleet:nodePools"][0]["hosts"][:17]
    review = review_plans(plan_doc(example_config(STACK)), plan_doc(head))
    assert [(p.pool, p.capacity_disruption) for p in review.capacity_disruptions] == [
        ("gb200", "breaks an NVLink domain (minNodes 18 -> 17, maxNodes 18 -> 17): not a multiple of 18 machines per "
                  "domain (nvl72-rack, 72 GPUs)"),
    ]
    assert "- **CAPACITY pool `gb200`**: breaks an NVLink domain" in markdown.render(review)
    assert "  ! CAPACITY pool gb200: breaks an NVLink domain" in text.render(review)


def test_moving_a_pool_off_dra_is_disruptive_and_back_is_not():
    base, head = example_config(STACK), off_dra(example_config(STACK))
    review = review_plans(plan_doc(base), plan_doc(head))
    [pool] = review.capacity_disruptions
    assert pool.pool == "gb200" and "allocation" in pool.changed_fields
    assert pool.capacity_disruption.startswith("moves off DRA (dra -> device-plugin): pods that claim its GPUs")
    assert review.to_json()["disruptiveCapacity"] == [{"pool": "gb200", "reason": pool.capacity_disruption}]
    assert review_plans(plan_doc(head), plan_doc(base)).capacity_disruptions == []


def test_whole_domains_and_unchanged_pools_are_not_disruptive():
    assert review_plans(plan_doc(example_config(STACK)), plan_doc(example_config(STACK))).capacity_disruptions == []
    base = example_config(STACK)
    base["gpufleet:nodePools"][0]["hosts"] = base["gpufleet:nodePools"][0]["hosts"][:17]
    # Growing a partial rack to a whole one heals it.
    assert review_plans(plan_doc(base), plan_doc(example_config(STACK))).capacity_disruptions == []
