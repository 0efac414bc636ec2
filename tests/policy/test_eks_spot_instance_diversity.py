"""Policy tests (layer 4): eks-spot-instance-diversity on PASSED/FAILED fixtures and on a whole plan."""

import pytest

from policies.rules import eks_spot_instance_diversity as rule
from tests.eks_plan import prod_eks

PASSED = {
    "spot-two-types-PASSED": {"capacityType": "SPOT", "instanceTypes": ["g6.xlarge", "g6.2xlarge"]},
    "on-demand-one-type-PASSED": {"capacityType": "ON_DEMAND", "instanceTypes": ["p5.48xlarge"]},
    "no-capacity-type-PASSED": {"instanceTypes": ["g6.xlarge"]},  # EKS default: on-demand
    "spot-types-unset-PASSED": {"capacityType": "SPOT"},  # cannot judge
}
FAILED = {
    "spot-one-type-FAILED": {"capacityType": "SPOT", "instanceTypes": ["p5.48xlarge"]},
    "spot-empty-FAILED": {"capacityType": "SPOT", "instanceTypes": []},
}


@pytest.mark.parametrize("name", sorted(PASSED))
def test_passed(name):
    assert rule.check(PASSED[name]) == []


@pytest.mark.parametrize("name", sorted(FAILED))
def test_failed(name):
    assert len(rule.check(FAILED[name])) == 1


def test_message_names_the_types():
    assert rule.check(FAILED["spot-one-type-FAILED"]) == [
        "spot node group has 1 instance type(s) (p5.48xlarge): list several of the same GPU shape so spot "
        "shortages of one type do not stall the pool"
    ]


def test_on_the_example_plan_it_flags_exactly_the_spot_pool_as_advisory():
    plan = prod_eks()[0]
    found = [v for v in plan.violations if v.policy == rule.NAME]
    assert [(v.level, v.urn.split("::")[-1]) for v in found] == [("advisory", "prod-gpu-pool-h100-train-ng")]
    assert not plan.has_mandatory_violation
