"""CLI tests (layer 5): `gpufleet plan` on the teams stack, quota warnings, workload spec errors."""

import json

import yaml

from gpufleet.app.cli import main
from tests.helpers import ROOT, example_config

CONTRACT_KEYS = {"stack", "resources", "violations", "capacity", "cost"}


def _write(tmp_path, config: dict):
    path = tmp_path / "Pulumi.x.yaml"
    path.write_text(yaml.safe_dump({"config": config}))
    return str(path)


def test_teams_stack_plans_clean(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert main(["plan", "teams", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    # No warning: the stack runs k3s 1.36, in upstream support past the tests' date (tests/conftest.py).
    assert CONTRACT_KEYS <= set(out) and out["warnings"] == []
    types = {r["type"] for r in out["resources"]}
    assert {"gpufleet:addons:Kueue", "gpufleet:addons:JobSet", "gpufleet:addons:Trainer", "gpufleet:addons:Keda",
            "gpufleet:addons:PriorityClasses", "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"} <= types


def test_quota_above_pool_size_warns_but_plans(tmp_path, capsys):
    cfg = example_config("teams")
    cfg["gpufleet:addons"]["kueue"]["teams"][0]["queues"][0]["nominalQuota"] = 12
    path = _write(tmp_path, cfg)
    assert main(["plan", "x", "--config", path, "--format", "json"]) == 0
    (warning,) = [w for w in json.loads(capsys.readouterr().out)["warnings"] if w["path"].startswith("gpufleet:addons")]
    assert warning["path"] == "gpufleet:addons.kueue.teams[1].queues[0].nominalQuota"
    assert warning["value"] == 20 and "more than the pool can ever provide (16 = 8 per node x 2 nodes" in warning["message"]
    assert main(["plan", "x", "--config", path]) == 0
    text = capsys.readouterr().out
    assert "  - stack 'x': gpufleet:addons.kueue.teams[1].queues[0].nominalQuota: nominal quotas on pool 'a100-train'" in text
    assert main(["plan", "x", "--config", path, "--format", "markdown"]) == 0
    assert "#### Warnings\n\n- `gpufleet:addons.kueue.teams[1].queues[0].nominalQuota`" in capsys.readouterr().out


def test_kueue_and_volcano_on_one_pool_exit_2(tmp_path, capsys):
    cfg = example_config("teams")
    cfg["gpufleet:addons"]["volcano"] = {"enabled": True, "pools": ["a100-train", "h100"]}
    assert main(["plan", "x", "--config", _write(tmp_path, cfg)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "Traceback" not in captured.err
    assert "(2 problems)" in captured.err
    assert "gpufleet:addons.volcano.pools[0]: pool is also claimed by Kueue" in captured.err
    assert "gpufleet:addons.volcano.pools[1]: no node pool of that name (allowed: a100-train, l4-infer) (got 'h100')" in captured.err
