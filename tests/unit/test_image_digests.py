"""gpufleet:images.pinDigests (issue 31): the catalog's digests carry sources, a stack whose images lack one is refused
with exit 2 naming the stack, the key and the image, and the spec's list of images follows what the plan installs."""

from __future__ import annotations

import re

import pytest
import yaml

from gpufleet.app.cli import main
from gpufleet.base.catalog import images
from gpufleet.base.spec.features import image_checks
from gpufleet.base.versions import chart_name_of
from tests.helpers import REFERENCE, STACKS, by_type, example_config, load_config, planned, spec_problems

RELEASE = "kubernetes:helm.sh/v3:Release"
KEY = "gpufleet:images.pinDigests"


def test_every_recorded_digest_is_a_sha256_with_a_source():
    assert images.digests()
    for ref, d in images.digests().items():
        assert re.fullmatch(r"sha256:[0-9a-f]{64}", d.digest), ref
        assert len(d.source) > 20, ref
        assert re.fullmatch(r"[a-z0-9.-]+(/[a-z0-9._-]+)+:[A-Za-z0-9._-]+", ref), ref


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


def test_a_stack_with_an_image_without_digest_is_refused_naming_key_and_image():
    cfg = example_config("dev")
    cfg["gpufleet:images"] = {"pinDigests": True}
    problems = spec_problems(cfg, "dev")
    nfd = "registry.k8s.io/nfd/node-feature-discovery:v0.19.0"
    assert any(p.startswith(f"stack 'dev': {KEY}: no recorded digest for image {nfd} ") for p in problems), problems
    assert not any("nvcr.io/nvidia/gpu-operator:v26.7.0" in p for p in problems)  # issue 48: recorded
    # Images that have a digest are not named.
    assert not any("container-toolkit" in p for p in problems)


def test_an_operator_release_without_an_image_list_is_refused():
    cfg = example_config("dev")
    cfg["gpufleet:images"] = {"pinDigests": True}
    cfg["gpufleet:gpuOperator"]["version"] = "v26.3.3"
    problems = spec_problems(cfg, "dev")
    assert any("does not list the images of chart gpu-operator v26.3.3" in p for p in problems), problems


def test_refusal_exits_2_without_traceback(tmp_path, capsys):
    cfg = example_config("dev")
    cfg["gpufleet:images"] = {"pinDigests": True}
    path = tmp_path / "Pulumi.pinned.yaml"
    path.write_text(yaml.safe_dump({"config": cfg}))
    assert main(["plan", "pinned", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"stack 'pinned': {KEY}: no recorded digest for image registry.k8s.io/nfd/node-feature-discovery:v0.19.0" in err
    assert "Traceback" not in err


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


def test_a_chart_whose_component_writes_no_digests_stays_refused_with_every_digest_recorded(monkeypatch):
    """The Network Operator's component does not write digests yet: recording the two missing ones must not let its
    images run by tag under pinDigests (the digests here are synthetic, for this test only)."""
    real = images.digests()
    fake = images.Digest("sha256:" + "5e" * 32, "synthetic, tests only")
    extra = {f"nvcr.io/nvidia/mellanox/{n}:network-operator-v26.4.1": fake for n in ("multus-cni", "plugins")}
    monkeypatch.setattr(images, "digests", lambda: {**real, **extra})
    cfg = example_config("lab")
    cfg["gpufleet:images"] = {"pinDigests": True}
    problems = spec_problems(cfg, "lab")
    assert f"stack 'lab': {KEY}: gpufleet does not yet write image digests into chart network-operator v26.4.1: " \
           "set pinDigests false" in problems
    assert not any("multus-cni" in p for p in problems)


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
