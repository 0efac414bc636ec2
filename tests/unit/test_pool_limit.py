"""gpufleet:nodePools has a sized limit (issue 48): more pools than limits.NODE_POOLS_MAX (100, AKS's node pools per
cluster) exit 2 naming the key and the limit before any pool is validated or planned; per-pool lookups of the cost
are indexed, so a plan's work per pool does not grow with the pool count (bench/scale.py prints the figures)."""

from __future__ import annotations

import copy

import yaml

from gpufleet.app.cli import main
from gpufleet.app.plan import cost_items
from gpufleet.base import limits
from tests.helpers import by_type, example_config, load_config, planned, spec_problems


def _with_pools(n: int) -> dict:
    cfg = copy.deepcopy(example_config("dev"))
    pool = cfg["gpufleet:nodePools"][0]
    cfg["gpufleet:nodePools"] = [{**pool, "name": f"p{i:03d}",
                                  "hosts": [{"name": f"h{i:03d}", "address": f"10.9.{i // 250}.{i % 250 + 1}"}]}
                                 for i in range(n)]
    return cfg


def test_more_pools_than_the_limit_are_refused_naming_the_key_and_the_limit():
    assert limits.NODE_POOLS_MAX == 100
    assert spec_problems(_with_pools(101), "big") == [
        "stack 'big': gpufleet:nodePools: 101 pools; at most 100 (AKS allows 100 node pools per cluster, EKS 30 "
        "managed node groups by default: gpufleet/base/limits.py NODE_POOLS_MAX); split the fleet into several stacks"]


def test_the_limit_itself_is_accepted():
    assert len(load_config(_with_pools(100), "big").node_pools) == 100


def test_the_refusal_exits_2_without_planning(tmp_path, capsys):
    path = tmp_path / "Pulumi.big.yaml"
    path.write_text(yaml.safe_dump({"config": _with_pools(250)}))
    assert main(["plan", "big", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert "gpufleet:nodePools: 250 pools; at most 100" in err and "Traceback" not in err


def test_the_schema_says_the_limit():
    from gpufleet.base.spec import json_schema

    assert json_schema()["properties"]["config"]["properties"]["gpufleet:nodePools"]["maxItems"] == 100


def test_each_node_group_finds_its_launch_template_without_a_scan(monkeypatch):
    """The cost's launch-template lookup hashes each template once, not once per node group and template."""
    p = planned("prod-eks")
    templates = by_type(p, "aws:ec2/launchTemplate:LaunchTemplate")
    groups = by_type(p, "aws:eks/nodeGroup:NodeGroup")
    assert len(groups) >= 2 and templates
    calls = []
    real = cost_items.mock_id
    monkeypatch.setattr(cost_items, "mock_id", lambda t, n: calls.append(n) or real(t, n))
    before = cost_items.items_for(p.spec, p.resources, p.capacity, p.region)
    assert len(calls) == len(templates)
    assert [i.name for i in before.items] == [i.name for i in p.cost.items]  # the same items as the plan's
