"""With gpufleet:images.pinDigests on, each chart gpufleet pins renders every image that has a recorded digest by that
digest, with the real chart archive (../shared/reference/charts) and a real helm (issues 31, 48): the GPU Operator
(its Deployment, NFD's pods and the ClusterPolicy's operand blocks), the Network Operator (its Deployment and the DOCA
init container it passes to the driver pods), the cluster autoscaler and the AMD GPU Operator's controller. An image
without a recorded digest (NFD v0.19.0) renders on its tag."""

from __future__ import annotations

import copy

import pytest

from gpufleet.base import versions
from gpufleet.base.catalog import images
from tests.helpers import REFERENCE, by_type, example_config, plan_config

RELEASE = "kubernetes:helm.sh/v3:Release"
NFD = "registry.k8s.io/nfd/node-feature-discovery:v0.19.0"


def _render(stack: str, chart: versions.HelmChart, release: str) -> list[dict]:
    archive = REFERENCE / "charts" / f"{chart.name}-{chart.version}.tgz"
    if not archive.exists():  # the Network Operator's package drops the tag's "v"
        archive = REFERENCE / "charts" / f"{chart.name}-{chart.version.removeprefix('v')}.tgz"
    if not archive.exists():
        pytest.skip(f"{archive} absent")
    from tests.helm import template

    cfg = copy.deepcopy(example_config(stack))
    cfg["gpufleet:images"] = {"pinDigests": True}
    p = plan_config(cfg, stack, policies=False)
    (found,) = [r for r in by_type(p, RELEASE) if r.inputs["name"] == release]
    return template(archive, found.revealed["values"], release, release=release, kube_version="1.35")


def _pods(objs: list[dict]) -> list[dict]:
    return [o["spec"]["template"]["spec"] for o in objs if o.get("kind") in ("Deployment", "DaemonSet", "Job")]


def _containers(objs: list[dict]) -> list[dict]:
    return [c for pod in _pods(objs) for c in pod.get("containers", []) + pod.get("initContainers", [])]


def _pinned(ref: str) -> str:
    return f"{ref}@{images.digest(ref)}"


def test_rendered_gpu_operator_names_every_image_with_a_digest_by_it():
    # An EKS stack with Karpenter: the AMI's driver, no operator driver.
    objs = _render("karpenter-eks", versions.GPU_OPERATOR, "gpu-operator")
    pods = [c["image"] for c in _containers(objs)]
    assert _pinned("nvcr.io/nvidia/gpu-operator:v26.7.0") in pods
    assert NFD in pods  # no trusted digest: its tag, named in a plan warning
    assert all("@sha256:" in image for image in pods if image != NFD), pods
    (policy,) = [o for o in objs if o.get("kind") == "ClusterPolicy"]
    spec = policy["spec"]
    assert spec["toolkit"]["version"] == "v1.20.0@" + images.digest("nvcr.io/nvidia/k8s/container-toolkit:v1.20.0")
    for name in ("validator", "devicePlugin", "gfd", "dcgmExporter", "migManager", "ccManager", "sandboxDevicePlugin",
                 "vgpuDeviceManager", "nodeStatusExporter"):
        assert "@sha256:" in str(spec[name]["version"]), (name, spec[name])


def test_rendered_network_operator_runs_its_operator_and_passes_the_init_container_by_digest():
    objs = _render("lab", versions.NETWORK_OPERATOR, "network-operator")
    (operator,) = [c for c in _containers(objs) if c["name"] == "network-operator"]
    assert operator["image"] == _pinned("nvcr.io/nvidia/cloud-native/network-operator:v26.4.1")
    env = {e["name"]: e.get("value") for e in operator.get("env", [])}
    assert env["OFED_INIT_CONTAINER_IMAGE"] == _pinned(
        "nvcr.io/nvidia/mellanox/network-operator-init-container:network-operator-v26.4.1")


def test_rendered_cluster_autoscaler_and_amd_operator_run_by_digest():
    autoscaler = _render("prod-eks", versions.CLUSTER_AUTOSCALER, "cluster-autoscaler")
    assert [c["image"] for c in _containers(autoscaler)] == [
        _pinned("registry.k8s.io/autoscaling/cluster-autoscaler:v1.35.2")]
    amd = _render("amd-lab", versions.AMD_GPU_OPERATOR, "gpu-operator-charts")
    assert _pinned("docker.io/rocm/gpu-operator:v1.5.1") in [c["image"] for c in _containers(amd)]
