"""CLI tests (layer 5): the lab stack (sharing, MIG, RDMA, NFS) plans cleanly and shows advertised capacity."""

import json
import subprocess
import sys

import yaml

from tests.helpers import ROOT


def run(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "gpufleet.app.cli", *args], cwd=cwd, capture_output=True, text=True)


def test_lab_plan_text_shows_advertised_resources_and_the_autoscaler_note():
    out = run("plan", "lab")
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "16 x nvidia.com/gpu" in text and "56 x nvidia.com/mig-1g.10gb" in text
    assert "l4-shared: 4 GPUs x 4 replicas = 16 nvidia.com/gpu (time-slicing)" in text
    assert "h100-mig: 8 GPUs x 7 = 56 nvidia.com/mig-1g.10gb (MIG all-1g.10gb, mixed strategy)" in text
    assert "autoscalers count whole nodes" in text


def test_lab_plan_json_capacity():
    out = run("plan", "lab", "--format", "json")
    assert out.returncode == 0, out.stderr
    rows = {c["pool"]: c for c in json.loads(out.stdout)["capacity"]}
    assert rows["l4-shared"]["advertisedPerNode"] == {"nvidia.com/gpu": 16}
    assert rows["h100-mig"]["advertisedPerNode"] == {"nvidia.com/mig-1g.10gb": 56}
    assert rows["a100-rdma"]["sharing"] == "8 x nvidia.com/gpu (not shared)"


def test_invalid_sharing_exits_2_with_the_path(tmp_path):
    doc = yaml.safe_load((ROOT / "stacks" / "Pulumi.lab.yaml").read_text())
    doc["config"]["gpufleet:nodePools"][0]["sharing"] = {"mode": "mig", "profile": "1g.10gb"}
    path = tmp_path / "Pulumi.bad.yaml"
    path.write_text(yaml.safe_dump(doc))
    out = run("plan", "bad", "--config", str(path))
    assert out.returncode == 2
    assert "gpufleet:nodePools[0].sharing.mode: GPU L4 of pool 'l4-shared' has no MIG" in out.stderr
    assert "Traceback" not in out.stderr
