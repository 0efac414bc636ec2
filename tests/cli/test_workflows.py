"""The GitHub workflows: linted (zizmor for security, the workflow JSON Schema, actionlint where installed),
third-party actions pinned by commit SHA, least-privilege permissions, and the review wiring."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.helpers import ROOT

WORKFLOWS = ROOT / ".github" / "workflows"
FILES = sorted(WORKFLOWS.glob("*.yml"))
BIN = Path(sys.executable).parent
PINNED = re.compile(r"^[\w.-]+/[\w./-]+@[0-9a-f]{40}$")


def tool(name: str) -> str:
    found = BIN / name if (BIN / name).exists() else shutil.which(name)
    if not found:
        pytest.skip(
            f"{name} is not installed (pip install -e '.[dev]'; actionlint comes from the '.[actionlint]' extra, "
            "whose installer downloads the binary from GitHub: the PR workflow has it, this machine cannot)"
        )
    return str(found)


def load(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


def steps(doc: dict):
    for job in doc["jobs"].values():
        yield from job.get("steps", [])


def test_the_workflows_exist():
    assert [p.name for p in FILES] == ["catalog-refresh.yml", "deploy.yml", "pr.yml", "preview.yml"]


def test_catalog_refresh_is_off_by_default_and_only_checks():
    doc = load(WORKFLOWS / "catalog-refresh.yml")
    assert set(doc[True]) == {"schedule", "workflow_dispatch"}
    job = doc["jobs"]["check"]
    assert job["if"] == "vars.GPUFLEET_CATALOG_REFRESH == 'true'"  # nothing runs until a team turns it on
    assert job["environment"] == "catalog-refresh"
    run = "\n".join(s.get("run", "") for s in job["steps"])
    assert "pip install -q -e '.[catalog]'" in run
    assert 'gpufleet catalog refresh "${args[@]}" --check' in run


def test_zizmor_finds_nothing():
    # --offline: no GitHub API (the SHA <-> tag comments were checked by hand, see the report)
    run = subprocess.run([tool("zizmor"), "--offline", "--no-progress", *map(str, FILES)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


def test_workflows_match_the_github_workflow_schema():
    run = subprocess.run([tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows", *map(str, FILES)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


def test_actionlint_finds_nothing():
    run = subprocess.run([tool("actionlint"), *map(str, FILES)], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_third_party_actions_are_pinned_by_full_sha_with_the_tag_in_a_comment(path):
    text = path.read_text()
    uses = [s["uses"] for s in steps(load(path)) if "uses" in s]
    assert uses
    for ref in uses:
        assert PINNED.match(ref), f"{path.name}: {ref} is not pinned to a full commit SHA"
        assert re.search(re.escape(ref) + r" # v\d", text), f"{path.name}: {ref} has no '# vX' tag comment"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_permissions_are_least_privilege(path):
    doc = load(path)
    assert doc["permissions"] == {}, "the workflow grants nothing by default"
    allowed = {"contents": {"read"}, "pull-requests": {"write"}, "id-token": {"write"}}
    for name, job in doc["jobs"].items():
        assert "permissions" in job, f"{path.name}: job {name} must say what it needs"
        for scope, level in job["permissions"].items():
            assert level in allowed.get(scope, set()), f"{path.name}: job {name} asks for {scope}: {level}"
        steps_ = job.get("steps", [])
        checkouts = [s for s in steps_ if s.get("uses", "").startswith("actions/checkout@")]
        assert all(s["with"]["persist-credentials"] is False for s in checkouts)


def test_pr_review_plans_base_and_head_and_updates_one_comment_per_stack():
    doc = load(WORKFLOWS / "pr.yml")
    assert list(doc[True]) == ["pull_request"]  # never pull_request_target: it runs the PR's code
    review = doc["jobs"]["review"]
    script = "\n".join(s.get("run", "") for s in review["steps"])
    assert 'git worktree add --detach "$RUNNER_TEMP/base" "$BASE_SHA"' in script
    assert 'gpufleet" plan --all --jobs 2 --format json --output "$RUNNER_TEMP/base.json"' in script
    assert 'gpufleet plan --all --jobs 2 --format json --output "$RUNNER_TEMP/head.json"' in script
    assert 'gpufleet diff "$RUNNER_TEMP/base.json" "$RUNNER_TEMP/head.json" --format markdown --output-dir review' in script
    comment = next(s for s in review["steps"] if s.get("uses", "").startswith("actions/github-script@"))
    assert "updateComment" in comment["with"]["script"] and "createComment" in comment["with"]["script"]
    # the comment is found by its first line: the marker gpufleet writes
    assert "body.split('\\n', 1)[0]" in comment["with"]["script"]
    assert review["steps"][-1]["if"] == "steps.review.outputs.failed != ''"
    assert "python -m pytest" in "\n".join(s.get("run", "") for s in doc["jobs"]["test"]["steps"])


def test_preview_runs_only_with_credentials_and_feeds_gpufleet_report():
    doc = load(WORKFLOWS / "preview.yml")
    assert "vars.PULUMI_PREVIEW == 'true'" in doc["jobs"]["stacks"]["if"]
    assert "head.repo.full_name == github.repository" in doc["jobs"]["stacks"]["if"]
    run = "\n".join(s.get("run", "") for s in doc["jobs"]["preview"]["steps"])
    assert "--policy-pack policies --json" in run and '--event-log "$RUNNER_TEMP/events.jsonl"' in run
    assert 'gpufleet report --preview-json "$RUNNER_TEMP/preview.json" --event-log' in run


def test_deploy_runs_up_per_environment_with_the_policy_pack():
    doc = load(WORKFLOWS / "deploy.yml")
    assert doc[True] == {"push": {"branches": ["main"]}}
    up = doc["jobs"]["up"]
    assert up["environment"] == "${{ matrix.stack }}" and up["strategy"]["max-parallel"] == 1
    pulumi = next(s for s in up["steps"] if s.get("uses", "").startswith("pulumi/actions@"))
    assert pulumi["with"]["command"] == "up" and pulumi["with"]["policyPacks"] == "policies"
    assert doc["concurrency"]["cancel-in-progress"] is False
