"""A chart bump shown end to end (issue 51 "Done when"): two plans, before and after a pin moves, on archives made
from the reference ones. The GPU Operator (v25.10.1 -> v26.7.0, both real archives) and JobSet (0.12.0 -> a 0.13.0 whose
CRD adds a served version and moves its storage) have their CRDs applied before their releases, and the review lists
each CRD's served and storage versions; Kueue's v1beta1, which Kueue 0.20 stops serving (kubernetes-sigs/kueue
PR#14558, "v1beta2: set unserved for v1beta1 types"), is refused in the plan and named in the review."""

from __future__ import annotations

import copy
import dataclasses
import io
import tarfile

import pytest
import yaml

from gpufleet.app.plan.crd_sources import Crd, lookup
from gpufleet.app.plan.render import to_json
from gpufleet.app.review import render, review_plans
from gpufleet.base import chart_crds, versions
from gpufleet.base.spec import SpecError
from gpufleet.components.workloads import kueue
from tests.helpers import CHARTS, plan_config, small_operator_stack

JOBSET_CRD = "jobset/crds/jobset.x-k8s.io_jobsets.yaml"
GROUP = "kubernetes:yaml/v2:ConfigGroup"
MIGRATION = ("kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definition-versioning/"
             "#upgrade-existing-objects-to-a-new-stored-version")


def _rewrite(source, target, edit) -> None:
    """A copy of a chart archive with `edit(member, text) -> text` applied to each file (None: unchanged)."""
    with tarfile.open(source) as src, tarfile.open(target, "w:gz", compresslevel=1) as out:
        for m in src.getmembers():
            data = src.extractfile(m).read() if m.isfile() else None
            if data is not None:
                new = edit(m.name, data.decode("utf-8", "replace"))
                if new is not None:
                    data = new.encode()
                    m = copy.copy(m)
                    m.size = len(data)
            out.addfile(m, io.BytesIO(data) if data is not None else None)


def _jobset_0_13(member: str, text: str):
    if member != JOBSET_CRD:
        return None
    crd = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    [old] = crd["spec"]["versions"]
    new = copy.deepcopy(old)
    new["name"] = "v1alpha3"
    old["storage"] = False
    crd["spec"]["versions"] = [old, new]
    return yaml.dump(crd, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper))


def _kueue_0_20(member: str, text: str):
    # PR#14558: every v1beta1 version stays listed with `served: false` (v1beta2 is the storage version since 0.16).
    if not member.startswith("kueue/templates/crd/"):
        return None
    return text.replace("served: true\n      storage: false", "served: false\n      storage: false", 1)


@pytest.fixture(scope="module")
def charts(tmp_path_factory):
    if not (CHARTS / "jobset-0.12.0.tgz").is_file():
        pytest.skip(f"the reference chart archives are not in {CHARTS}")
    d = tmp_path_factory.mktemp("charts")
    for f in CHARTS.iterdir():
        (d / f.name).symlink_to(f)
    _rewrite(CHARTS / "jobset-0.12.0.tgz", d / "jobset-0.13.0.tgz", _jobset_0_13)
    _rewrite(CHARTS / "kueue-0.19.2.tgz", d / "kueue-0.20.0.tgz", _kueue_0_20)
    return d


def _bump(monkeypatch, pin: str, version: str) -> None:
    monkeypatch.setattr(versions, pin, dataclasses.replace(getattr(versions, pin), version=version))


def test_a_jobset_and_gpu_operator_bump_applies_the_new_crds_first_and_the_review_lists_them(charts, monkeypatch):
    monkeypatch.setenv("GPUFLEET_CHARTS_DIR", str(charts))
    base = to_json(plan_config(small_operator_stack("v25.10.1"), policies=False))
    _bump(monkeypatch, "JOBSET", "0.13.0")
    head_plan = plan_config(small_operator_stack("v26.7.0"), policies=False)
    head = to_json(head_plan)

    # The new CRDs are applied before the releases, which skip theirs.
    groups = {r.name: r for r in head_plan.resources if r.type == GROUP}
    releases = {r.name: r for r in head_plan.resources if r.type == "kubernetes:helm.sh/v3:Release"}
    for chart in ("jobset", "gpu-operator"):
        assert groups[f"up-{chart}-crds"].urn in releases[f"up-{chart}-release"].dependencies
        assert releases[f"up-{chart}-release"].inputs["skipCrds"] is True
    [jobsets] = chart_crds.crd_documents(groups["up-jobset-crds"].inputs["yaml"])
    assert [v["name"] for v in jobsets["spec"]["versions"]] == ["v1alpha2", "v1alpha3"]

    review = review_plans(base, head)
    summary = {c.crd: (c.state, c.added, c.removed, c.storage_before, c.storage_after) for c in review.crds}
    assert summary == {
        "jobsets.jobset.x-k8s.io": ("changed", ("v1alpha3",), (), "v1alpha2", "v1alpha3"),
        "clusterpolicies.nvidia.com": ("changed", (), (), "v1", "v1"),
        "nvidiadrivers.nvidia.com": ("changed", (), (), "v1alpha1", "v1alpha1"),
        "gpuclusters.nvidia.com": ("new", ("v1alpha1",), (), None, "v1alpha1"),
        "computedomains.resource.nvidia.com": ("new", ("v1beta1",), (), None, "v1beta1"),
        "computedomaincliques.resource.nvidia.com": ("new", ("v1beta1",), (), None, "v1beta1"),
    }  # NFD's CRDs are the same in the operator's NFD 0.18.2 and 0.19.0 subcharts: not listed
    [js] = [c for c in review.crds if c.crd == "jobsets.jobset.x-k8s.io"]
    assert js.line() == (
        "jobsets.jobset.x-k8s.io (jobset 0.12.0 -> 0.13.0): serves v1alpha3 (added); storage v1alpha2 -> v1alpha3; "
        "schema changed; applied by gpufleet before the release. Before the bump: rewrite every jobsets.jobset.x-k8s.io "
        "object at the storage version v1alpha3 (`kubectl get jobsets.jobset.x-k8s.io -A -o json | kubectl replace "
        f"-f -`, or the storage version migrator), then remove v1alpha2 from the CRD's status.storedVersions ({MIGRATION})")
    assert review.crd_notes == []
    markdown = render(review, "markdown")
    assert "#### CRD changes" in markdown and "- gpuclusters.nvidia.com (gpu-operator v25.10.1 -&gt; v26.7.0): new CRD" in markdown
    assert render(review, "json").count('"servedAdded"') == len(review.crds)


def _with_team(config: dict) -> dict:
    config["gpufleet:addons"]["kueue"]["teams"] = [{"name": "ml", "queues": [{"pool": "h100", "nominalQuota": 8}]}]
    return config


def test_kueue_v1beta1_is_served_by_the_pinned_chart_and_refused_once_0_20_stops_serving_it(charts, monkeypatch):
    monkeypatch.setenv("GPUFLEET_CHARTS_DIR", str(charts))
    # Kueue 0.19.2 (pinned) still serves v1beta1 (its storage version is v1beta2).
    assert isinstance(lookup("kueue.x-k8s.io/v1beta1", "ResourceFlavor", charts), Crd)
    monkeypatch.setattr(kueue, "API_VERSION", "kueue.x-k8s.io/v1beta1")
    _bump(monkeypatch, "KUEUE", "0.20.0")
    with pytest.raises(SpecError) as refused:
        plan_config(_with_team(small_operator_stack(versions.GPU_OPERATOR.version)), policies=False)
    assert sorted(p.message for p in refused.value.problems) == [
        f"{kind} '{name}' is written at kueue.x-k8s.io/v1beta1, which the API server would refuse: the {plural}."
        "kueue.x-k8s.io CRD of chart kueue 0.20.0 lists it as not served: it serves v1beta2 (storage v1beta2); write "
        "the object at a served version"
        for kind, name, plural in (("ClusterQueue", "ml-h100", "clusterqueues"), ("LocalQueue", "h100", "localqueues"),
                                   ("ResourceFlavor", "h100", "resourceflavors"))]


def test_the_review_of_kueue_0_20_names_what_was_written_at_v1beta1_and_the_migration(charts, monkeypatch):
    monkeypatch.setenv("GPUFLEET_CHARTS_DIR", str(charts))
    config = _with_team(small_operator_stack(versions.GPU_OPERATOR.version))
    base = to_json(plan_config(config, policies=False))
    for r in base["resources"]:  # the objects as a gpufleet that wrote v1beta1 planned them
        if r["inputs"].get("apiVersion") == kueue.API_VERSION:
            r["inputs"]["apiVersion"] = "kueue.x-k8s.io/v1beta1"
    _bump(monkeypatch, "KUEUE", "0.20.0")
    head = to_json(plan_config(config, policies=False))
    review = review_plans(base, head)
    by_name = {c.crd: c for c in review.crds}
    cq = by_name["clusterqueues.kueue.x-k8s.io"]
    assert (cq.removed, cq.added, cq.storage_before, cq.storage_after) == (("v1beta1",), (), "v1beta2", "v1beta2")
    assert cq.how == "a template of the chart: Helm upgrades it with the release"
    assert cq.objects_at_removed == ("ClusterQueue 'ml-h100' at v1beta1",)
    assert by_name["resourceflavors.kueue.x-k8s.io"].objects_at_removed == ("ResourceFlavor 'h100' at v1beta1",)
    assert cq.migration.startswith("rewrite every clusterqueues.kueue.x-k8s.io object at the storage version v1beta2")
    assert "then remove v1beta1 from the CRD's status.storedVersions" in cq.migration
    assert all(c.removed == ("v1beta1",) for c in review.crds)
