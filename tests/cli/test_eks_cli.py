"""CLI tests (layer 5): `gpufleet plan prod-eks` in every format, bad EKS input, and which cloud SDKs
a plan imports (a k3s stack never loads pulumi_aws; an EKS stack never loads pulumi_gcp)."""

import json

import pytest

from gpufleet.app.cli import main
from tests.helpers import example_config, top_level_modules_a_plan_imports

STACK = "prod-eks"


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    out = {}
    d = tmp_path_factory.mktemp("plans")
    for fmt in ("text", "json", "markdown"):
        path = d / f"plan.{fmt}"
        code = main(["plan", STACK, "--format", fmt, "--output", str(path)])
        out[fmt] = (code, path.read_text())
    return out


def test_every_format_exits_0(outputs):
    assert {fmt: code for fmt, (code, _) in outputs.items()} == {"text": 0, "json": 0, "markdown": 0}


def test_json_contract_capacity_and_cost(outputs):
    doc = json.loads(outputs["json"][1])
    assert doc["stack"] == STACK
    assert {"stack", "resources", "violations", "capacity", "cost"} <= set(doc)
    pools = {c["pool"]: c for c in doc["capacity"]}
    assert pools["h100-train"]["gpu"] == "H100-80GB" and pools["h100-train"]["gpusPerNode"] == 8
    assert pools["h100-train"]["advertisedPerNode"] == {"nvidia.com/gpu": 8, "vpc.amazonaws.com/efa": 32}
    assert pools["h100-train"]["capacityType"] == "spot" and pools["h100-train"]["pricePerNodeHour"] == 30.0
    assert pools["l4-infer"]["pricePerNodeHour"] == 0.8048 and (pools["l4-infer"]["minGpus"], pools["l4-infer"]["maxGpus"]) == (1, 8)
    cost = doc["cost"]  # item by item: tests/unit/test_cost.py
    assert (cost["hourlyMin"], cost["hourlyMax"], cost["currency"], cost["unpricedPools"]) == (1.4922, 127.9126, "USD", [])  # EKS 1.35 at the standard rate
    # gpu-observability: no metrics pipeline (opt-in on EKS), one advisory per GPU pool.
    assert sorted((v["policy"], v["level"]) for v in doc["violations"]) == [
        ("gpu-observability", "advisory"), ("gpu-observability", "advisory"), ("spot-pool-diversified", "advisory")]
    types = {r["type"] for r in doc["resources"]}
    assert {"aws:eks/cluster:Cluster", "aws:eks/nodeGroup:NodeGroup", "aws:ec2/launchTemplate:LaunchTemplate"} <= types
    assert not [t for t in types if t.startswith("gcp:")]


def test_text_and_markdown_show_cost_and_the_advisory(outputs):
    text, md = outputs["text"][1], outputs["markdown"][1]
    assert "hourly cost: 1.49 USD at minimum size (the idle floor), 127.91 at maximum size" in text
    assert "NAT gateway prod-gpu-network-nat-us-east-1a" in text and "EKS control plane prod-gpu (Kubernetes 1.35)" in text
    assert "h100-train  H100-80GB  spot" in text
    assert "[advisory] spot-pool-diversified" in text
    assert "| h100-train | H100-80GB | spot | 0-4 | 0-32 |" in md
    assert "hourly cost: 1.49 USD at minimum size (the idle floor), 127.91 at maximum size" in md
    assert "| GPU pool h100-train (p5.48xlarge) | gpu-nodes | 0-4 | 30.0000 | 0.00 | 120.00 |" in md


def test_invalid_eks_stack_exits_2_without_traceback(tmp_path, capsys):
    cfg = example_config(STACK)
    cfg["gpufleet:nodePools"][0]["instanceType"] = "g6.xlarge"
    path = tmp_path / "Pulumi.bad.yaml"
    import yaml

    path.write_text(yaml.safe_dump({"config": cfg}))
    assert main(["plan", "bad", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert "gpufleet:nodePools[0].instanceType: g6.xlarge has no EFA" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("stack,loaded", [("dev", []), (STACK, ["pulumi_aws"])])
def test_a_plan_imports_only_its_platform_sdk(stack, loaded):
    modules = top_level_modules_a_plan_imports(stack)
    assert sorted(m for m in ("pulumi_aws", "pulumi_gcp") if m in modules) == loaded
