"""Existing-cluster stacks through the real Pulumi CLI, the real policy pack and a real API server.

Per stack (one fresh etcd + kube-apiserver each): the real `pulumi preview --policy-pack policies --json`
lists the resources (URN, type) and policy verdicts `gpufleet plan` reports for the same config; `pulumi up`
installs the add-on layer and the API server accepts every object; a second preview shows no changes;
`gpufleet report` renders the real preview JSON. Each stack is `platform: existing` with the API server's kubeconfig
as the secret `gpufleet:kubeconfig`: the example stacks/Pulumi.existing-coreweave.yaml, and the k3s examples dev, lab
and teams as existing-cluster stacks (harness.existing_stack_config: their pools' hosts become named nodes). Charts
come from a local repository and nothing awaits kubelets (tests/e2e/seam.py, docs/e2e.md).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import pytest
from pulumi import automation as auto

from tests.e2e import harness
from tests.e2e.cluster import ApiServer
from tests.e2e.harness import E2EStack, plan_json, policy_events, timed

STACKS = ["existing-coreweave", "dev", "lab", "teams"]
# Resources no plan lists: the engine's root resource.
ENGINE_ONLY = {"pulumi:pulumi:Stack"}


@dataclass
class Run:
    name: str
    work: Path
    server: ApiServer
    stack: E2EStack
    config: dict
    plan: dict = field(default_factory=dict)
    preview: Optional[dict] = None
    preview_path: Optional[Path] = None
    event_log: Optional[Path] = None
    up: Optional[auto.UpResult] = None
    failed: dict = field(default_factory=dict)

    def need(self, what: str) -> None:
        if what in self.failed:
            pytest.skip(f"{what} failed earlier in this run: {self.failed[what]}")


def tier_config(stack: str, repo_url: str) -> dict:
    return {**harness.existing_stack_config(stack), "gpufleet-e2e:chartRepository": repo_url,
            "gpufleet-e2e:noKubelets": True}


@pytest.fixture(scope="module", params=STACKS)
def run(request, tools, chart_repo, tmp_path_factory):
    name = request.param
    work = tmp_path_factory.mktemp(f"e2e-{name}")
    with timed(f"{name}: etcd + kube-apiserver up"):
        server = ApiServer(harness.BIN, work / "apiserver").start()
    try:
        config = tier_config(name, chart_repo.url)
        if any(p.get("rdma") for p in config.get("gpufleet:nodePools", [])):
            server.install_crds(harness.operator_runtime_crds())  # what the Network Operator's pod would apply
        for pool in config.get("gpufleet:nodePools", []):
            for node in pool["existing"].get("nodes", []):
                server.create_node(node)  # the pool's nodes, which its NodePatches label (no kubelet registers them here)
        stack = E2EStack(name, work, config, {"gpufleet:kubeconfig": server.kubeconfig})
        r = Run(name, work, server, stack, config)
        with timed(f"{name}: gpufleet plan"):
            r.plan = plan_json(name, stack.plan_file(work / "plan-stack.yaml"), work / "plan.json")
        yield r
    finally:
        server.stop()


# A yaml/v2 ConfigGroup (a chart's CRDs applied before its release, docs/upgrades.md) is expanded by the kubernetes
# provider: the engine lists each object in it as a child `<group>:<object>`, which the plan's mocks cannot (they
# record the group and its objects as inputs). Such children are compared by their group.
PROVIDER_EXPANDED = "$kubernetes:yaml/v2:ConfigGroup$"


def resources(doc_steps: list[dict]) -> set[tuple[str, str]]:
    out = set()
    for s in doc_steps:
        state = s.get("newState") or s.get("oldState") or {}
        out.add((s["urn"], state.get("type") or s["urn"].split("::")[2].rsplit("$", 1)[-1]))
    return {r for r in out if r[1] not in ENGINE_ONLY}


def split_expanded(real: set[tuple[str, str]]) -> tuple[set[tuple[str, str]], set[str]]:
    """(the resources a program registers, the names of the groups the provider expanded children of)."""
    children = {r for r in real if PROVIDER_EXPANDED in r[0]}
    return real - children, {urn.rsplit("::", 1)[1].split(":", 1)[0] for urn, _ in children}


def summary_event(event_log: Path) -> dict:
    for line in event_log.read_text().splitlines():
        event = json.loads(line) if line.strip().startswith("{") else {}
        if isinstance(event.get("summaryEvent"), dict):
            return event["summaryEvent"]
    raise AssertionError(f"no summaryEvent in {event_log}")


def verdicts_of_events(events: list[dict]) -> set[tuple[str, str, str]]:
    return {(e["policyName"], e.get("resourceUrn") or "", str(e["enforcementLevel"]).lower()) for e in events}


def verdicts_of_plan(plan: dict) -> set[tuple[str, str, str]]:
    return {(v["policy"], v["urn"], v["level"]) for v in plan["violations"]}


def test_preview_lists_the_plans_resources_and_verdicts(run):
    run.preview_path, run.event_log = run.work / "preview.json", run.work / "preview.events.jsonl"
    try:
        with timed(f"{run.name}: pulumi preview --policy-pack (1st)"):
            run.preview = run.stack.preview_json(run.preview_path, run.event_log)
    except auto.errors.CommandError as exc:
        run.failed["preview"] = str(exc)[-2000:]
        raise
    real, expanded = split_expanded(resources(run.preview["steps"]))
    planned = {(r["urn"], r["type"]) for r in run.plan["resources"] if r["type"] not in ENGINE_ONLY}
    assert real == planned, f"only in preview: {sorted(real - planned)}\nonly in plan: {sorted(planned - real)}"
    groups = {r["name"] for r in run.plan["resources"] if r["type"] == "kubernetes:yaml/v2:ConfigGroup"}
    assert expanded <= groups, expanded - groups
    assert {s["op"] for s in run.preview["steps"]} <= {"create", "same"}
    assert verdicts_of_events(policy_events(run.event_log)) == verdicts_of_plan(run.plan)


def test_report_renders_the_real_preview(run):
    run.need("preview")
    if run.preview is None:
        pytest.skip("no preview in this run")
    out = run.work / "report.json"
    proc = harness.gpufleet("report", "--preview-json", str(run.preview_path), "--event-log", str(run.event_log),
                            "--format", "json", "--output", str(out))
    assert proc.returncode == 0, proc.stderr
    report = json.loads(out.read_text())
    assert report["stack"] == run.name
    assert {c["urn"] for c in report["changes"]} == {u for u, t in resources(run.preview["steps"])}
    assert {c["op"] for c in report["changes"]} == {"create"}
    assert report["mandatoryViolations"] == 0
    md = harness.gpufleet("report", "--preview-json", str(run.preview_path), "--event-log", str(run.event_log))
    assert md.returncode == 0 and run.name in md.stdout, md.stderr


def test_up_installs_the_addon_layer_on_the_api_server(run):
    run.need("preview")
    try:
        with timed(f"{run.name}: pulumi up"):
            run.up = run.stack.stack.up(on_output=None, color="never")
    except auto.errors.CommandError as exc:
        run.failed["up"] = str(exc)[-3000:]
        raise
    assert run.up.summary.result == "succeeded"
    state = run.stack.stack.export_stack().deployment
    k8s = [r for r in state["resources"] if r["type"].startswith("kubernetes:") and r.get("custom")]
    # A ConfigGroup is a component in the state (its objects are the provider's children, PROVIDER_EXPANDED), a
    # registration in the plan: compared apart, each object it applied read back below like the others.
    direct = [r for r in k8s if PROVIDER_EXPANDED not in r["urn"]]
    planned = [r for r in run.plan["resources"] if r["type"].startswith("kubernetes:")
               and r["type"] != "kubernetes:yaml/v2:ConfigGroup"]
    assert len(direct) == len(planned)
    for r in k8s:
        assert r.get("id"), f"{r['urn']} has no id after up"
    check_objects_exist(run, k8s)


def object_path(server: ApiServer, api_version: str, kind: str, name: str, namespace: Optional[str]) -> str:
    """REST path of an object (its resource name from the API server's discovery)."""
    base = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
    found = [r for r in server.request("GET", base)["resources"] if r["kind"] == kind and "/" not in r["name"]]
    assert found, f"the API server serves no {kind} in {base}"
    plural = found[0]["name"]
    if found[0]["namespaced"]:
        return f"{base}/namespaces/{namespace or 'default'}/{plural}/{name}"
    return f"{base}/{plural}/{name}"


def check_objects_exist(run: Run, state: list[dict]) -> None:
    """Every object gpufleet created directly (not through a chart or a patch) is read back from the API
    server, with the name, namespace and uid the engine recorded."""
    problems = []
    for r in state:
        kind = r["type"].rsplit(":", 1)[-1]
        if kind == "Release" or kind.endswith("Patch") or not r["type"].startswith("kubernetes:"):
            continue
        out = r.get("outputs") or {}
        meta = out.get("metadata") or {}
        try:
            path = object_path(run.server, out["apiVersion"], out["kind"], meta["name"], meta.get("namespace"))
            obj = run.server.request("GET", path)
        except Exception as exc:  # noqa: BLE001 - report every missing object at once
            problems.append(f"{r['urn']}: {exc!r}")
            continue
        if obj["metadata"].get("uid") != meta.get("uid"):
            problems.append(f"{r['urn']}: uid {obj['metadata'].get('uid')} in the API server, {meta.get('uid')} in state")
    assert not problems, "\n".join(problems)


def test_second_preview_shows_no_changes(run):
    run.need("up")
    if run.up is None:
        pytest.skip("up did not run")
    with timed(f"{run.name}: pulumi preview (2nd)"):
        doc = run.stack.preview_json(run.work / "preview2.json", run.work / "preview2.events.jsonl")
    changed = [(s["op"], s["urn"], s.get("diffReasons")) for s in doc["steps"] if s["op"] != "same"]
    assert not changed, changed
    # Issue 50: the engine itself refuses any change (`pulumi preview --expect-no-changes`): no perpetual diff.
    with timed(f"{run.name}: pulumi preview --expect-no-changes"):
        run.stack.stack.preview(expect_no_changes=True, color="never")


# One key changed in one stack: a team's guaranteed GPUs (ClusterQueue nominalQuota).
CHANGED_STACK = "teams"


def changed_config(config: dict) -> dict:
    out = json.loads(json.dumps(config))
    out["gpufleet:addons"]["kueue"]["teams"][0]["queues"][0]["nominalQuota"] = 6
    return out


def test_one_key_change_real_diff_equals_gpufleet_diff(run):
    if run.name != CHANGED_STACK:
        pytest.skip(f"the one-key change runs on the {CHANGED_STACK} stack")
    run.need("up")
    if run.up is None:
        pytest.skip("up did not run")
    head = changed_config(run.config)
    run.stack.write_config(head)
    head_plan = run.work / "plan-head.json"
    plan_json(run.name, run.stack.plan_file(run.work / "plan-head-stack.yaml"), head_plan)
    predicted_out = run.work / "diff.json"
    proc = harness.gpufleet("diff", str(run.work / "plan.json"), str(head_plan), "--format", "json",
                            "--output", str(predicted_out))
    assert proc.returncode == 0, proc.stderr
    predicted = json.loads(predicted_out.read_text())
    with timed(f"{run.name}: pulumi preview (one-key change)"):
        doc = run.stack.preview_json(run.work / "preview-change.json", run.work / "preview-change.events.jsonl")
    real = {(s["urn"], s["op"]) for s in doc["steps"] if s["op"] != "same"}
    expected = {(c["urn"], c["op"]) for c in predicted["changes"]}
    assert real == expected, f"engine: {sorted(real)}\ngpufleet diff: {sorted(expected)}"
    for s in doc["steps"]:
        if s["op"] == "same":
            continue
        engine_paths = set((s.get("detailedDiff") or {}).keys()) or set(s.get("diffReasons") or [])
        change = next(c for c in predicted["changes"] if c["urn"] == s["urn"])
        predicted_paths = {i["path"] for i in change["inputs"]}
        assert engine_paths == predicted_paths, f"{s['urn']}: engine {engine_paths} / gpufleet {predicted_paths}"
    # The real engine's preview of the change, rendered by `gpufleet report`, agrees with the prediction.
    out = run.work / "report-change.json"
    proc = harness.gpufleet("report", "--preview-json", str(run.work / "preview-change.json"), "--event-log",
                            str(run.work / "preview-change.events.jsonl"), "--format", "json", "--output", str(out))
    assert proc.returncode == 0, proc.stderr
    assert {(c["urn"], c["op"]) for c in json.loads(out.read_text())["changes"]} == expected


# A pool's GPU model changed on a stack already up: its nodes' label follows (issue 50: through the Node's API object,
# a NodePatch, as k3s nodes now get theirs; the k3s stacks themselves cannot run here, docs/e2e.md).
LABEL_STACK = "dev"


def test_a_changed_pool_label_lands_on_the_registered_node(run):
    if run.name != LABEL_STACK:
        pytest.skip(f"the label change runs on the {LABEL_STACK} stack")
    run.need("up")
    if run.up is None:
        pytest.skip("up did not run")
    pool = run.config["gpufleet:nodePools"][0]
    node = pool["existing"]["nodes"][0]
    assert run.server.request("GET", f"/api/v1/nodes/{node}")["metadata"]["labels"]["gpufleet.io/gpu-model"] == pool["gpu"]
    changed = json.loads(json.dumps(run.config))
    changed["gpufleet:nodePools"][0]["gpu"] = "L40S"
    run.stack.write_config(changed)
    try:
        with timed(f"{run.name}: pulumi up (pool GPU model changed)"):
            result = run.stack.stack.up(on_output=None, color="never")
        assert result.summary.result == "succeeded"
        assert result.summary.resource_changes.get("update", 0) >= 1
        labels = run.server.request("GET", f"/api/v1/nodes/{node}")["metadata"]["labels"]
        assert labels["gpufleet.io/gpu-model"] == "L40S"
        run.stack.stack.preview(expect_no_changes=True, color="never")  # and it stays put
    finally:
        run.stack.write_config(run.config)


# A stack that breaks a mandatory rule: the operator's driver 570 cannot run CUDA 13.0.
VIOLATING_STACK = "dev"
MANDATORY_RULE = "gpu-driver-cuda-alignment"


def test_mandatory_violation_fails_the_real_preview_with_the_rules_name(run):
    if run.name != VIOLATING_STACK:
        pytest.skip(f"the mandatory violation runs on the {VIOLATING_STACK} stack")
    bad = json.loads(json.dumps(run.config))
    bad["gpufleet:gpuOperator"] = {"driver": {"source": "operator", "version": "570.195.03"}}
    bad["gpufleet:workloads"] = {"cudaVersions": ["12.8", "13.0"]}
    run.stack.write_config(bad)
    plan = plan_json(run.name, run.stack.plan_file(run.work / "plan-bad-stack.yaml"), run.work / "plan-bad.json")
    assert MANDATORY_RULE in {v["policy"] for v in plan["violations"] if v["level"] == "mandatory"}
    events = run.work / "preview-bad.events.jsonl"
    with timed(f"{run.name}: pulumi preview (mandatory violation)"):
        with pytest.raises(auto.errors.CommandError) as failed:
            run.stack.preview_json(run.work / "preview-bad.json", events)
    assert "\n code: 1\n" in str(failed.value)
    # `--json` output carries no policy results (only "error: preview failed"): the engine reports the violation as
    # a policy event, and the run's summary as failed.
    assert (MANDATORY_RULE, "mandatory") in {(e["policyName"], e["enforcementLevel"]) for e in policy_events(events)}
    assert summary_event(events)["result"] == "failed"
    assert verdicts_of_events(policy_events(events)) == verdicts_of_plan(plan)
    # What a person running `pulumi preview --policy-pack policies` sees: the failure names the rule.
    with timed(f"{run.name}: pulumi preview, text (mandatory violation)"):
        with pytest.raises(auto.errors.CommandError) as text:
            run.stack.cli("preview", "--policy-pack", str(harness.POLICY_PACK), "--color", "never")
    assert "\n code: 1\n" in str(text.value)
    assert re.search(rf"\[mandatory\]\s+{MANDATORY_RULE}\b", str(text.value)), str(text.value)[-3000:]
    # `gpufleet report` renders the real policy event log: the violation blocks, by name.
    out = run.work / "report-bad.json"
    proc = harness.gpufleet("report", "--preview-json", str(run.work / "preview-bad.json"), "--event-log",
                            str(events), "--format", "json", "--output", str(out))
    assert proc.returncode in (0, 1), proc.stderr
    report = json.loads(out.read_text())
    assert report["mandatoryViolations"] >= 1
    assert MANDATORY_RULE in {p["policy"] for p in report["policies"] if p["level"] == "mandatory"}
