"""Real-chart tests of gpufleet:registry.mirror (issue 37): with a mirror set, every Helm release of the air-gapped
example stacks, rendered by a real helm with the pinned chart (../shared/reference/charts/) and the values gpufleet
passes, references no image outside the mirror, and `gpufleet images` lists exactly the images the render references.

Images are collected two ways, so a miss in one shows in the other: the fields that name images (`image:` strings of
pods and custom resources, the repository/image/version triplets of NVIDIA's custom resources, images passed in env
values; gpufleet.app.images.referenced_images), and every string anywhere in the render that starts with a public
registry host.
"""

from __future__ import annotations

import re

import pytest

from gpufleet.app import images as listing
from tests.helm import template
from tests.helpers import CHARTS, REFERENCE, example_config, plan_config
from tests.helpers import planned as _planned
from tests.upstream.test_chart_renders import API_VERSIONS, archive, releases

STACKS = ("airgap-k3s", "airgap-eks", "airgap-eks-karpenter")


def _variant(stack: str) -> dict:
    """Unusual-valid variants of the example stacks, for charts the examples do not install: airgap-eks with
    Karpenter (and so a NAT: Karpenter without one is refused, gpufleet/base/spec/registry_checks.py)."""
    config = example_config("airgap-eks")
    config["gpufleet:cluster"]["eks"]["network"].pop("egress")
    config["gpufleet:cluster"]["eks"]["autoscaler"] = {"kind": "karpenter"}
    for pool in config["gpufleet:nodePools"]:
        pool["minNodes"] = 0  # a Karpenter NodePool has no minimum
        pool.pop("exemptions", None)
    return config


_VARIANT_PLANS: dict = {}


def planned(stack: str):
    if stack in ("airgap-k3s", "airgap-eks"):
        return _planned(stack)
    if stack not in _VARIANT_PLANS:
        _VARIANT_PLANS[stack] = plan_config(_variant(stack), stack, policies=False)
    return _VARIANT_PLANS[stack]
PUBLIC = ("nvcr.io/", "registry.k8s.io/", "ghcr.io/", "docker.io/", "quay.io/", "public.ecr.aws/", "gcr.io/",
          "602401143452.dkr.ecr.")


@pytest.fixture(autouse=True)
def _charts(reference):
    if not CHARTS.is_dir():
        pytest.skip(f"no chart archives under {REFERENCE}")


def _strings(node):
    if isinstance(node, dict):
        for value in node.values():
            yield from _strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from _strings(value)
    elif isinstance(node, str):
        yield node


def _renders(plan):
    out = {}
    for name, version, release, namespace, values in releases(plan):
        chart = archive(name, version)
        assert chart is not None, f"{name} {version}: no reference archive"
        out[(name, version)] = template(chart, values, namespace, release=release,
                                        kube_version=plan.spec.cluster.kubernetes_version, api_versions=API_VERSIONS)
    return out


@pytest.mark.parametrize("stack", STACKS)
def test_no_rendered_image_is_outside_the_mirror(stack):
    plan = planned(stack)
    mirror = plan.spec.registry.mirror
    assert mirror
    for (name, version), objs in _renders(plan).items():
        referenced = {i for o in objs for i in listing.referenced_images(o)}
        assert referenced, f"{name}: no image found in its render"
        outside = sorted(i for i in referenced if not i.startswith(mirror + "/"))
        assert outside == [], f"{name} {version}: images outside the mirror"
        public = sorted({s for o in objs for s in _strings(o) if s.startswith(PUBLIC)})
        assert public == [], f"{name} {version}: public registry strings left in the render"
    # The objects gpufleet writes itself (DaemonSets, custom resources; the k3s stack's node-problem-detector).
    own = [i for r in plan.resources if r.type.startswith("kubernetes:") and r.type != listing.RELEASE
           for i in listing.referenced_images(r.revealed)]
    assert all(i.startswith(mirror + "/") for i in own), own
    assert bool(own) == (plan.spec.cluster.platform == "k3s")


@pytest.mark.parametrize("stack", STACKS)
def test_gpufleet_images_lists_exactly_what_the_render_references(stack):
    plan = planned(stack)
    found = listing.image_list(plan)
    assert found.unlisted == []
    for (name, version), objs in _renders(plan).items():
        rendered = {i for o in objs for i in listing.referenced_images(o)}
        listed = {i.pull for i in found.images if i.used_by == f"chart {name} {version}"}
        assert listed == rendered, (name, sorted(listed ^ rendered))
    own = {i for r in plan.resources if r.type.startswith("kubernetes:") and r.type != listing.RELEASE
           for i in listing.referenced_images(r.revealed)}
    assert own <= {i.pull for i in found.images}
    # Each listed pull is the mirror's copy of its source.
    assert all(i.pull == f"{plan.spec.registry.mirror}/{i.source}" for i in found.images)


def test_without_a_mirror_the_list_names_the_public_images():
    """The same list without a mirror: what a mirroring tool reads to fill one (pull == source)."""
    config = example_config("airgap-eks")
    del config["gpufleet:registry"]
    del config["gpufleet:cluster"]["eks"]["network"]["egress"]  # without a mirror, nodes need a NAT
    found = listing.image_list(plan_config(config, "airgap-eks-public", policies=False))
    assert found.images and all(i.pull == i.source and i.source.startswith(PUBLIC) for i in found.images)


def test_the_check_bites():
    """A render with an image left outside the mirror is caught (the GPU Operator without gpufleet's mirror values)."""
    plan = planned("airgap-k3s")
    ((name, version, release, namespace, values),) = [r for r in releases(plan) if r[0] == "gpu-operator"]
    values = dict(values)
    values["toolkit"] = {**values["toolkit"], "repository": "nvcr.io/nvidia/k8s"}
    objs = template(archive(name, version), values, namespace, release=release, kube_version="1.35")
    referenced = {i for o in objs for i in listing.referenced_images(o)}
    assert any(re.match(r"^nvcr\.io/nvidia/k8s/container-toolkit:", i) for i in referenced)
