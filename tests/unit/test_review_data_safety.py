"""The review of changes that can lose data: replacing the checkpoint claim, removing protection, deleting a k3s
server; possible data loss is listed first under disruptive changes, with what holds the data."""

from __future__ import annotations

import pytest

from gpufleet.app.plan.render import to_json
from gpufleet.app.review import render, review_plans
from gpufleet.app.review.preview import review_preview
from tests.helpers import example_config, plan_config

STACK = "lab"  # k3s with NFS storage and a checkpoint claim
UNPROTECTED = {"enabled": False, "reason": "lab cluster, rebuilt from scratch every quarter"}


def lab_plan(mutate=None) -> dict:
    config = example_config(STACK)
    if mutate:
        mutate(config)
    return to_json(plan_config(config, stack=STACK))


def rename_claim(c):
    c["gpufleet:storage"]["checkpoints"]["name"] = "ckpt"


def unprotect(c):
    c["gpufleet:cluster"]["protection"] = UNPROTECTED


def rename_claim_and_remove_a_pool(c):
    rename_claim(c)
    del c["gpufleet:nodePools"][0]


@pytest.fixture(scope="module")
def lab():
    base = lab_plan()
    return base, {
        "claim": review_plans(base, lab_plan(rename_claim)),
        "unprotect": review_plans(base, lab_plan(unprotect)),
        "claim+pool": review_plans(base, lab_plan(rename_claim_and_remove_a_pool)),
    }


def test_replacing_the_checkpoint_claim_is_possible_data_loss(lab):
    _, reviews = lab
    review = reviews["claim"]
    (first, *_) = review.disruptive
    assert (first.op, first.type, first.name) == ("replace", "kubernetes:core/v1:PersistentVolumeClaim", "lab-storage-checkpoints")
    assert first.data_loss and first.replace_reasons == ["metadata.name"]
    assert "the claim's volume" in first.holds and "(named checkpoints)" in first.holds
    md = render(review, "markdown")
    section = md.split("#### :warning: Disruptive changes", 1)[1]
    assert section.lstrip().startswith("- :rotating_light: **POSSIBLE DATA LOSS: REPLACE resource `lab-storage-checkpoints`**")
    assert ":rotating_light: **1 of them may lose data**: `lab-storage-checkpoints`." in md
    text = render(review, "text")
    assert "  !! POSSIBLE DATA LOSS: REPLACE resource lab-storage-checkpoints (kubernetes:core/v1:PersistentVolumeClaim), which holds the claim's volume" in text


def test_data_loss_comes_before_other_disruptive_changes(lab):
    _, reviews = lab
    review = reviews["claim+pool"]
    kinds = [(c.data_loss, c.op, c.type) for c in review.disruptive]
    assert kinds[0] == (True, "replace", "kubernetes:core/v1:PersistentVolumeClaim")
    assert all(not loss for loss, _, _ in kinds[1:]) and len(kinds) > 1  # the removed pool's hosts follow
    assert review.to_json()["dataLoss"] == [review.disruptive[0].urn]


def test_removing_protection_is_disruptive(lab):
    _, reviews = lab
    review = reviews["unprotect"]
    unprotected = {(c.type, c.name): c.unprotects for c in review.disruptive}
    assert unprotected == {
        ("command:remote:Command", "lab-k3s-server-cp-1"): ["protect"],
        ("random:index/randomPassword:RandomPassword", "lab-k3s-token"): ["protect"],
        ("kubernetes:core/v1:PersistentVolumeClaim", "lab-storage-checkpoints"): ["protect"],
    }
    assert not any(c.data_loss for c in review.disruptive)
    token = next(c for c in review.changes if c.name == "lab-k3s-token")
    assert token.op == "update" and token.inputs == []  # only the option changed
    md = render(review, "markdown")
    assert "- **REMOVES PROTECTION from host install (k3s server/agent) `lab-k3s-server-cp-1`**" in md
    assert "turns `protect` off: `pulumi destroy` and replacing changes will delete it from now on; it holds the k3s datastore" in md


def test_deleting_a_protected_resource_of_any_type_is_data_loss(lab):
    base, _ = lab
    head = {**base, "resources": [r for r in base["resources"] if not r["name"].endswith("-token")]}
    (change,) = [c for c in review_plans(base, head).disruptive if c.name.endswith("-token")]
    assert change.op == "delete" and change.data_loss
    assert change.holds == "state the program protects (it was registered with protect)"


def test_a_plan_without_options_reports_no_protection_change(lab):
    base, _ = lab
    old = {**base, "resources": [{k: v for k, v in r.items() if k != "options"} for r in base["resources"]]}
    assert review_plans(old, base).changes == []


def test_preview_removing_protection_and_replacing_a_claim(tmp_path):
    import json

    pvc = "urn:pulumi:lab::gpufleet::gpufleet:index:GpuCluster$kubernetes:core/v1:PersistentVolumeClaim::ckpt"
    srv = "urn:pulumi:lab::gpufleet::command:remote:Command::srv"
    claim = lambda name: {"type": "kubernetes:core/v1:PersistentVolumeClaim", "inputs": {"metadata": {"name": name}}}  # noqa: E731
    server = {"type": "command:remote:Command", "inputs": {"create": "INSTALL_K3S_EXEC='server' sh x", "connection": {"host": "192.0.2.1"}}}
    preview = {"steps": [
        {"op": "replace", "urn": pvc, "oldState": {**claim("checkpoints"), "protect": True}, "newState": claim("ckpt"),
         "replaceReasons": ["metadata.name"]},
        {"op": "same", "urn": srv, "oldState": {**server, "protect": True}, "newState": server},
    ]}
    path = tmp_path / "preview.json"
    path.write_text(json.dumps(preview))
    review = review_preview(str(path), stack="lab")
    first, second = review.disruptive
    assert (first.name, first.op, first.data_loss, first.unprotects) == ("ckpt", "replace", True, ["protect"])
    assert (second.name, second.op, second.data_loss, second.unprotects) == ("srv", "update", False, ["protect"])
    assert "192.0.2.1" in second.holds
