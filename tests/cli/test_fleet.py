"""`gpufleet plan --all` and `gpufleet diff` on two fleet plans.

The fleet plan must give, for every example stack, exactly what `gpufleet plan STACK` gives alone (a
fresh process each); one stack's failure never hides the others; the exit code is the worst stack's.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpufleet.app.plan import fleet
from tests.forked import Forked
from tests.helpers import ROOT

STACKS = sorted(p.name[len("Pulumi."):-len(".yaml")] for p in (ROOT / "stacks").glob("Pulumi.*.yaml"))


def gpufleet(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gpufleet.app.cli", *args], cwd=cwd, capture_output=True, text=True)


@pytest.fixture(scope="module")
def fleet_json(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("fleet") / "fleet.json"
    result = gpufleet("plan", "--all", "--jobs", "2", "--format", "json", "--output", str(out))
    assert result.returncode == 0, result.stderr
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def alone() -> dict[str, tuple[int, str, str]]:
    """stack -> (exit code, stdout, stderr) of `gpufleet plan STACK --format json` in a process that planned nothing
    before (tests/forked.py: forked from one interpreter that imported the SDKs, not a fresh interpreter each)."""
    with Forked() as run:
        return {stack: run(["plan", stack, "--format", "json"]) for stack in STACKS}


@pytest.mark.parametrize("stack", STACKS)
def test_fleet_plan_equals_each_stack_planned_alone(fleet_json, alone, stack):
    code, stdout, stderr = alone[stack]
    assert code == 0, stderr
    assert fleet_json["stacks"][stack] == json.loads(stdout)


def test_fleet_summary_adds_up(fleet_json):
    summary = {r["stack"]: r for r in fleet_json["fleet"]["summary"]}
    assert sorted(summary) == STACKS and fleet_json["fleet"]["stacks"] == len(STACKS)
    for stack, row in summary.items():
        plan = fleet_json["stacks"][stack]
        assert row["status"] == "ok"
        assert row["hourlyMin"] == plan["cost"]["hourlyMin"] and row["hourlyMax"] == plan["cost"]["hourlyMax"]
        assert row["gpusMax"] == sum(c["maxGpus"] for c in plan["capacity"])
        assert row["mandatory"] == 0 and row["advisory"] == len(plan["violations"])
        assert row["platform"] == plan["outputs"]["platform"]
    assert fleet_json["fleet"]["gpusMax"] == sum(r["gpusMax"] for r in summary.values())
    assert fleet_json["fleet"]["hourlyMin"] == pytest.approx(sum(r["hourlyMin"] for r in summary.values()))
    assert fleet_json["fleet"]["exitCode"] == 0


@pytest.fixture
def broken_project(tmp_path) -> Path:
    """A project with three stacks: one clean (dev), one invalid file, one with a mandatory violation."""
    (tmp_path / "stacks").mkdir()
    shutil.copy(ROOT / "stacks" / "Pulumi.dev.yaml", tmp_path / "stacks" / "Pulumi.dev.yaml")
    (tmp_path / "stacks" / "Pulumi.broken.yaml").write_text("config:\n  gpufleet:cluster:\n    platform: nomad\n")
    shutil.copy(ROOT / "tests" / "fixtures" / "broken_stacks" / "eks-spot-training-pool-min-1.yaml",
                tmp_path / "stacks" / "Pulumi.spotmin.yaml")
    return tmp_path


def test_one_stack_failing_hides_no_other_and_exit_is_the_worst(broken_project):
    result = gpufleet("plan", "--all", "--jobs", "2", "--format", "json", cwd=broken_project)
    assert result.returncode == 2, result.stderr
    doc = json.loads(result.stdout)
    assert set(doc["stacks"]) == {"broken", "dev", "spotmin"}
    assert doc["stacks"]["broken"]["status"] == "invalid"
    assert "stack 'broken'" in doc["stacks"]["broken"]["error"] and "nomad" in doc["stacks"]["broken"]["error"]
    assert doc["stacks"]["dev"]["resources"] and doc["stacks"]["spotmin"]["resources"]
    statuses = {r["stack"]: r["status"] for r in doc["fleet"]["summary"]}
    assert statuses == {"broken": "invalid", "dev": "ok", "spotmin": "violations"}
    assert "gpufleet: invalid gpufleet config for stack 'broken'" in result.stderr
    assert "Traceback" not in result.stderr
    # Without the invalid one, the worst is the mandatory violation.
    result = gpufleet("plan", "--all", "dev", "spot*", "--jobs", "1", cwd=broken_project)
    assert result.returncode == 1
    assert "gpufleet fleet plan: 2 stacks" in result.stdout and "spotmin  violations" in result.stdout


def test_a_crash_in_the_program_is_that_stacks_result(monkeypatch):
    """An exception in the program (not a spec error) is recorded for that stack only."""
    def boom(stack_file, evaluate_policies=True):
        raise RuntimeError("provider exploded")

    monkeypatch.setattr("gpufleet.app.plan.engine.plan", boom)
    result = fleet.plan_one("dev", str(ROOT / "stacks" / "Pulumi.dev.yaml"))
    assert result.status == "error" and result.exit_code == 2
    assert result.message.startswith("stack 'dev': the program failed: RuntimeError: provider exploded")


def test_usage_errors_exit_2(tmp_path):
    (tmp_path / "stacks").mkdir()
    result = gpufleet("plan", "--all", "nothing-*", cwd=tmp_path)
    assert result.returncode == 2 and "no stack file" in result.stderr and "nothing-*" in result.stderr
    assert gpufleet("plan", "dev", "ha").returncode == 2
    assert "--jobs applies to --all only" in gpufleet("plan", "dev", "--jobs", "2").stderr


def test_fleet_diff_comments_per_changed_stack(fleet_json, tmp_path):
    base = json.loads(json.dumps(fleet_json))
    dropped = base["stacks"]["lab"]["resources"].pop()  # the head adds this resource back
    base["stacks"]["gone"] = {"stack": "gone", "resources": [], "violations": [], "capacity": [], "cost": {}}
    head = json.loads(json.dumps(fleet_json))
    head["stacks"]["broken"] = {"stack": "broken", "status": "invalid", "error": "stack 'broken': bad platform"}
    (tmp_path / "base.json").write_text(json.dumps(base))
    (tmp_path / "head.json").write_text(json.dumps(head))
    result = gpufleet("diff", str(tmp_path / "base.json"), str(tmp_path / "head.json"), "--output-dir", str(tmp_path / "out"))
    assert result.returncode == 2, result.stderr  # an invalid head stack blocks
    files = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert files == ["broken.md", "fleet.md", "lab.md"]
    lab = (tmp_path / "out" / "lab.md").read_text()
    assert lab.startswith("<!-- gpufleet-review:lab -->") and dropped["name"] in lab
    summary = (tmp_path / "out" / "fleet.md").read_text()
    assert summary.startswith("<!-- gpufleet-review:fleet -->")
    assert "| `lab` | 1 create |" in summary and "| `broken` | :x: invalid |" in summary
    assert "`gone`: its cloud resources stay until `pulumi destroy -s gone`" in summary
    assert "bad platform" in (tmp_path / "out" / "broken.md").read_text()
    # A stack plan against a fleet plan is a usage error.
    single = tmp_path / "single.json"
    single.write_text(json.dumps(fleet_json["stacks"]["dev"]))
    mixed = gpufleet("diff", str(single), str(tmp_path / "head.json"))
    assert mixed.returncode == 2 and "two stack plans or two fleet plans" in mixed.stderr
