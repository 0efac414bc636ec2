"""`gpufleet report` logic on a realistic `pulumi preview --json` and engine event log.

The fixtures follow pulumi's own types: PreviewDigest/PreviewStep (pkg/display/json.go: op, urn,
oldState/newState as apitype.ResourceV3, diffReasons, replaceReasons, detailedDiff which may be null)
and engine events (apitype/events.go; pulumi.automation.events.PolicyEvent: resourceUrn, message,
policyName, policyPackName, enforcementLevel). The preview is preceded by the progress lines the CLI
prints while installing the policy pack.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpufleet.app.review import ReviewInputError
from gpufleet.app.review.preview import load_policy_events, review_preview, urn_parts

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "review"
PREVIEW = str(FIXTURES / "preview-eks.json")
EVENTS = str(FIXTURES / "preview-eks.events.jsonl")
NG = ("urn:pulumi:prod::gpufleet::gpufleet:index:GpuCluster$gpufleet:eks:EksNodePool$"
      "aws:eks/nodeGroup:NodeGroup::prod-pool-h100-nodegroup")


@pytest.fixture(scope="module")
def review():
    return review_preview(PREVIEW, EVENTS)


def test_the_fixture_really_has_text_before_the_json():
    assert Path(PREVIEW).read_text().startswith("Installing policy pack")


def test_steps_become_one_change_per_resource(review):
    assert review.stack == "prod" and review.source == "pulumi preview"
    assert sorted((c.op, c.type, c.name) for c in review.changes) == [
        ("create", "kubernetes:core/v1:Namespace", "prod-team-a"),
        ("delete", "aws:eks/nodeGroup:NodeGroup", "prod-pool-a10g-nodegroup"),
        ("delete", "gpufleet:eks:EksNodePool", "prod-pool-a10g"),
        ("replace", "aws:eks/nodeGroup:NodeGroup", "prod-pool-h100-nodegroup"),  # create-replacement+replace+delete-replaced
        ("update", "aws:eks/cluster:Cluster", "prod-eks-cluster"),
        ("update", "kubernetes:helm.sh/v3:Release", "prod-gpu-operator-release"),
    ]
    assert review.counts() == {"create": 1, "update": 2, "replace": 1, "delete": 2}


def test_groups_follow_the_parent_chain_without_the_stack(review):
    assert {c.name: c.group for c in review.changes} == {
        "prod-team-a": "prod",
        "prod-pool-a10g": "prod",
        "prod-pool-a10g-nodegroup": "prod › prod-pool-a10g",
        "prod-pool-h100-nodegroup": "prod › prod-pool-h100",
        "prod-eks-cluster": "prod › prod-eks",
        "prod-gpu-operator-release": "prod › prod-gpu-operator",
    }


def test_replacement_reason_comes_from_the_engine(review):
    ng = next(c for c in review.changes if c.urn == NG)
    assert ng.replace_reasons == ["instanceTypes"]
    assert [(i.path, i.before, i.after, i.forces, i.source) for i in ng.inputs] == [
        ("instanceTypes[0]", "p4d.24xlarge", "p5.48xlarge", "instanceTypes", "pulumi preview detailedDiff"),
    ]
    assert [(c.op, c.name) for c in review.disruptive] == [
        ("replace", "prod-pool-h100-nodegroup"), ("delete", "prod-pool-a10g-nodegroup"),
    ]


def test_null_detailed_diff_falls_back_to_comparing_inputs(review):
    release = next(c for c in review.changes if c.name == "prod-gpu-operator-release")
    assert [(i.path, i.before, i.after, i.forces) for i in release.inputs] == [("version", "v25.10.1", "v26.3.3", None)]


def test_versions_come_from_old_and_new_state(review):
    assert {v.component: (v.before, v.after) for v in review.versions if v.changed} == {
        "GPU Operator chart": (("v25.10.1",), ("v26.3.3",)),
        "Kubernetes (EKS control plane)": (("1.34",), ("1.35",)),
    }
    assert {v.component: v.after for v in review.versions if not v.changed} == {
        "GPU driver": ("preinstalled on the nodes",),
    }


def test_policy_events_are_joined_by_urn_mandatory_first_and_deduplicated(review):
    assert [(v.level, v.policy, v.resource, v.pack) for v in review.verdicts] == [
        ("mandatory", "gpu-operator-version-support", "prod-gpu-operator-release", "gpufleet"),
        ("advisory", "gpu-pool-cost-hints", "prod-pool-h100-nodegroup", "gpufleet"),
    ]
    assert review.verdicts[0].finding == "GPU Operator chart version 'v26.3.3' does not support Kubernetes 1.35"
    assert review.verdicts[0].rule.startswith("The GPU Operator release is known")
    assert review.has_mandatory
    assert [v.policy for v in review.alignment] == ["gpu-operator-version-support"]
    assert review.capacity is None and review.cost is None


def test_without_an_event_log_there_are_no_verdicts():
    review = review_preview(PREVIEW)
    assert review.verdicts == [] and not review.has_mandatory


def test_event_log_tolerates_other_events_and_garbage(tmp_path):
    log = tmp_path / "events.jsonl"
    log.write_text("not json\n" + json.dumps({"sequence": 1, "policyEvent": {
        "resourceUrn": NG, "message": "m", "policyName": "p", "policyPackName": "x", "enforcementLevel": "warning",
    }}) + "\n\n" + json.dumps({"sequence": 2, "stdoutEvent": {"message": "hi"}}) + "\n")
    assert [(v.policy, v.level, v.resource) for v in load_policy_events(str(log))] == [
        ("p", "advisory", "prod-pool-h100-nodegroup"),
    ]


def test_a_preview_without_changes_is_fine(tmp_path):
    f = tmp_path / "p.json"
    f.write_text('{"config": {}, "changeSummary": {"same": 3}}')
    review = review_preview(str(f), stack="dev")
    assert (review.stack, review.changes, review.verdicts) == ("dev", [], [])


@pytest.mark.parametrize("content, message", [
    ("Installing policy pack gpufleet...\nerror: no stack selected\n", "contains no JSON document"),
    ('{"steps": {"op": "create"}}', "no 'steps' list"),
    ('{"steps": [{"urn": "x"}]}', "steps[0] has no 'op'/'urn'"),
])
def test_unusable_preview_files_are_input_errors(tmp_path, content, message):
    f = tmp_path / "preview.json"
    f.write_text(content)
    with pytest.raises(ReviewInputError, match=message.replace("[", r"\[").replace("]", r"\]")):
        review_preview(str(f))


def test_urn_parts():
    assert urn_parts(NG) == ("prod", "aws:eks/nodeGroup:NodeGroup", "prod-pool-h100-nodegroup")
    assert urn_parts("nonsense") == ("", "", "nonsense")
