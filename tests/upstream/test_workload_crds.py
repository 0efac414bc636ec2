"""Upstream-format tests (layer 3): what the workload layer creates, and the manifests in examples/,
validate against the real schemas: core kinds with kubernetes-validate (strict, our pinned Kubernetes
version), custom resources against the upstream CRDs in ../shared/reference/crds/ (tests/crd_validate.py).
"""

import re
from pathlib import Path

import pytest
import yaml

from gpufleet.base import versions
from tests.crd_validate import as_sent, validate_cr
from tests.helpers import ROOT, example_config, plan_config, planned
from tests.k8s_validate import validate_strict



EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))
CORE_GROUPS = {"", "apps", "batch", "scheduling.k8s.io", "autoscaling", "policy", "rbac.authorization.k8s.io"}
CR_TYPE = re.compile(r"^kubernetes:(?P<group>[a-z0-9.-]+\.[a-z]+)/(?P<version>v[0-9a-z]+):(?P<kind>\w+)$")


def _is_core(obj: dict) -> bool:
    group = obj["apiVersion"].rpartition("/")[0]
    return group in CORE_GROUPS


@pytest.fixture(scope="module")
def workload_objects():
    """Every Kubernetes object the workload layer registers in the teams stack and a Volcano variant."""
    cfg = example_config("teams")
    cfg["gpufleet:addons"]["volcano"] = {"enabled": True, "pools": ["l4-infer"]}
    plans = [planned("teams"), plan_config(cfg, stack="vol", policies=False)]
    objects = []
    for p in plans:
        for r in p.resources:
            if r.type.startswith("kubernetes:") and "apiVersion" in r.inputs and r.type != "kubernetes:helm.sh/v3:Release":
                objects.append((r.name, as_sent(r.revealed if isinstance(r.revealed, dict) else r.inputs)))
    return objects


def test_core_objects_validate_strictly(workload_objects):
    core = [(n, o) for n, o in workload_objects if _is_core(o)]
    kinds = {o["kind"] for _, o in core}
    assert {"Namespace", "ResourceQuota", "LimitRange", "PriorityClass"} <= kinds
    for name, obj in core:
        validate_strict(obj, versions.KUBERNETES_DEFAULT)


def test_custom_resources_validate_against_upstream_crds(workload_objects):
    crs = [(n, o) for n, o in workload_objects if not _is_core(o)]
    kinds = {o["kind"] for _, o in crs}
    assert kinds == {"ResourceFlavor", "ClusterQueue", "LocalQueue", "Queue", "ClusterTrainingRuntime", "Topology"}
    for name, obj in crs:
        assert validate_cr(obj) == [], name


def _example_docs():
    for path in EXAMPLES:
        for i, doc in enumerate(yaml.safe_load_all(path.read_text())):
            if doc:
                yield pytest.param(doc, id=f"{path.name}:{i}:{doc['kind']}")


@pytest.mark.parametrize("doc", list(_example_docs()))
def test_example_manifests_validate(doc):
    if _is_core(doc):
        validate_strict(doc, versions.KUBERNETES_DEFAULT)
    else:
        assert validate_cr(doc) == []


def test_examples_cover_the_issue():
    kinds = {(p.name, d["kind"]) for p in EXAMPLES for d in yaml.safe_load_all(p.read_text()) if d}
    assert ("inference-keda-scaledobject.yaml", "ScaledObject") in kinds
    assert ("spot-training-jobset.yaml", "JobSet") in kinds
    assert ("spot-training-jobset.yaml", "PersistentVolumeClaim") in kinds
    jobset = next(d for d in yaml.safe_load_all((ROOT / "examples/spot-training-jobset.yaml").read_text()) if d["kind"] == "JobSet")
    job = jobset["spec"]["replicatedJobs"][0]["template"]["spec"]
    assert job["backoffLimit"] >= 1
    assert {"type": "DisruptionTarget", "status": "True"} in job["podFailurePolicy"]["rules"][0]["onPodConditions"]
    assert job["podFailurePolicy"]["rules"][0]["action"] == "Ignore"
    assert job["template"]["spec"]["restartPolicy"] == "Never"


def test_crd_validation_catches_mistakes():
    """The helper is strict: a typo'd field, a wrong enum and a wrong type are each reported."""
    bad = {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": "x"},
        "spec": {"cohortName": "c", "preemption": {"withinClusterQueue": "Always"}, "queueingStrategy": 3, "cohrt": "c"},
    }
    errors = "\n".join(validate_cr(bad))
    assert "'cohrt' was unexpected" in errors
    assert "'Always' is not one of" in errors
    assert "3 is not of type 'string'" in errors
    assert validate_cr({**bad, "apiVersion": "kueue.x-k8s.io/v9"}) == [
        "apiVersion: kueue.x-k8s.io/v9 is not served by the CRD (served: v1beta1, v1beta2)"
    ]


def test_keda_crd_has_its_release_patches_applied():
    """KEDA's release caps stabilizationWindowSeconds at 3600 (kustomize patch): the raw CRD does not."""
    obj = yaml.safe_load((ROOT / "examples/inference-keda-scaledobject.yaml").read_text().split("---")[-1])
    obj["spec"]["advanced"]["horizontalPodAutoscalerConfig"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"] = 7200
    assert any("7200 is greater than the maximum of 3600" in e for e in validate_cr(obj))


REFERENCE_TAGS = {"kueue": versions.KUEUE, "jobset": versions.JOBSET, "trainer": versions.KUBEFLOW_TRAINER,
                  "volcano": versions.VOLCANO, "keda": versions.KEDA}


@pytest.mark.parametrize("folder", sorted(REFERENCE_TAGS))
def test_reference_crds_are_from_the_pinned_release(reference, folder):
    """The CRD copies must come from the release we install; otherwise the checks above test the wrong schema."""
    rows = [line.split("|") for line in (reference / "crds" / "SOURCES.md").read_text().splitlines() if line.startswith(f"| {folder}/")]
    tags = {row[3].strip() for row in rows}
    assert len(tags) == 1, tags
    (tag,) = tags
    pinned = REFERENCE_TAGS[folder]
    assert tag.lstrip("v") == pinned.app_version.lstrip("v"), (
        f"the reference CRDs for {folder} are from {tag}, but gpufleet/base/versions.py pins {pinned.name} "
        f"{pinned.app_version} (chart {pinned.version}): refresh ../shared/reference/crds/{folder} from the pinned tag"
    )
