"""CLI tests (layer 5) of the amp metrics backend: `gpufleet plan --config` of an EKS stack file with
metrics.backend amp exits 0 with the AMP resources, the unpriced collector and no gpu-observability advisory; the
same backend on k3s exits 2 naming the stack, key, value and what is allowed."""

import json

import yaml

from gpufleet.app.cli import main
from tests.amp_plan import amp_config
from tests.helpers import example_config


def _write(tmp_path, name: str, config: dict):
    path = tmp_path / f"Pulumi.{name}.yaml"
    path.write_text(yaml.safe_dump({"config": config}))
    return path


def test_plan_of_an_eks_stack_with_amp(tmp_path, capsys):
    path = _write(tmp_path, "teams-amp", amp_config())
    out = tmp_path / "plan.json"
    assert main(["plan", "teams-amp", "--config", str(path), "--format", "json", "--output", str(out)]) == 0
    doc = json.loads(out.read_text())
    types = {r["type"] for r in doc["resources"]}
    assert {"aws:amp/workspace:Workspace", "aws:amp/scraper:Scraper", "aws:amp/ruleGroupNamespace:RuleGroupNamespace",
            "gpufleet:eks:ManagedPrometheus"} <= types
    assert not [t for t in types if "monitoring.coreos.com" in t]
    assert "gpu-observability" not in {v["policy"] for v in doc["violations"]}
    collector = [i for i in doc["cost"]["items"] if i["kind"] == "monitoring"]
    assert [(i["count"], i["countMin"], i["unitHourly"]) for i in collector] == [(1, 1, None)]
    assert "aws.amazon.com/prometheus/pricing" in collector[0]["source"]


def test_text_plan_lists_the_collector_as_unpriced(tmp_path, capsys):
    path = _write(tmp_path, "teams-amp", amp_config())
    out = tmp_path / "plan.txt"
    assert main(["plan", "teams-amp", "--config", str(path), "--output", str(out)]) == 0
    text = out.read_text()
    assert "AWS managed collector (Amazon Managed Service for Prometheus) teams-eks" in text
    assert "Amazon Managed Service for Prometheus bills metric samples" in text


def test_amp_on_k3s_exits_2_without_traceback(tmp_path, capsys):
    config = example_config("dev")
    config["gpufleet:observability"] = {"metrics": {"backend": "amp"}}
    path = _write(tmp_path, "bad", config)
    assert main(["plan", "bad", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert ("stack 'bad': gpufleet:observability.metrics.backend: not available on k3s "
            "(allowed: auto, kube-prometheus-stack, none) (got 'amp')") in err
    assert "Traceback" not in err
