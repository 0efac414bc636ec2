"""gpufleet:images.pinDigests (issues 31, 48): the catalog's digests carry a source and a trusted tier, each equal to
the value ../shared/reference/digests.yaml read; every image the stack runs with one is pinned, each without one stays
on its tag with a plan warning naming it, and the spec's list of images follows what the plan installs."""

from __future__ import annotations

import re

import pytest
import yaml

from gpufleet.app.cli import main
from gpufleet.app.images import image_list
from gpufleet.base.catalog import images
from gpufleet.base.spec.features import image_checks
from gpufleet.base.versions import chart_name_of
from tests.helpers import REFERENCE, STACKS, by_type, example_config, load_config, plan_config, planned, spec_problems

RELEASE = "kubernetes:helm.sh/v3:Release"
KEY = "gpufleet:images.pinDigests"


def test_every_recorded_digest_is_a_sha256_with_a_source_and_a_trusted_tier():
    assert images.digests()
    for ref, d in images.digests().items():
        assert re.fullmatch(r"sha256:[0-9a-f]{64}", d.digest), ref
        assert len(d.source) > 20, ref
        assert d.tier in images.TRUSTED_TIERS, ref
        assert re.fullmatch(r"[a-z0-9.-]+(/[a-z0-9._-]+)+:[A-Za-z0-9._-]+", ref), ref
    for ref, d in images.leads().items():
        assert d.tier in images.LEAD_TIERS and len(d.source) > 20, ref
        assert ref not in images.digests(), ref


def _reference_rows() -> list[dict]:
    path = REFERENCE / "digests.yaml"
    if not path.is_file():
        pytest.skip(f"{path} absent")
    return yaml.safe_load(path.read_text())["images"]


def test_every_recorded_digest_is_the_one_the_reference_read_for_that_repository_and_tag():
    """Each pinned digest is a value ../shared/reference/digests.yaml records for the same repository, at the same tag
    where the source gives one (tagless bundle entries: the tag is the release's, images.yaml says why)."""
    rows = _reference_rows()
    for ref, d in images.digests().items():
        if ref == "public.ecr.aws/karpenter/controller:1.14.1":
            continue  # the chart's own values (test_the_karpenter_digest_is_the_one_its_chart_sets)
        repo, tag = images.split(ref)
        found = [r for r in rows if r["repo"] == repo and r.get("digest") == d.digest]
        assert found, ref
        assert all(r["tag"] in (None, tag) for r in found), (ref, found)
    assert images.digest("registry.k8s.io/autoscaling/cluster-autoscaler:v1.35.2") == (
        "sha256:aac369dc283927a623deb1af54696efcc722ae79255aa07788422e495bab887d")
    assert images.digest("registry.k8s.io/autoscaling/cluster-autoscaler:v1.36.1") is None  # one copy: a lead


def test_every_image_slot_is_well_formed():
    for chart, by_version in images._load("images.yaml")["charts"].items():
        for version, slots in by_version.items():
            for slot in images.chart_images(chart, str(version)):
                assert slot.fields in images.FIELDS, (chart, version, slot)
                assert ":" in slot.image.rsplit("/", 1)[-1], (chart, version, slot.image)


def test_the_karpenter_digest_is_the_one_its_chart_sets():
    values = REFERENCE / "karpenter" / "values-v1.14.1.yaml"
    if not values.exists():
        pytest.skip(f"{values} absent")
    controller = yaml.safe_load(values.read_text())["controller"]["image"]
    ref = f"{controller['repository']}:{controller['tag']}"
    assert images.digest(ref) == controller["digest"]


def test_off_by_default():
    spec = load_config(example_config("dev"), "dev")
    assert spec.images.pin_digests is False


def _pinned_plan(stack: str):
    cfg = example_config(stack)
    cfg["gpufleet:images"] = {"pinDigests": True}
    return plan_config(cfg, stack, policies=False)


def _release_values(p, chart: str) -> dict:
    (release,) = [r for r in by_type(p, RELEASE) if r.inputs["name"] == chart]
    return release.revealed["values"]


def test_an_image_without_a_digest_stays_on_its_tag_named_in_a_plan_warning():
    """dev (k3s, operator driver): NFD v0.19.0 has one third-party copy and the driver's tag no digest, so both stay
    on their tags, each named in a warning; every other image of the chart is pinned and nobody is refused."""
    cfg = example_config("dev")
    cfg["gpufleet:images"] = {"pinDigests": True}
    p = plan_config(cfg, "dev", policies=False)  # plans: not refused
    warned = [str(w) for w in p.warnings if w.path == KEY]
    assert warned == [
        f"stack 'dev': {KEY}: image nvcr.io/nvidia/driver:595.91.07 (chart gpu-operator v26.7.0) runs by its tag: no "
        "digest from a trusted source is recorded (only a tag-not-given lead is); gpufleet/base/catalog/images.yaml",
        f"stack 'dev': {KEY}: image registry.k8s.io/nfd/node-feature-discovery:v0.19.0 (chart gpu-operator v26.7.0) "
        "runs by its tag: no digest from a trusted source is recorded (only a third-party-single lead is); "
        "gpufleet/base/catalog/images.yaml",
    ]
    values = _release_values(p, "gpu-operator")
    assert values["node-feature-discovery"].get("image", {}).get("tag") is None  # the chart's own tag
    assert values["driver"]["version"] == "595.91.07"
    assert values["toolkit"]["version"] == f"v1.20.0@{images.digest('nvcr.io/nvidia/k8s/container-toolkit:v1.20.0')}"
    assert values["operator"]["version"] == f"v26.7.0@{images.digest('nvcr.io/nvidia/gpu-operator:v26.7.0')}"
    # Operands the ClusterPolicy only names are pinned too.
    assert values["ccManager"]["version"].startswith("v0.4.3@sha256:")
    assert not [w for w in planned("dev").warnings if w.path == KEY]  # off: no warning


def test_the_network_operator_its_init_container_and_nic_cluster_policy_are_pinned():
    """lab (k3s, macvlan RDMA): the chart's operator and DOCA init container by digest, the NicClusterPolicy's RDMA
    device plugin and NV-IPAM by digest; Multus and the CNI plugins (no digest: not in the bundle) on their tags."""
    p = _pinned_plan("lab")
    values = _release_values(p, "network-operator")
    d = images.digest
    assert values["operator"]["tag"] == f"v26.4.1@{d('nvcr.io/nvidia/cloud-native/network-operator:v26.4.1')}"
    assert values["operator"]["cniBinDirectory"]  # the k3s paths stay beside the pin
    init = "nvcr.io/nvidia/mellanox/network-operator-init-container:network-operator-v26.4.1"
    assert values["operator"]["ofedDriver"]["initContainer"]["version"] == f"network-operator-v26.4.1@{d(init)}"
    (policy,) = [r for r in p.resources if r.type == "kubernetes:mellanox.com/v1alpha1:NicClusterPolicy"]
    spec = policy.inputs["spec"]
    tag = "network-operator-v26.4.1"
    assert spec["rdmaSharedDevicePlugin"]["version"] == f"{tag}@{d(f'nvcr.io/nvidia/mellanox/k8s-rdma-shared-dev-plugin:{tag}')}"
    assert spec["nvIpam"]["version"] == f"{tag}@{d(f'nvcr.io/nvidia/mellanox/nvidia-k8s-ipam:{tag}')}"
    assert spec["secondaryNetwork"]["multus"]["version"] == tag
    assert spec["secondaryNetwork"]["cniPlugins"]["version"] == tag
    assert {w.message.split(" (")[0] for w in p.warnings if w.path == KEY} >= {
        f"image nvcr.io/nvidia/mellanox/multus-cni:{tag}", f"image nvcr.io/nvidia/mellanox/plugins:{tag}"}
    # `gpufleet images` lists each as it is pulled: by digest where pinned.
    listed = {i.source for i in image_list(p).images}
    assert {f"{init}@{d(init)}", f"nvcr.io/nvidia/mellanox/nvidia-k8s-ipam:{tag}@{d(f'nvcr.io/nvidia/mellanox/nvidia-k8s-ipam:{tag}')}",
            f"nvcr.io/nvidia/mellanox/multus-cni:{tag}"} <= listed


def test_the_cluster_autoscaler_and_the_amd_operator_are_pinned():
    p = _pinned_plan("prod-eks")
    ca = "registry.k8s.io/autoscaling/cluster-autoscaler:v1.35.2"
    assert _release_values(p, "cluster-autoscaler")["image"] == {"repository": images.split(ca)[0],
                                                                  "tag": f"v1.35.2@{images.digest(ca)}"}
    assert f"{ca}@{images.digest(ca)}" in {i.source for i in image_list(p).images}  # `gpufleet images`
    amd = _release_values(_pinned_plan("amd-lab"), "gpu-operator-charts")
    assert amd["controllerManager"]["manager"]["image"] == {
        "repository": "docker.io/rocm/gpu-operator", "tag": f"v1.5.1@{images.digest('docker.io/rocm/gpu-operator:v1.5.1')}"}


def test_an_operator_release_without_an_image_list_is_refused():
    cfg = example_config("dev")
    cfg["gpufleet:images"] = {"pinDigests": True}
    cfg["gpufleet:gpuOperator"]["version"] = "v26.3.3"
    problems = spec_problems(cfg, "dev")
    assert any("does not list the images of chart gpu-operator v26.3.3" in p for p in problems), problems


def test_pinning_plans_with_exit_0_and_the_warning_on_the_output(tmp_path, capsys):
    cfg = example_config("dev")
    cfg["gpufleet:images"] = {"pinDigests": True}
    path = tmp_path / "Pulumi.pinned.yaml"
    path.write_text(yaml.safe_dump({"config": cfg}))
    assert main(["plan", "pinned", "--config", str(path)]) == 0
    out = capsys.readouterr().out
    assert "registry.k8s.io/nfd/node-feature-discovery:v0.19.0 (chart gpu-operator v26.7.0) runs by its tag" in out


@pytest.mark.parametrize("stack", STACKS)
def test_the_check_knows_which_of_these_charts_each_stack_installs(stack):
    """The spec check mirrors the components' rules for the charts whose images gpufleet writes: the releases each
    example stack plans are exactly those."""
    p = planned(stack)
    planned_charts = {(chart_name_of(r.inputs["chart"], r.inputs["version"]), r.inputs["version"])
                      for r in by_type(p, RELEASE)}
    listed = {chart for chart in images._load("images.yaml")["charts"]}
    expected = {(c, v) for c, v in planned_charts if c in listed}
    assert {(c, v) for c, v, _, _ in image_checks.charts_with_images(p.spec)} == expected


def test_a_stack_whose_images_are_all_the_platforms_own_is_refused_rather_than_pinning_nothing():
    # prod-gke runs GKE's own GPU stack: gpufleet writes no image there, so pinDigests would promise nothing.
    cfg = example_config("prod-gke")
    cfg["gpufleet:images"] = {"pinDigests": True}
    assert spec_problems(cfg, "prod-gke") == [
        f"stack 'prod-gke': {KEY}: this stack runs no chart whose images gpufleet writes (its GPU stack's images are the "
        "platform's own), so nothing would be pinned: set pinDigests false (got True)"
    ]


def test_the_gpu_operators_digest_is_the_published_bundles():
    """issue 48: nvcr.io/nvidia/gpu-operator:v26.7.0 as the release's certified bundle gives it
    (../shared/reference/digests.yaml, source rh-nv-26.7.0)."""
    path = REFERENCE / "digests.yaml"
    if not path.is_file():
        pytest.skip(f"{path} absent")
    rows = [r for r in yaml.safe_load(path.read_text())["images"] if r.get("component") == "gpu-operator"]
    assert [(r["repo"], r["tag"], r["source"]) for r in rows] == [("nvcr.io/nvidia/gpu-operator", "v26.7.0", "rh-nv-26.7.0")]
    assert images.digest("nvcr.io/nvidia/gpu-operator:v26.7.0") == rows[0]["digest"]
