"""Exemptions declared in a stack file reach the resource, and the policy pack honours them."""

import pytest

from gpufleet.base.labels import POLICY_NAMES, exempt_key
from gpufleet.app.plan.engine import plan
from gpufleet.base.spec import SpecError, load_spec
from gpufleet.policies.pack import POLICIES
from tests.helpers import example_config, one, plan_config

NG = "aws:eks/nodeGroup:NodeGroup"
REASON = "always-on inference: one warm L4 keeps p99 first-token latency under 300 ms"


def test_policy_names_constant_matches_the_pack():
    assert tuple(p.name for p in POLICIES) == POLICY_NAMES


def test_exemption_is_tagged_and_honoured():
    config = example_config("prod-eks")
    p = plan_config(config, stack="prod-eks")
    tags = one(p, NG, "prod-gpu-pool-l4-infer-ng").inputs["tags"]
    assert tags[exempt_key("gpu-pool-scale-to-zero")] == REASON
    assert "gpu-pool-scale-to-zero" not in {v.policy for v in p.violations}


def test_without_the_exemption_the_always_on_pool_is_a_mandatory_violation():
    config = example_config("prod-eks")
    pool = next(pl for pl in config["gpufleet:nodePools"] if pl["name"] == "l4-infer")
    pool.pop("exemptions")
    p = plan_config(config, stack="prod-eks")
    found = [(v.policy, v.level) for v in p.violations if v.policy == "gpu-pool-scale-to-zero"]
    assert found == [("gpu-pool-scale-to-zero", "mandatory")]
    assert p.has_mandatory_violation


@pytest.mark.parametrize(
    "exemptions, message",
    [
        ({"gpu-pool-scale-to-zro": "x"}, "unknown policy 'gpu-pool-scale-to-zro' (allowed: " + ", ".join(POLICY_NAMES) + ")"),
        ({"gpu-pool-scale-to-zero": "  "}, "exemption from 'gpu-pool-scale-to-zero' needs a reason"),
    ],
)
def test_bad_exemptions_are_spec_errors(exemptions, message):
    config = example_config("prod-eks")
    config["gpufleet:nodePools"][1]["exemptions"] = exemptions
    with pytest.raises(SpecError) as info:
        load_spec("prod-eks", config, [])
    assert [p.message for p in info.value.problems] == [message]
