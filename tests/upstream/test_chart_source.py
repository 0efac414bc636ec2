"""gpufleet:registry.charts (issue 37, "charts from an OCI registry mirror or from files"): every Helm release takes
its pinned chart from the stack's OCI registry or directory, a file is checked against the sha256 its pin records,
and `gpufleet images` / `gpufleet charts fetch --stack` name each chart with where it comes from.

The directory case is rendered with the real helm from the very path the Release names (the reference archives,
linked into a temporary directory), so Helm can read what gpufleet hands it.
"""

from __future__ import annotations

import json

import pulumi
import pytest

from gpufleet.app import charts_fetch
from gpufleet.app import images as listing
from gpufleet.base import versions
from gpufleet.components.helm_chart import local_chart
from tests.helm import template
from tests.helpers import CHARTS, REFERENCE, by_type, example_config, plan_config, planned, spec_problems
from tests.upstream.test_chart_renders import API_VERSIONS, releases

RELEASE = "kubernetes:helm.sh/v3:Release"
OCI = "oci://registry.example.internal:5000/charts"


def _pins() -> dict[str, versions.HelmChart]:
    return {v.name: v for v in vars(versions).values() if isinstance(v, versions.HelmChart)}


def _with_charts(source: str, stack: str = "airgap-k3s") -> dict:
    config = example_config(stack)
    config["gpufleet:registry"]["charts"] = source
    return config


def test_every_release_pulls_its_pinned_chart_from_the_oci_registry():
    plan = plan_config(_with_charts(OCI), "charts-oci", policies=False)
    found = by_type(plan, RELEASE)
    assert len(found) == len(by_type(planned("airgap-k3s"), RELEASE)) == 6
    pins = _pins()
    for r in found:
        version = r.inputs["version"]
        name = versions.chart_name_of(r.inputs["chart"], version)
        assert r.inputs["chart"] == f"{OCI}/{name}" and version == pins[name].version
        assert "repositoryOpts" not in r.inputs


def test_eks_platform_charts_follow_the_source_too():
    config = example_config("airgap-eks")
    config["gpufleet:registry"]["charts"] = OCI + "/"
    found = by_type(plan_config(config, "charts-eks", policies=False), RELEASE)
    assert {r.inputs["chart"] for r in found} == {f"{OCI}/gpu-operator", f"{OCI}/cluster-autoscaler",
                                                  f"{OCI}/aws-efa-k8s-device-plugin", f"{OCI}/kube-prometheus-stack"}


@pytest.mark.parametrize("bad", ["oci://Registry.example/charts", "charts", "/srv/../etc", "/srv/charts;rm -rf /",
                                 "https://charts.example.internal", "/srv/$(id)"])
def test_a_chart_source_is_shape_checked(bad):
    problems = spec_problems(_with_charts(bad))
    assert len(problems) == 1 and "gpufleet:registry.charts" in problems[0] and repr(bad) in problems[0]


@pytest.fixture()
def chart_dir(tmp_path, reference):
    """A chart directory with the reference archives linked in under the names Helm saves them by."""
    if not CHARTS.is_dir():
        pytest.skip(f"no chart archives under {REFERENCE}")
    for archive in CHARTS.glob("*.tgz"):
        (tmp_path / archive.name).symlink_to(archive)
    return tmp_path


def test_a_file_that_is_not_the_published_archive_is_refused(chart_dir):
    """The reference keda and kube-prometheus-stack archives are `helm package` builds of the tags, not the
    published files (../shared/reference/charts/SOURCES.md): their sha256 differ from the pins', and the stack is
    refused naming the key, the file and both digests."""
    problems = spec_problems(_with_charts(str(chart_dir)))
    keda = [p for p in problems if "keda-2.20.2.tgz" in p]
    assert len(keda) == 1 and "gpufleet:registry.charts" in keda[0] and versions.KEDA.digest in keda[0]
    assert all("gpufleet:registry.charts" in p for p in problems)


def test_files_with_the_pinned_digest_are_accepted_and_rendered_from_the_path_the_release_names(chart_dir):
    """Only the archives whose bytes are the published ones (or whose pin records no digest) stay in the directory;
    the plan passes, each release names its file there, and the real helm renders it with no image outside the
    mirror."""
    pins = _pins()
    for path in list(chart_dir.iterdir()):
        pin = next((p for p in pins.values() if path.name in versions.archive_file_names(p)), None)
        if pin is not None and pin.digest and charts_fetch.sha256_of(path.read_bytes()) != pin.digest:
            path.unlink()
    config = _with_charts(str(chart_dir))
    config["gpufleet:addons"]["keda"] = {"enabled": False}  # its reference archive is not the published file
    plan = plan_config(config, "charts-dir", policies=False)
    mirror = plan.spec.registry.mirror
    rendered = 0
    for name, version, release, namespace, values in releases(plan):
        r = next(r for r in by_type(plan, RELEASE) if r.inputs["name"] == release)
        path = chart_dir / versions.archive_file_names(pins[name])[0]
        assert r.inputs["chart"] == str(path)
        if not path.exists():
            continue  # (a chart whose reference archive is not the published file)
        objs = template(path, values, namespace, release=release, kube_version=plan.spec.cluster.kubernetes_version,
                        api_versions=API_VERSIONS)
        assert {i for o in objs for i in listing.referenced_images(o) if not i.startswith(mirror + "/")} == set()
        rendered += 1
    assert rendered >= 3  # gpu-operator, jobset, kueue and csi-driver-nfs have no digest or the published one


def test_the_component_checks_the_file_again_when_helm_is_given_it(tmp_path):
    pin = versions.CSI_DRIVER_NFS
    assert pin.digest
    (tmp_path / f"{pin.name}-{pin.version}.tgz").write_bytes(b"not the chart")
    with pytest.raises(pulumi.RunError, match="gpufleet:registry.charts: .* has sha256 .* pinned to " + pin.digest):
        local_chart(pin, str(tmp_path))
    assert local_chart(versions.GPU_OPERATOR, str(tmp_path)) == str(tmp_path / f"gpu-operator-{versions.GPU_OPERATOR.version}.tgz")


def test_gpufleet_images_names_each_chart_where_it_comes_from_and_its_digest():
    plan = plan_config(_with_charts(OCI), "charts-oci", policies=False)
    found = json.loads(listing.dumps(listing.image_list(plan)))
    charts = [d for d in found["downloads"] if d["kind"] == "chart"]
    assert {d["url"] for d in charts} == {r.inputs["chart"] for r in by_type(plan, RELEASE)}
    pins = _pins()
    for d in charts:
        pin = pins[d["name"]]
        assert d["sha256"] == pin.digest and d["origin"] == listing.public_chart_location(pin, d["name"])
    text = listing.text(listing.image_list(plan))
    assert f"chart keda {versions.KEDA.version} {OCI}/keda {versions.KEDA.digest}  # from {versions.KEDA.archive}" in text


def test_charts_fetch_stack_lists_every_chart_the_stack_installs():
    plan = plan_config(_with_charts(OCI), "charts-oci", policies=False)
    fetched = charts_fetch.stack_charts(plan)
    assert sorted((p.chart.name, p.chart.version) for p in fetched) == sorted(
        (versions.chart_name_of(r.inputs["chart"], r.inputs["version"]), r.inputs["version"]) for r in by_type(plan, RELEASE))
    assert all(getattr(versions, p.name) == p.chart for p in fetched)
