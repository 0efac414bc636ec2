"""CLI tests (layer 5): `gpufleet plan` on the GKE example stack in every format, bad GKE input, and the
import contract (a GKE stack loads no AWS SDK)."""

import contextlib
import io
import json
import subprocess
import sys

import pytest
import yaml

from gpufleet.app.cli import main
from tests.helpers import ROOT, example_config, top_level_modules_a_plan_imports

STACK = "prod-gke"


def run(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "gpufleet.app.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    """One plan per format: text in a fresh process, as a user runs it; json and markdown through the same main in
    this process (a fresh interpreter costs seconds of imports, and the entry point is the same)."""
    out = {"text": run("plan", STACK, "--format", "text")}
    folder = tmp_path_factory.mktemp("plans")
    for fmt in ("json", "markdown"):
        path = folder / f"plan.{fmt}"
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            code = main(["plan", STACK, "--format", fmt, "--output", str(path)])
        out[fmt] = subprocess.CompletedProcess([], code, path.read_text(), err.getvalue())
    return out


def test_all_formats_exit_zero(outputs):
    for fmt, result in outputs.items():
        assert result.returncode == 0, (fmt, result.stderr)
        assert "Traceback" not in result.stderr


def test_json_shape_capacity_and_cost(outputs):
    doc = json.loads(outputs["json"].stdout)
    assert set(doc) >= {"stack", "resources", "violations", "capacity", "cost"}
    assert doc["stack"] == STACK and doc["violations"] == []
    types = {r["type"] for r in doc["resources"]}
    assert {"gcp:container/cluster:Cluster", "gcp:container/nodePool:NodePool", "gcp:compute/network:Network"} <= types
    caps = {c["pool"]: c for c in doc["capacity"]}
    assert caps["h100-train"]["gpu"] == "H100-80GB" and caps["h100-train"]["maxGpus"] == 32
    assert caps["l4-infer"]["advertisedPerNode"] == {"nvidia.com/gpu": 4}
    cost = doc["cost"]  # the breakdown itself: tests/unit/test_cost.py
    assert (cost["currency"], cost["unpricedPools"], cost["atLeast"]) == ("USD", [], False)
    gpu = {i["key"]: i["hourlyMax"] for i in cost["items"] if i["kind"] == "gpu-nodes"}
    assert gpu == {"gpu-nodes:h100-train": round(4 * 88.49, 4), "gpu-nodes:l4-infer": round(8 * 0.34, 4)}


def test_text_and_markdown_show_tree_capacity_and_cost(outputs):
    text = outputs["text"].stdout
    assert "+ prod-gke-pool-h100-train-pool  (gcp:container/nodePool:NodePool)" in text
    assert "h100-train  H100-80GB  on-demand  0-4    0-32" in text
    # 0.26 since the idle-GPU alert policy (one Cloud Monitoring condition, $1.50 a month) is counted
    assert "hourly cost: 0.26 USD at minimum size (the idle floor), 357.58 at maximum size" in text
    assert "unpriced" not in text.split("hourly cost:")[1].splitlines()[0]
    assert "GKE cluster management fee prod-gke (regional, us-central1)" in text
    md = outputs["markdown"].stdout
    assert md.startswith("### gpufleet plan: `prod-gke`") and "| l4-infer | L4 | spot | 0-8 |" in md


def test_bad_gke_input_exits_2_with_every_problem(tmp_path):
    config = example_config(STACK)
    config["gpufleet:nodePools"][1]["gke"]["gpuPartitionSize"] = "1g.10gb"
    config["gpufleet:nodePools"][1]["rdma"] = True
    path = tmp_path / "Pulumi.bad.yaml"
    path.write_text(yaml.safe_dump({"config": config}))
    result = run("plan", "bad", "--config", str(path))
    assert result.returncode == 2 and result.stdout == ""
    assert "Traceback" not in result.stderr
    assert "invalid gpufleet config for stack 'bad' (2 problems)" in result.stderr
    assert "gpufleet:nodePools[1].rdma: GPUDirect is not available on g2-standard-8" in result.stderr
    assert "gpufleet:nodePools[1].gke.gpuPartitionSize: MIG needs a MIG-capable GPU; g2-standard-8 has L4" in result.stderr


def test_gke_stack_imports_no_aws_sdk():
    loaded = top_level_modules_a_plan_imports(STACK) & {"pulumi_aws", "pulumi_gcp", "pulumi_command"}
    assert loaded == {"pulumi_gcp"}
