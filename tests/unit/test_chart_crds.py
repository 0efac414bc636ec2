"""CRDs move with their charts (issue 51, docs/upgrades.md): for every pin whose CRDs gpufleet applies, the CRDs of the
pinned archive are registered as their own resources, before the release, which skips its crds/; every pin's mode
matches what its archive holds."""

from __future__ import annotations

import re
import tarfile

import pytest

from gpufleet.base import chart_crds, versions
from gpufleet.components.chart_crds import PATCH_FORCE, crd_folders, force_annotated
from tests.helpers import CHARTS, plan_config, small_operator_stack

PINS = {k: v for k, v in vars(versions).items() if isinstance(v, versions.HelmChart)}
GROUP = "kubernetes:yaml/v2:ConfigGroup"
RELEASE = "kubernetes:helm.sh/v3:Release"
# A chart's own crds/ or a (nested) subchart's: the folders Helm installs CRDs from (helm/helm pkg/chart Chart.CRDObjects).
_CRDS_ROOT = re.compile(r"^[^/]+((?:/charts/[^/]+)*)/crds/")


def _archive(pin: versions.HelmChart):
    found = chart_crds.find_archive(pin, CHARTS)
    if found is None:
        pytest.skip(f"{pin.name}-{pin.version}.tgz is not in {CHARTS} (../shared/reference/charts)")
    return found


def _crds_folders(pin) -> dict[str, set[str]]:
    """crds/ folder (below the top folder) -> the folders its YAML files are in."""
    out: dict[str, set[str]] = {}
    with tarfile.open(_archive(pin)) as tar:
        for name in tar.getnames():
            m = _CRDS_ROOT.match(name)
            if m and name.endswith((".yaml", ".yml")):
                out.setdefault(f"{m.group(1).lstrip('/')}/crds".lstrip("/"), set()).add(name.rpartition("/")[0])
    return out


@pytest.mark.parametrize("constant", sorted(PINS))
def test_every_pin_says_how_its_crds_move_and_the_archive_agrees(constant):
    pin = PINS[constant]
    folders = _crds_folders(pin)
    if pin.crds == versions.CRDS_APPLY:
        # Every YAML file of every crds/ folder is read (read_crds reads the files directly in each crd_dirs folder)
        # or left out by name (crds_left, each with its reason beside the pin).
        with tarfile.open(_archive(pin)) as tar:
            files = {n.removeprefix(f"{pin.name}/") for n in tar.getnames()
                     if _CRDS_ROOT.match(n) and n.endswith((".yaml", ".yml"))}
        read = {f for f in files if f.rpartition("/")[0] in {d.path for d in pin.crd_dirs}}
        assert files - read == set(pin.crds_left), (constant, sorted(files - read))
        assert all(any(d.path.startswith(root) for root in folders) for d in pin.crd_dirs), constant
    elif pin.crds == versions.CRDS_TEMPLATES:
        assert not folders, constant
        with tarfile.open(_archive(pin)) as tar:
            names = tar.getnames()
        for d in pin.crd_dirs:
            assert any(n.startswith(f"{pin.name}/{d.path}/") and n.endswith(".yaml") for n in names), (constant, d)
    elif pin.crds == versions.CRDS_INSTALL_ONLY:
        assert folders and not pin.crd_dirs, constant
    else:
        assert not folders and not pin.crd_dirs, (constant, folders)


def test_the_templated_and_crd_free_pins_are_the_ones_named():
    assert {k for k, v in PINS.items() if v.crds == versions.CRDS_TEMPLATES} == {"KUEUE", "VOLCANO", "KEDA"}
    assert {k for k, v in PINS.items() if v.crds == versions.CRDS_INSTALL_ONLY} == set()
    assert {k for k, v in PINS.items() if v.crds_left} == {"ENVOY_GATEWAY"}


def test_a_subchart_s_crds_follow_its_condition():
    op = versions.GPU_OPERATOR
    assert crd_folders(op, {"nfd": {"enabled": True}}) == ("gpu-operator/crds", "gpu-operator/charts/node-feature-discovery/crds")
    assert crd_folders(op, {"nfd": {"enabled": False}}) == ("gpu-operator/crds",)
    trainer = versions.KUBEFLOW_TRAINER
    assert crd_folders(trainer, {}) == ("kubeflow-trainer/charts/jobset/crds",)  # jobset.install defaults to true
    assert crd_folders(trainer, {"jobset": {"install": False}}) == ()


def _groups(p) -> dict:
    return {r.name: r for r in p.resources if r.type == GROUP}


def _crd_names(group) -> list[str]:
    return sorted(d["metadata"]["name"] for d in chart_crds.crd_documents(group.inputs["yaml"]))


def test_crds_are_applied_from_the_archive_before_a_release_that_skips_them():
    _archive(versions.JOBSET)
    p = plan_config(small_operator_stack(), policies=False)
    groups = _groups(p)
    assert sorted(groups) == ["up-gpu-operator-crds", "up-jobset-crds"]
    assert _crd_names(groups["up-gpu-operator-crds"]) == [
        "clusterpolicies.nvidia.com", "computedomaincliques.resource.nvidia.com", "computedomains.resource.nvidia.com",
        "gpuclusters.nvidia.com", "nodefeaturegroups.nfd.k8s-sigs.io", "nodefeaturerules.nfd.k8s-sigs.io",
        "nodefeatures.nfd.k8s-sigs.io", "nvidiadrivers.nvidia.com",
    ]
    releases = {r.name: r for r in p.resources if r.type == RELEASE}
    jobset, operator, kueue = releases["up-jobset-release"], releases["up-gpu-operator-release"], releases["up-kueue-release"]
    assert jobset.inputs["skipCrds"] is True and operator.inputs["skipCrds"] is True
    assert "skipCrds" not in kueue.inputs  # Kueue templates its CRDs: Helm upgrades them
    assert operator.inputs["values"]["operator"] == {"upgradeCRD": False}
    assert groups["up-jobset-crds"].urn in jobset.dependencies
    assert groups["up-gpu-operator-crds"].urn in operator.dependencies
    js = groups["up-jobset-crds"]
    assert js.parent == next(r.urn for r in p.resources if r.name == "up-jobset" and not r.custom)
    [applied] = chart_crds.crd_documents(js.inputs["yaml"])
    [(_, upstream)] = chart_crds.read_crds(str(_archive(versions.JOBSET)), dirs=("jobset/crds",))
    assert applied["metadata"]["annotations"] == {**upstream["metadata"]["annotations"], PATCH_FORCE: "true"}
    assert applied["spec"] == upstream["spec"]


def test_the_stack_s_own_operator_release_brings_its_own_crds():
    _archive(versions.GPU_OPERATOR)
    p = plan_config(small_operator_stack("v25.10.1"), policies=False)
    assert _crd_names(_groups(p)["up-gpu-operator-crds"]) == [  # v25.10.1 ships no GPUCluster nor ComputeDomain CRDs
        "clusterpolicies.nvidia.com", "nodefeaturegroups.nfd.k8s-sigs.io", "nodefeaturerules.nfd.k8s-sigs.io",
        "nodefeatures.nfd.k8s-sigs.io", "nvidiadrivers.nvidia.com",
    ]


def test_the_annotation_is_added_as_lines_and_anything_but_a_crd_is_refused():
    crd = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: a.b\nspec: {}\n"
    assert force_annotated(crd) == crd.replace("  name: a.b\n", f'  annotations:\n    {PATCH_FORCE}: "true"\n  name: a.b\n')
    with_ann = crd.replace("  name:", "  annotations:\n    x: y\n  name:")
    assert force_annotated("---\n" + with_ann) == "---\n" + with_ann.replace("    x: y\n", f'    {PATCH_FORCE}: "true"\n    x: y\n')
    with pytest.raises(chart_crds.ArchiveRefused, match="is a 'ClusterRoleBinding', not a CustomResourceDefinition"):
        force_annotated(crd.replace("CustomResourceDefinition", "ClusterRoleBinding"), "x/crds/a.yaml")
    with pytest.raises(chart_crds.ArchiveRefused, match="no block metadata"):
        force_annotated(crd.replace("metadata:\n  name: a.b", "metadata: {name: a.b}"))


def test_without_the_archive_the_release_keeps_its_crds_and_the_plan_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUFLEET_CHARTS_DIR", str(tmp_path))
    p = plan_config(small_operator_stack(), policies=False)
    assert not _groups(p)
    jobset = next(r for r in p.resources if r.name == "up-jobset-release")
    assert "skipCrds" not in jobset.inputs
    assert [str(w) for w in p.warnings if "its CRDs are not applied" in w.message] == [
        f"stack 'test': resource up-{name}-release: chart {name} {version}: its CRDs are not applied before the "
        f"release, since the archive is not in {tmp_path} (docs/upgrades.md); the release installs its crds/ itself, "
        "which Helm does on a first install only, never on an upgrade: run `gpufleet charts fetch`, or set "
        "GPUFLEET_CHARTS_DIR to a directory of the pinned chart archives"
        for name, version in (("gpu-operator", versions.GPU_OPERATOR.version), ("jobset", versions.JOBSET.version))
    ]


def test_an_archive_s_crds_are_read_once_per_process_until_the_file_changes(tmp_path):
    """components.chart_crds._annotated_stream: a fleet plan (or the tests) plans many stacks in one process and read
    kube-prometheus-stack's CRDs for each; the stream is kept per archive path, size and mtime, refusals are not."""
    from gpufleet.components import chart_crds as component_crds

    pin = versions.JOBSET
    copy = tmp_path / _archive(pin).name
    copy.write_bytes(_archive(pin).read_bytes())
    folders = crd_folders(pin, {})
    before = component_crds._annotated_stream.cache_info()
    first = component_crds.read_chart_crds(pin, {}, str(tmp_path))
    again = component_crds.read_chart_crds(pin, {}, str(tmp_path))
    after = component_crds._annotated_stream.cache_info()
    assert folders and first == again and PATCH_FORCE in first
    assert (after.misses - before.misses, after.hits - before.hits) == (1, 1)
    copy.write_bytes(b"not a tar archive at all")  # another size: read again, refused every time
    for _ in range(2):
        with pytest.raises(Exception, match="cannot be read"):
            component_crds.read_chart_crds(pin, {}, str(tmp_path))
