"""Unit tests (layer 1): the plan's capacity source per pool, and the review flagging a dropped reservation or a
switch to flex-start / queued as disruptive (a Karpenter NodePool or a launch template changes in place, so the
resource diff alone would not say it)."""

from gpufleet.base.capacity import capacity
from gpufleet.app.review import markdown, text
from gpufleet.app.review.summary import review_plans
from gpufleet.base.spec import load_spec
from tests.helpers import example_config, stack_file


def caps(config: dict) -> list[dict]:
    sf = stack_file(config, "dws-gke")
    return [c.to_json() for c in capacity(load_spec(sf.stack, sf.config, sf.secret_keys))]


def plan_doc(config: dict) -> dict:
    return {"stack": "dws-gke", "resources": [], "violations": [], "capacity": caps(config),
            "cost": {"hourlyMin": 0, "hourlyMax": 0, "currency": "USD", "unpricedPools": []}}


BASE = example_config("dws-gke")


def test_capacity_json_names_the_source_and_the_reserved_size():
    by_pool = {c["pool"]: c for c in caps(BASE)}
    assert by_pool["l4-reserved"]["capacitySource"] == "reserved (specific l4-inference in us-central1-b, 4 x g2-standard-8)"
    assert by_pool["l4-reserved"]["reservedNodes"] == 4
    assert by_pool["l4-reserved"]["reservation"] == {"type": "specific", "name": "l4-inference", "zone": "us-central1-b",
                                                     "instanceType": "g2-standard-8", "instanceCount": 4}
    assert by_pool["h100-flex"]["capacitySource"] == "flex-start (GKE DWS flex-start VMs)"
    assert by_pool["h100-flex"]["reservedNodes"] == 0 and by_pool["h100-flex"]["reservation"] is None


def test_dropping_a_reservation_and_switching_to_flex_start_are_disruptive():
    head = example_config("dws-gke")
    pools = head["gpufleet:nodePools"]
    pools[2]["capacity"] = "on-demand"
    del pools[2]["reservation"]
    base = example_config("dws-gke")
    base["gpufleet:nodePools"][0]["capacity"] = "on-demand"
    del base["gpufleet:nodePools"][0]["gke"]
    review = review_plans(plan_doc(base), plan_doc(head))
    assert [(p.pool, p.capacity_disruption) for p in review.capacity_disruptions] == [
        ("h100-flex", "switches on-demand -> flex-start: every node is replaced, and flex-start nodes live at most 7 days"),
        ("l4-reserved", "drops its reservation (reserved (specific l4-inference in us-central1-b, 4 x g2-standard-8)): "
                        "nodes move to on-demand capacity, which may not be available"),
    ]
    assert review.to_json()["disruptiveCapacity"][1]["pool"] == "l4-reserved"
    md = markdown.render(review)
    assert ":warning: **2 pool(s) change capacity source disruptively**" in md
    assert "- **CAPACITY pool `l4-reserved`**: drops its reservation" in md
    assert "| `h100-flex` | changed | H100-80GB | on-demand → flex-start (GKE DWS flex-start VMs) |" in md
    assert "  ! CAPACITY pool h100-flex: switches on-demand -> flex-start" in text.render(review)


def test_unchanged_sources_are_not_disruptive():
    review = review_plans(plan_doc(BASE), plan_doc(example_config("dws-gke")))
    assert review.capacity_disruptions == [] and "CAPACITY pool" not in text.render(review)
