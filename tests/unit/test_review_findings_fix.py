"""Findings say what to do (issue 50): a finding on a gpufleet pool names the pool's stack key, the exact change or
exemption to write, and its cost at the pool's own capacity type (a spot pool's idle nodes at the spot price)."""

from __future__ import annotations

from gpufleet.app.plan.render import to_json
from gpufleet.app.review import render, review_plans
from tests.helpers import example_config, plan_config, planned


def test_a_warm_spot_pool_names_its_key_its_fix_and_its_spot_idle_cost():
    head_config = example_config("prod-eks")
    head_config["gpufleet:nodePools"][0]["minNodes"] = 2  # h100-train: p5.48xlarge, spot
    base = to_json(planned("prod-eks", policies=True))  # shared with the other tests of the process
    head = to_json(plan_config(head_config, stack="prod-eks"))
    review = review_plans(base, head)
    [finding] = [v for v in review.verdicts if v.policy == "gpu-pool-scale-to-zero" and v.status == "new"]
    assert finding.key == "gpufleet:nodePools[0].minNodes"
    assert finding.fix == ('set `gpufleet:nodePools[0].minNodes: 0`, or exempt the pool visibly: '
                           '`gpufleet:nodePools[0].exemptions: {gpu-pool-scale-to-zero: "<reason>"}`')
    # aws_instances.yaml p5.48xlarge: spot 30.0 (on-demand 55.04)
    assert finding.finding == ("GPU pool 'prod-gpu-pool-h100-train-ng': minSize is 2, not 0: 2 idle node(s) cost "
                               "$60.00/h ($30.00/h each, catalog spot estimate) while no GPU work runs")
    row = next(line for line in render(review, "markdown").splitlines() if "gpu-pool-scale-to-zero" in line)
    assert row.endswith('| set `gpufleet:nodePools[0].minNodes: 0`, or exempt the pool visibly: '
                        '`gpufleet:nodePools[0].exemptions: {gpu-pool-scale-to-zero: "<reason>"}` |')


def test_a_finding_on_no_pool_keeps_the_rules_exemption_label():
    base = to_json(planned("dev", policies=True))
    review = review_plans(base, base)
    [observability] = [v for v in review.verdicts if v.policy == "gpu-observability"]
    assert observability.key == ""
    assert observability.fix.endswith('`gpufleet.io/exempt-gpu-observability: "<reason>"`.')
