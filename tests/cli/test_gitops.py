"""GitOps for the in-cluster layer (docs/gitops.md) on the example stack stacks/Pulumi.gitops-k3s.yaml: the plan of an
`argocd` stack registers the cluster Secret and none of the delegated objects; its export equals what the `pulumi`
path applies and validates; the policies, the review and `verify` still see the delegated layer."""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import io
import json

import pytest
import yaml

from gpufleet.app import cli
from gpufleet.app.gitops import argocd, flux
from gpufleet.app.gitops.layer import WAVE_ANNOTATION, as_engine
from gpufleet.app.plan.engine import plan
from gpufleet.app.plan.render import to_json
from gpufleet.app.review import review_plans
from gpufleet.app.verify.run import FAIL, PASS
from gpufleet.base import gitops
from tests.crd_validate import validate_cr
from tests.helpers import ROOT, example, planned
from tests.k8s_validate import as_object, is_core, k8s_objects, validate_strict
from tests.upstream.test_kubernetes_objects import NOT_IN_REFERENCE

STACK = "gitops-k3s"
# The delegated layer of the example stack, exactly: (kind, namespace, name, wave).
EXPECTED = {
    ("ClusterQueue", "", "research-a100-train", 0), ("ClusterQueue", "", "vision-a100-train", 0),
    ("ConfigMap", "monitoring", "gpufleet-dashboards", 0), ("Namespace", "", "research", 0),
    ("Namespace", "", "serving", 0), ("Namespace", "", "vision-ml", 0),
    ("PriorityClass", "", "batch-preemptible", 0), ("PriorityClass", "", "production-inference", 0),
    ("PriorityClass", "", "training", 0), ("PrometheusRule", "monitoring", "gpufleet-gpu-alerts", 0),
    ("LeaderWorkerSet", "serving", "qwen3-8b", 1), ("LimitRange", "research", "gpu-limits", 1),
    ("LimitRange", "vision-ml", "gpu-limits", 1), ("LocalQueue", "research", "a100-train", 1),
    ("LocalQueue", "vision-ml", "a100-train", 1), ("PodMonitor", "serving", "qwen3-8b", 1),
    ("ResourceQuota", "research", "gpu-quota", 1), ("ResourceQuota", "vision-ml", "gpu-quota", 1),
    ("Service", "serving", "qwen3-8b", 1), ("HTTPRoute", "serving", "qwen3-8b", 2),
    ("ScaledObject", "serving", "qwen3-8b", 2),
}


def _key(obj: dict) -> tuple[str, str, str]:
    meta = obj.get("metadata", {})
    return obj["kind"], meta.get("namespace", ""), meta["name"]


@pytest.fixture(scope="module")
def argocd_plan():
    return planned(STACK, policies=True)


@pytest.fixture(scope="module")
def pulumi_plan():
    """The same stack with engine pulumi: what `pulumi up` applied before the split."""
    return plan(as_engine(example(STACK), gitops.PULUMI))


def test_the_argocd_plan_registers_the_cluster_secret_and_none_of_the_delegated_objects(argocd_plan):
    keys = {_key(as_object(r)) for r in k8s_objects(argocd_plan.resources)}
    assert not keys & {(k, ns, n) for k, ns, n, _ in EXPECTED}
    [secret] = [r for r in argocd_plan.resources if r.type == "kubernetes:core/v1:Secret"]
    assert secret.name == "gitops-argocd-cluster-secret"
    assert secret.parent.endswith("gpufleet:gitops:ArgoCdCluster::gitops-argocd-cluster")
    assert secret.inputs["metadata"] == {
        "name": "gpufleet-gitops", "namespace": "argocd",
        "labels": {"argocd.argoproj.io/secret-type": "cluster", "gpufleet.io/cluster": "gitops", "gpufleet.io/platform": "k3s",
                   "gpufleet.io/kubernetes-version": "1.36", "gpufleet.io/gitops-engine": "argocd"},
        "annotations": {"gpufleet.io/stack": STACK, "gpufleet.io/node-pools": "a100-train,l4-serve",
                        "gpufleet.io/repo-url": "https://git.example.com/platform/gpufleet-gitops.git",
                        "gpufleet.io/repo-path": "clusters/gitops", "gpufleet.io/target-revision": "main"},
    }
    assert secret.revealed["stringData"] == {"name": "gitops", "server": "https://kubernetes.default.svc",
                                             "config": '{"tlsClientConfig":{"insecure":false}}'}
    # What stays with Pulumi: the Kueue release and the pool's flavor, the Gateway, the charts.
    types = {r.type for r in argocd_plan.resources}
    assert {"kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor", "kubernetes:helm.sh/v3:Release",
            "kubernetes:gateway.networking.k8s.io/v1:Gateway"} <= types


def test_the_delegated_layer_is_exactly_the_expected_objects_in_gpufleets_apply_order(argocd_plan):
    assert {(*_key(o.manifest), o.wave) for o in argocd_plan.delegated} == EXPECTED
    waves = [o.wave for o in argocd_plan.delegated]
    assert waves == sorted(waves)


def test_the_exported_objects_equal_what_the_pulumi_path_applies(argocd_plan, pulumi_plan):
    applied = {_key(as_object(r)): (r, as_object(r)) for r in k8s_objects(pulumi_plan.resources)}
    exported = argocd.export(argocd_plan.spec, STACK, argocd_plan.delegated).manifests
    assert len(exported) == len(EXPECTED)
    for obj in exported.values():
        r, same = applied[_key(obj)]
        obj = copy.deepcopy(obj)
        annotations = obj["metadata"].pop("annotations")
        assert annotations.pop(WAVE_ANNOTATION) in ("0", "1", "2")
        if annotations:
            obj["metadata"]["annotations"] = annotations
        assert obj == same, _key(obj)  # apiVersion, kind, names, namespace, labels, spec and every other field
        assert r.urn in {o.urn for o in argocd_plan.delegated}
    # ... and the pulumi path's plan is the argocd plan's resources plus those objects (and the components that held
    # them), less the registration.
    argo_urns = {r.urn for r in argocd_plan.resources if "ArgoCdCluster" not in r.urn}
    delegated = {o.urn for o in argocd_plan.delegated}
    extra = {r.urn for r in pulumi_plan.resources} - argo_urns
    assert {u for u in extra if "::" in u and any(u == r.urn and r.custom for r in pulumi_plan.resources)} == delegated
    assert sorted(u.rsplit("::", 1)[-1] for u in extra - delegated) == [
        "gitops-kueue-team-research", "gitops-kueue-team-vision", "gitops-model-serving-qwen3-8b", "gitops-priority"]
    assert argo_urns <= {r.urn for r in pulumi_plan.resources}


def test_every_exported_object_validates_against_its_schema(argocd_plan):
    out = argocd.export(argocd_plan.spec, STACK, argocd_plan.delegated)
    version = argocd_plan.spec.cluster.kubernetes_version
    for obj in [*out.manifests.values(), *out.argocd.values()]:
        if is_core(obj, version):
            validate_strict(obj, version)
            continue
        group = obj["apiVersion"].rpartition("/")[0]
        if (group, obj["kind"]) in NOT_IN_REFERENCE:
            continue  # validated against its chart's CRD at plan time (gpufleet/app/plan/cr_check.py), as the export is
        assert validate_cr(obj) == [], _key(obj)


def test_the_app_project_allows_only_what_the_export_holds(argocd_plan):
    out = argocd.export(argocd_plan.spec, STACK, argocd_plan.delegated)
    project, app = out.argocd["appproject.yaml"], out.argocd["application.yaml"]
    assert project["spec"]["clusterResourceWhitelist"] == [
        {"group": "", "kind": "Namespace"}, {"group": "kueue.x-k8s.io", "kind": "ClusterQueue"},
        {"group": "scheduling.k8s.io", "kind": "PriorityClass"}]
    assert [d["namespace"] for d in project["spec"]["destinations"]] == ["monitoring", "research", "serving", "vision-ml"]
    assert project["spec"]["sourceRepos"] == ["https://git.example.com/platform/gpufleet-gitops.git"]
    assert app["spec"]["source"] == {"repoURL": "https://git.example.com/platform/gpufleet-gitops.git",
                                     "path": "clusters/gitops/manifests", "targetRevision": "main",
                                     "directory": {"recurse": False}}
    assert app["spec"]["project"] == project["metadata"]["name"] == "gpufleet-teams"
    assert app["spec"]["destination"] == {"server": "https://kubernetes.default.svc", "namespace": "monitoring"}


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_export_argocd_writes_the_tree_and_removes_what_is_no_longer_exported(tmp_path):
    stale = tmp_path / "clusters" / "gitops" / "manifests" / "01-resourcequota-old-team-gpu-quota.yaml"
    stale.parent.mkdir(parents=True)
    stale.write_text("kind: ResourceQuota\n")
    keep = tmp_path / "README.md"
    keep.write_text("the repository's own file\n")
    code, out, err = _cli("export", "argocd", STACK, str(tmp_path))
    assert (code, err) == (0, "")
    assert out == f"gpufleet: 21 objects (waves 0-2) and 2 argocd objects written under {tmp_path}/clusters/gitops\n"
    files = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*.yaml"))
    assert len(files) == 23 and not stale.exists() and keep.exists()
    assert "clusters/gitops/manifests/02-httproute-serving-qwen3-8b.yaml" in files
    route = yaml.safe_load((tmp_path / "clusters/gitops/manifests/02-httproute-serving-qwen3-8b.yaml").read_text())
    assert route["metadata"]["annotations"] == {WAVE_ANNOTATION: "2"}
    app = yaml.safe_load((tmp_path / "clusters/gitops/argocd/application.yaml").read_text())
    assert app["kind"] == "Application" and validate_cr(app) == []


def test_export_flux_writes_the_same_manifests_with_a_kustomization(tmp_path):
    stack = tmp_path / "Pulumi.gitops-k3s.yaml"
    doc = yaml.safe_load((ROOT / "stacks" / f"Pulumi.{STACK}.yaml").read_text())
    doc["config"]["gpufleet:gitops"]["engine"] = "flux"
    stack.write_text(yaml.safe_dump(doc))
    repo = tmp_path / "repo"
    repo.mkdir()
    code, out, err = _cli("export", "flux", STACK, str(repo), "--config", str(stack))
    assert (code, err) == (0, "")
    assert sorted(p.name for p in (repo / "clusters/gitops/flux").iterdir()) == ["gitrepository.yaml", "kustomization.yaml"]
    assert len(list((repo / "clusters/gitops/manifests").iterdir())) == 21
    ks = yaml.safe_load((repo / "clusters/gitops/flux/kustomization.yaml").read_text())
    assert ks["spec"] == {"sourceRef": {"kind": "GitRepository", "name": "gpufleet-gitops"},
                          "path": "./clusters/gitops/manifests", "interval": "10m", "prune": True, "wait": True,
                          "timeout": "5m"}
    assert yaml.safe_load((repo / "clusters/gitops/flux/gitrepository.yaml").read_text())["spec"]["ref"] == {"branch": "main"}


def test_export_refuses_a_stack_whose_engine_is_another_and_a_missing_directory(tmp_path):
    code, out, err = _cli("export", "argocd", "teams", str(tmp_path))
    assert (code, out) == (2, "")
    assert err == ("gpufleet: stack 'teams': gpufleet:gitops.engine: argocd is not the stack's engine (got 'pulumi'); "
                   "set `engine: argocd` to export for it\n")
    code, out, err = _cli("export", "argocd", STACK, str(tmp_path / "nowhere"))
    assert code == 2 and err.startswith("gpufleet: DIR ") and "not a directory" in err
    assert not list(tmp_path.iterdir())


def test_the_policies_judge_the_delegated_objects(monkeypatch):
    """No valid stack file makes a model server without its API key (the spec refuses it first), so the delegated
    registration is tampered with: the plan's policies must still judge it, as they would on the pulumi path."""
    from gpufleet.app.plan import engine

    real = engine._delegated_registrations

    def without_key(stack_file, spec, kept):
        out = real(stack_file, spec, kept)
        for r in out:
            if r.type.endswith(":LeaderWorkerSet"):
                spec = r.inputs["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]
                spec["containers"][0].pop("env")
        return out

    monkeypatch.setattr(engine, "_delegated_registrations", without_key)
    result = plan(example(STACK))
    hits = [v for v in result.violations if v.policy == "secure-defaults"]
    assert len(hits) == 1 and hits[0].urn.endswith("LeaderWorkerSet::gitops-model-serving-qwen3-8b-lws")
    assert "without an API key" in hits[0].message


def test_diff_shows_a_change_of_the_exported_layer_by_object(argocd_plan):
    base = to_json(argocd_plan)
    config = copy.deepcopy(example(STACK).config)
    config["gpufleet:addons"]["kueue"]["teams"][1]["queues"][0]["nominalQuota"] = 6
    head = to_json(plan(dataclasses.replace(example(STACK), config=config)))
    review = review_plans(json.loads(json.dumps(base)), json.loads(json.dumps(head)))
    changed = {(c.op, c.type.rsplit(":", 1)[-1], c.name, c.group) for c in review.changes}
    group = "delegated to argocd (applied when the export is merged, not by pulumi up)"
    assert changed == {("update", "ClusterQueue", "gitops-kueue-cq-vision-a100-train", group),
                       ("update", "ResourceQuota", "gitops-kueue-team-vision-gpu-quota", group)}
    quota = next(c for c in review.changes if c.type.endswith("ResourceQuota"))
    assert [(i.path, i.before, i.after) for i in quota.inputs] == [("spec.hard.requests.nvidia.com/gpu", "12", "10")]


def test_diff_of_a_move_to_argocd_keeps_the_objects_and_says_who_applies_them(argocd_plan, pulumi_plan):
    review = review_plans(json.loads(json.dumps(to_json(pulumi_plan))), json.loads(json.dumps(to_json(argocd_plan))))
    # The objects keep their URNs and inputs: no change shown for them. The components that held them in Pulumi's
    # state go (they hold no object of their own); the note says what pulumi up would do to the objects themselves.
    assert {(c.op, c.name) for c in review.changes} == {
        ("create", "gitops-argocd-cluster"), ("create", "gitops-argocd-cluster-secret"),
        ("delete", "gitops-priority"), ("delete", "gitops-kueue-team-research"), ("delete", "gitops-kueue-team-vision"),
        ("delete", "gitops-model-serving-qwen3-8b")}
    assert sorted(c.type for c in review.changes if c.op == "delete") == [
        "gpufleet:addons:PriorityClasses", "gpufleet:addons:TeamNamespace", "gpufleet:addons:TeamNamespace",
        "gpufleet:serving:ModelServer"]
    [note] = [n for n in review.notes if "moves from pulumi to argocd" in n]
    assert "`pulumi state delete` each delegated URN before the next pulumi up" in note


class FakeCustomObjects:
    """kubernetes.client.CustomObjectsApi's get_namespaced_custom_object over canned answers."""

    def __init__(self, answers: dict):
        self.answers, self.calls = answers, []

    def get_namespaced_custom_object(self, group, version, namespace, plural, name):
        self.calls.append((group, version, namespace, plural, name))
        answer = self.answers.get((plural, namespace, name))
        if answer is None:
            error = Exception("Not Found")
            error.status = 404
            raise error
        return answer


def _application(objects, drop=(), extra=(), stale=()):
    resources = []
    for o in objects:
        api, kind, ns, name = o.key
        if (kind, name) in drop:
            continue
        resources.append({"group": api.rpartition("/")[0], "version": api.rpartition("/")[2], "kind": kind,
                          "namespace": ns, "name": name, "status": "OutOfSync" if (kind, name) in stale else "Synced"})
    resources += list(extra)
    return {"status": {"sync": {"status": "Synced", "revision": "0123456789abcdef0123"}, "resources": resources}}


def test_verify_compares_what_argo_cd_synced_with_the_export(argocd_plan):
    from gpufleet.app.gitops.verify import check

    objects, spec = argocd_plan.delegated, argocd_plan.spec
    api = FakeCustomObjects({("applications", "argocd", "gpufleet-gitops"): _application(objects)})
    result = check(api, spec, STACK, objects)
    assert (result.status, result.target) == (PASS, "argocd argocd/gpufleet-gitops")
    assert result.detail == "21 objects of the export synced at revision 0123456789ab"
    assert api.calls == [("argoproj.io", "v1alpha1", "argocd", "applications", "gpufleet-gitops")]

    drifted = _application(objects, drop={("ResourceQuota", "gpu-quota")}, stale={("ClusterQueue", "vision-a100-train")},
                           extra=[{"group": "apps", "kind": "Deployment", "namespace": "research", "name": "hand-made",
                                   "status": "Synced"}])
    result = check(FakeCustomObjects({("applications", "argocd", "gpufleet-gitops"): drifted}), spec, STACK, objects)
    assert result.status == FAIL
    assert result.detail == (
        "not applied by the engine: ResourceQuota research/gpu-quota, ResourceQuota vision-ml/gpu-quota; "
        "applied but not in the export: Deployment.apps research/hand-made; "
        "out of sync: ClusterQueue.kueue.x-k8s.io vision-a100-train at revision 0123456789ab")

    result = check(FakeCustomObjects({}), spec, STACK, objects)
    assert (result.status, result.detail) == (FAIL, "Application argocd/gpufleet-gitops not found: apply the export's "
                                                    "engine objects once (docs/gitops.md, \"Bootstrap\")")


def test_verify_reads_flux_inventory(argocd_plan):
    from gpufleet.app.gitops.verify import flux_check

    objects = argocd_plan.delegated
    spec = argocd_plan.spec.model_copy(update={"gitops": argocd_plan.spec.gitops.model_copy(update={"engine": "flux"})})
    entries = [{"id": f"{o.key[2]}_{o.key[3]}_{o.key[0].rpartition('/')[0]}_{o.key[1]}", "v": "v1"} for o in objects]
    ks = {"status": {"inventory": {"entries": entries}, "lastAppliedRevision": "main@sha1:abc",
                     "conditions": [{"type": "Ready", "status": "True"}]}}
    result = flux_check(FakeCustomObjects({("kustomizations", "flux-system", "gpufleet-gitops"): ks}), spec, STACK, objects)
    assert (result.status, result.detail) == (PASS, "21 objects of the export synced at revision main@sha1:abc")
    assert flux.FLUX == "flux"


def test_gpufleet_verify_adds_the_gitops_check_for_a_delegating_stack(monkeypatch, argocd_plan):
    from kubernetes import client

    from gpufleet.app.verify.run import Result

    api = FakeCustomObjects({("applications", "argocd", "gpufleet-gitops"): _application(argocd_plan.delegated)})
    monkeypatch.setattr(client, "CustomObjectsApi", lambda api_client: api)
    result = Result(STACK, "run", "quick")
    cli._gitops_check(object(), example(STACK), argocd_plan.spec, result)
    assert [(c.name, c.status) for c in result.checks] == [("gitops", PASS)]
    pulumi_spec = argocd_plan.spec.model_copy(update={"gitops": argocd_plan.spec.gitops.model_copy(update={"engine": "pulumi"})})
    cli._gitops_check(object(), example(STACK), pulumi_spec, result)
    assert len(result.checks) == 1  # nothing delegated, nothing to compare


def test_the_text_plan_lists_the_delegated_layer_by_wave(argocd_plan):
    from gpufleet.app.plan.render import to_text

    text = to_text(argocd_plan)
    assert ("delegated to argocd (21 objects, `gpufleet export argocd`; judged here as if Pulumi applied them):\n"
            "  wave 0: ClusterQueue research-a100-train (kueue.x-k8s.io/v1beta2)\n") in text
    assert "  wave 2: ScaledObject serving/qwen3-8b (keda.sh/v1alpha1)\n" in text


def test_export_escapes_what_it_echoes(tmp_path):
    code, out, err = _cli("export", "argocd", STACK, str(tmp_path / "x\x1b[31mred"))
    assert code == 2 and "\x1b" not in err and err.startswith("gpufleet: DIR ")
