"""The review's cost section: which cost items change and by how much, per team, and never a saving or a cost
from an item that is unpriced before or after ("unknown")."""

from __future__ import annotations

import pytest

from gpufleet.app.plan.render import to_json
from gpufleet.app.review import review_plans
from gpufleet.app.review import markdown, text
from tests.helpers import example_config, plan_config


def planned(stack: str, mutate=None) -> dict:
    config = example_config(stack)
    if mutate:
        mutate(config)
    return to_json(plan_config(config, stack=stack, policies=False))


def to_unpriced_type(c):
    # p5e.48xlarge (8 x H200) has no price in gpufleet/base/catalog/aws_instances.yaml
    c["gpufleet:nodePools"][0]["instanceType"] = "p5e.48xlarge"


@pytest.fixture(scope="module")
def eks():
    """teams-eks planned twice: as is, and with the training pool switched to an unpriced instance type."""
    base = planned("teams-eks")
    return base, review_plans(base, planned("teams-eks", to_unpriced_type))


def test_a_pool_switching_to_an_unpriced_type_shows_no_saving(eks):
    base, review = eks
    c = review.cost
    assert [(i.key, i.status, i.known, i.min_delta, i.max_delta) for i in c.changed] == [
        ("gpu-nodes:h100-train", "changed", False, None, None),
    ]
    assert [i.key for i in c.unknown] == ["gpu-nodes:h100-train"]
    # the head's total lost 60 $/h of priced items, but that is not a saving: the delta leaves the unknown item out
    assert (c.max_before, c.max_after) == (base["cost"]["hourlyMax"], round(base["cost"]["hourlyMax"] - 60.0, 4))
    assert (c.min_delta, c.max_delta) == (0.0, 0.0)
    assert (c.at_least_before, c.at_least_after) == (False, True)
    teams = {t.team: t for t in c.teams}
    assert (teams["research"].nominal_delta, teams["research"].max_delta) == (None, None)  # unknown, not -60
    assert (teams["serving"].nominal_delta, teams["serving"].max_delta) == (0.0, 0.0)


def test_the_comment_says_unknown_not_a_saving(eks):
    _, review = eks
    md = markdown.render(review)
    assert "| at maximum size | 66.15 | at least 6.15 | **+0.00** |" in md  # EKS 1.35 at the standard rate (0.10)
    assert "| GPU pool h100-train (p5e.48xlarge) | changed | 0.00 / 60.00 | unpriced / unpriced | unknown / unknown |" in md
    assert "**Unknown**: `GPU pool h100-train (p5e.48xlarge)` is unpriced before or after" in md
    assert "| research | h100-train | 60.00 / 60.00 | unpriced / unpriced | unknown / unknown |" in md
    out = text.render(review)
    assert "changed GPU pool h100-train (p5e.48xlarge): min unknown, max unknown" in out
    assert "-60" not in md and "-60" not in out


@pytest.fixture(scope="module")
def teams():
    """The k3s teams stack, and with vision's nominal quota halved and one L4 host fewer."""
    def change(c):
        c["gpufleet:addons"]["kueue"]["teams"][1]["queues"][0]["nominalQuota"] = 4
        del c["gpufleet:nodePools"][1]["hosts"][1]
    return review_plans(planned("teams"), planned("teams", change))


def test_team_quota_changes_are_priced_per_team(teams):
    c = teams.cost
    by_team = {t.team: t for t in c.teams}
    # 14.5 $/h per 8-GPU node: vision 8 -> 4 GPUs nominal (-7.25), 12 -> 8 with borrowing (-7.25)
    assert (by_team["vision"].nominal_delta, by_team["vision"].max_delta) == (-7.25, -7.25)
    assert (by_team["research"].nominal_delta, by_team["research"].max_delta) == (0.0, 0.0)
    # one L4 host fewer: a real, priced saving
    assert [(i.key, i.min_delta, i.max_delta) for i in c.changed] == [("gpu-nodes:l4-infer", -0.85, -0.85)]
    assert (c.min_delta, c.max_delta) == (-0.85, -0.85) and c.unknown == []
    md = markdown.render(teams)
    assert "| vision | a100-train | 14.50 / 21.75 | 7.25 / 14.50 | -7.25 / -7.25 |" in md


def test_an_older_plan_without_items_compares_pool_by_pool():
    """Plans that predate cost.items counted an unpriced pool as 0: the review compares their pools instead."""
    from tests.review_plans import eks_plan

    head = eks_plan(instance_type="p5e.48xlarge", gpu="H200")
    head["capacity"][0]["pricePerNodeHour"] = None
    head["cost"] = {"hourlyMin": 0.0, "hourlyMax": 0.0, "currency": "USD", "unpricedPools": ["h100"]}
    c = review_plans(eks_plan(), head).cost
    assert (c.max_before, c.max_after) == (393.28, 0.0)
    assert (c.max_delta, [i.key for i in c.unknown]) == (0.0, ["gpu-nodes:h100"])  # not a 393.28 saving
