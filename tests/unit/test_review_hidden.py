"""Changes inside secret inputs (issue 50): the plan carries each secret input's keys and a digest of each
(app/plan/secret_digests.py), and `gpufleet diff` names the keys whose digest changed ("node labels")."""

from __future__ import annotations

import json

import pytest

from gpufleet.app.plan.secret_digests import at, digest, secret_digests, split
from gpufleet.app.review import render, review_plans
from gpufleet.app.plan.render import to_json
from tests.helpers import planned
from tests.review_plans import DEV_CHANGES, dev_plan


def test_a_yaml_mapping_or_a_map_is_split_into_its_keys_anything_else_is_one_digest():
    text = "node-label:\n- a=b\nnode-taint: []\ntoken: '[secret]'\n# gpufleet: registries.yaml\nmirrors: {}\n"
    assert sorted(split(text)) == ["mirrors", "node-label", "node-taint", "token"]
    assert split(text)["node-label"] == digest(["a=b"])
    assert split({"host": "192.0.2.1", "privateKey": "[secret]"}) == {
        "host": digest("192.0.2.1"), "privateKey": digest("[secret]")}
    assert split("just a password") == {"": digest("just a password")}
    assert digest({"b": 1, "a": 2}) == digest({"a": 2, "b": 1}) and digest("x").startswith("sha256:")
    assert len(digest("x")) == len("sha256:") + 16


def test_secret_paths_are_read_where_the_mocks_recorded_them():
    revealed = {"stdin": "a: 1\n", "values": [{"token": "t"}], "connection": {"privateKey": "k"}}
    assert at(revealed, "values[0].token") == "t" and at(revealed, "connection.privateKey") == "k"
    assert at(revealed, ".") is revealed and at(revealed, "values[3]") is None
    assert secret_digests(["stdin", "stdin"], revealed) == {"stdin": {"a": digest(1)}}


@pytest.fixture(scope="module")
def plans():
    return to_json(planned("dev", policies=True)), dev_plan(DEV_CHANGES["gpu"])  # the base plan is shared


def test_the_plan_carries_an_agents_config_keys_and_never_a_value(plans):
    base, _ = plans
    agent = next(r for r in base["resources"] if r["name"] == "dev-pool-l4-agent-gpu-l4-1")
    assert agent["inputs"]["stdin"] == "[secret]"
    assert sorted(agent["secretDigests"]["stdin"]) == ["node-label", "node-name", "node-taint", "server", "token"]
    assert sorted(agent["secretDigests"]["connection"]) == [
        "dialErrorLimit", "host", "perDialTimeout", "port", "privateKey", "user"]
    text = json.dumps(agent["secretDigests"])
    assert "gpu-l4-1" not in text and "gpufleet.io" not in text and "192.0.2" not in text


def test_a_new_gpu_model_is_named_on_the_host_and_lands_on_its_node(plans):
    review = review_plans(*plans)
    assert [(c.name, c.hidden) for c in review.hidden] == [("dev-pool-l4-agent-gpu-l4-1", ["node labels"])]
    patch = next(c for c in review.changes if c.type == "kubernetes:core/v1:NodePatch")
    assert (patch.op, patch.name, [(i.path, i.before, i.after) for i in patch.inputs]) == (
        "update", "dev-pool-l4-node-gpu-l4-1", [("metadata.labels.gpufleet.io/gpu-model", "L4", "L40S")])
    comment = render(review, "markdown")
    assert ("- `dev-pool-l4-agent-gpu-l4-1` (`command:remote:Command`, in dev › dev-pool-l4): node labels changed"
            in comment.splitlines())
    assert "stdin.node-label" in render(review, "text")


def test_an_older_plan_without_digests_reports_no_hidden_change(plans):
    base, head = plans
    old = json.loads(json.dumps(base))
    for r in old["resources"]:
        r.pop("secretDigests", None)
    assert review_plans(old, head).hidden == []
