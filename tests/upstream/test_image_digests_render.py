"""With gpufleet:images.pinDigests on, the GPU Operator chart (../shared/reference/charts/gpu-operator-v26.7.0.tgz,
rendered by a real helm) names every image it runs by digest: its own Deployment and NFD's pods directly, the operands
through the ClusterPolicy's repository/image/version blocks (issue 31).

The catalog has no public source for the operator's and NFD's digests (gpufleet/base/catalog/images.yaml), so the
real spec refuses such a stack; this test adds a clearly synthetic digest for those two to reach the rendering."""

from __future__ import annotations

import copy

import pytest

from gpufleet.base.catalog import images
from gpufleet.base.versions import GPU_OPERATOR
from tests.helpers import REFERENCE, by_type, example_config, plan_config

# Not a real digest: only the test's plan uses it, to render a chart whose real digests have no source yet.
SYNTHETIC = images.Digest("sha256:" + "5e" * 32, "synthetic, tests only")
CHART = REFERENCE / "charts" / f"gpu-operator-{GPU_OPERATOR.version}.tgz"
RELEASE = "kubernetes:helm.sh/v3:Release"


@pytest.fixture
def with_synthetic_digests(monkeypatch):
    real = images.digests()
    missing = {ref for slot in images.chart_images("gpu-operator", GPU_OPERATOR.version)
               if (ref := slot.image) not in real and "{" not in ref}
    assert missing == {"registry.k8s.io/nfd/node-feature-discovery:v0.19.0"}  # the operator's: recorded (issue 48)
    monkeypatch.setattr(images, "digests", lambda: {**real, **{ref: SYNTHETIC for ref in missing}})


def _values(stack: str) -> dict:
    cfg = copy.deepcopy(example_config(stack))
    cfg["gpufleet:images"] = {"pinDigests": True}
    p = plan_config(cfg, stack, policies=False)
    (release,) = [r for r in by_type(p, RELEASE) if r.inputs["name"] == "gpu-operator"]
    return release.revealed["values"]


def _images(objs: list[dict]) -> list[str]:
    out = []
    for obj in objs:
        pod = obj.get("spec", {}).get("template", {}).get("spec", {})
        out += [c["image"] for c in pod.get("containers", []) + pod.get("initContainers", [])]
    return out


def test_rendered_gpu_operator_names_every_image_by_digest(with_synthetic_digests):
    # An EKS stack with Karpenter (whose chart pins its controller by digest itself): the AMI's driver, no operator
    # driver (its image tag carries the node's OS, so gpufleet records no digest for it and refuses pinning).
    stack = "karpenter-eks"
    if not CHART.exists():
        pytest.skip(f"{CHART} absent")
    from tests.helm import template

    values = _values(stack)
    objs = template(CHART, values, "gpu-operator", release="gpu-operator", kube_version="1.35")
    pods = _images([o for o in objs if o.get("kind") in ("Deployment", "DaemonSet", "Job")])
    assert pods and all("@sha256:" in image for image in pods), pods
    (policy,) = [o for o in objs if o.get("kind") == "ClusterPolicy"]
    spec = policy["spec"]
    blocks = {"validator", "toolkit", "devicePlugin", "gfd", "dcgmExporter", "migManager"}
    if spec["driver"].get("enabled"):
        blocks |= {"driver"}
    for name in sorted(blocks):
        assert "@sha256:" in str(spec[name]["version"]), (name, spec[name])
