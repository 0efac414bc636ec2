"""`gpufleet diff` and `gpufleet report`: exit codes, messages, formats, the comment size limit, golden files.

Golden files: tests/golden/review-*.md. After an intended change to the output, regenerate them with
`GPUFLEET_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/cli/test_review_cli.py`, read the diff, commit.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from gpufleet.app.cli import EXIT_INVALID, EXIT_OK, EXIT_POLICY, main
from gpufleet.app.review import markdown, review_plans
from gpufleet.app.review.diff import ResourceChange
from gpufleet.app.review.summary import PolicyVerdict
from tests.review_plans import DEV_CHANGES, dev_plan

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "review"
UPDATE = os.environ.get("GPUFLEET_UPDATE_GOLDEN") == "1"


@pytest.fixture(scope="module")
def plans(tmp_path_factory):
    d = tmp_path_factory.mktemp("plans")
    files = {}
    for name, plan in {"base": dev_plan(), "remove": dev_plan(DEV_CHANGES["remove"]),
                       "violation": dev_plan(DEV_CHANGES["violation"])}.items():
        files[name] = d / f"{name}.json"
        files[name].write_text(json.dumps(plan))
    return files


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.write_text(text, encoding="utf-8")
    assert path.is_file(), f"{path} missing: run with GPUFLEET_UPDATE_GOLDEN=1 to create it"
    assert text == path.read_text(encoding="utf-8"), f"{name} changed: review it, then GPUFLEET_UPDATE_GOLDEN=1"


def test_diff_markdown_golden_removing_a_pool(capsys, plans):
    code, out, err = run(capsys, "diff", str(plans["base"]), str(plans["remove"]))
    assert (code, err) == (EXIT_OK, "")
    assert out.splitlines()[0] == "<!-- gpufleet-review:dev -->"
    check_golden("review-dev-remove-pool.md", out)


def test_report_markdown_golden_preview_with_policy_events(capsys):
    code, out, err = run(capsys, "report", "--preview-json", str(FIXTURES / "preview-eks.json"),
                         "--event-log", str(FIXTURES / "preview-eks.events.jsonl"))
    assert (code, err) == (EXIT_POLICY, "")
    check_golden("review-prod-preview.md", out)


def test_diff_exits_1_on_a_mandatory_violation_in_the_head(capsys, plans):
    code, out, _ = run(capsys, "diff", str(plans["base"]), str(plans["violation"]), "--format", "text")
    assert code == EXIT_POLICY
    assert "MANDATORY POLICY VIOLATIONS: 1" in out
    code, _, _ = run(capsys, "diff", str(plans["violation"]), str(plans["base"]), "--format", "text")
    assert code == EXIT_OK  # the change fixes it


def test_diff_json_format(capsys, plans, tmp_path):
    out_file = tmp_path / "review.json"
    code, out, _ = run(capsys, "diff", str(plans["base"]), str(plans["remove"]), "--format", "json",
                       "--output", str(out_file))
    assert (code, out) == (EXIT_OK, "")
    doc = json.loads(out_file.read_text())
    assert set(doc) == {"stack", "source", "marker", "counts", "disruptive", "dataLoss", "disruptiveCapacity", "changes", "capacity", "cost",
                        "versions", "versionsAligned", "policies", "mandatoryViolations", "notes", "warnings",
                        "configChanges", "configNote", "refusedMoves", "crdChanges", "crdNotes", "disruptionChanges",
                        "kubernetesBump"}
    assert doc["refusedMoves"] == []
    assert (doc["crdChanges"], doc["crdNotes"], doc["disruptionChanges"]) == ([], [], [])  # no chart version moves
    assert doc["counts"] == {"create": 0, "update": 0, "replace": 0, "delete": 3}  # the agent, its NodePatch, the pool
    assert doc["cost"]["hourlyMin"] == {"before": 15.35, "after": 14.5, "delta": -0.85}
    assert [p["status"] for p in doc["capacity"]] == ["unchanged", "removed"]
    assert doc["marker"] == "<!-- gpufleet-review:dev -->" and doc["mandatoryViolations"] == 0


@pytest.mark.parametrize("content, message", [
    (None, "gpufleet: cannot read plan {path}: No such file or directory"),
    ("garbage", "gpufleet: plan {path} contains no JSON document"),
    ('{"stack": "dev"}', "gpufleet: plan {path} is not a `gpufleet plan --format json` document"),
    ('{"stack": "dev", "resources": [{"urn": "u"}]}', "gpufleet: plan {path}: resources[0] has no 'urn'/'type'"),
])
def test_diff_unreadable_input_exits_2_with_a_message(capsys, plans, tmp_path, content, message):
    bad = tmp_path / "head.json"
    if content is not None:
        bad.write_text(content)
    code, out, err = run(capsys, "diff", str(plans["base"]), str(bad))
    assert (code, out) == (EXIT_INVALID, "")
    assert err.startswith(message.format(path=bad)) and "Traceback" not in err


def test_report_unreadable_input_exits_2(capsys, tmp_path):
    code, _, err = run(capsys, "report", "--preview-json", str(tmp_path / "missing.json"))
    assert code == EXIT_INVALID and err.startswith("gpufleet: cannot read preview JSON")
    code, _, err = run(capsys, "report", "--preview-json", str(FIXTURES / "preview-eks.json"),
                       "--event-log", str(tmp_path / "missing.jsonl"))
    assert code == EXIT_INVALID and err.startswith("gpufleet: cannot read event log")


def test_report_text_without_event_log_exits_0(capsys):
    code, out, _ = run(capsys, "report", "--preview-json", str(FIXTURES / "preview-eks.json"), "--format", "text")
    assert code == EXIT_OK
    assert "! REPLACE node pool prod-pool-h100-nodegroup" in out


def test_huge_reviews_fit_in_a_github_comment_without_cutting_the_uncut_sections():
    base = dev_plan()
    review = review_plans(base, base)
    urn = "urn:pulumi:dev::gpufleet::gpufleet:index:GpuCluster$aws:eks/nodeGroup:NodeGroup::"
    review.changes = [ResourceChange("create", f"{urn}pool-{i:04d}", "kubernetes:core/v1:ConfigMap",
                                     f"config-{i:04d}", "dev › many") for i in range(3000)]
    review.changes += [ResourceChange("delete", f"{urn}gone-{i}", "aws:eks/nodeGroup:NodeGroup", f"gone-{i}", "dev")
                       for i in range(40)]
    review.verdicts = [PolicyVerdict("rule-%d" % i, "mandatory" if i % 2 else "advisory", f"{urn}gone-{i}",
                                     "x" * 200, "new") for i in range(60)]
    text = markdown.render(review)
    assert len(text) <= markdown.GITHUB_COMMENT_LIMIT - 1_536
    for i in range(40):
        assert f"**DELETE node pool `gone-{i}`**" in text
    for i in range(60):
        assert f"`rule-{i}`" in text
    assert "#### Cost (USD per hour)" in text
    assert "more change(s) left out to fit GitHub's comment limit" in text
    assert text.index("Disruptive changes") < text.index("Policy verdicts") < text.index("GPU capacity") \
        < text.index("Cost (USD") < text.index("#### Versions") < text.index("Changes by component")
