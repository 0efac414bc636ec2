"""The platform interface (components/platform.py, docs/platforms.md): every platform folder provides one, GpuCluster
asks it and never branches on a platform's name, and a new platform plugs in with a folder of its own."""

from __future__ import annotations

import ast
import sys
import types

import pulumi
import pulumi_kubernetes as k8s
import pytest

from gpufleet.base import platforms
from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.components.gpu_cluster import GpuCluster, GpuClusterArgs
from gpufleet.components.platform import ClusterContext, Platform, PlatformBuild, platform
from gpufleet.base.spec import load_spec
from gpufleet.testing import run as run_under_mocks
from tests.helpers import ROOT, example

PLATFORMS = platforms.names()


def spec_of(stack: str):
    sf = example(stack)
    return load_spec(sf.stack, sf.config, sf.secret_keys)


def test_the_spec_names_the_platforms_that_have_a_folder():
    folders = sorted(p.parent.name for p in (ROOT / "components").glob("*/platform.py"))
    assert folders == sorted(PLATFORMS) == ["aks", "eks", "existing", "gke", "k3s"]


@pytest.mark.parametrize("name", PLATFORMS)
def test_every_platform_folder_provides_the_interface(name):
    plat = platform(name)
    assert isinstance(plat, Platform) and type(plat) is not Platform
    assert type(plat).build is not Platform.build, f"{name} must build its control plane and pools"
    assert type(plat).__module__ == f"gpufleet.components.{name}.platform"


def test_gpu_cluster_names_no_platform():
    """No platform name, no platform package, no `spec.cluster.platform ==` in the shared composition."""
    source = (ROOT / "components" / "gpu_cluster.py").read_text()
    words = {w.strip("\"'`.,:()[]") for w in source.replace("-", " ").split()}
    assert not words & {"k3s", "eks", "gke", "aks", "K3s", "Eks", "Gke", "amp"}
    tree = ast.parse(source)
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not {m for m in imported if m.split(".")[2:3] and m.split(".")[2] in PLATFORMS}, imported
    compares = [ast.unparse(n) for n in ast.walk(tree) if isinstance(n, ast.Compare) and "platform" in ast.unparse(n)]
    assert compares == []


def test_which_hooks_each_platform_overrides():
    """What differs between the platforms lives in their folders: this is the whole list."""
    hooks = ("gpu_operator_rdma", "addons", "node_problem_detector", "node_health", "observability_after_workloads")
    overridden = {name: {h for h in hooks if getattr(type(platform(name)), h) is not getattr(Platform, h)}
                  for name in PLATFORMS}
    assert overridden == {
        "k3s": {"gpu_operator_rdma", "addons", "node_problem_detector", "node_health"},
        "aks": {"gpu_operator_rdma", "addons"},
        "existing": {"gpu_operator_rdma", "addons"},
        "eks": {"addons"},
        "gke": {"observability_after_workloads"},
    }
    assert [n for n in PLATFORMS if platforms.get(n).scheduling.amd_gpus] == ["k3s"]


class Testbed(Platform):
    """A platform a new folder would add: a control plane and its ClusterAccess, nothing else overridden."""

    def build(self, name, inputs, opts):
        control_plane = pulumi.ComponentResource("testbed:index:Cluster", f"{name}-testbed", None, opts)
        kubeconfig = pulumi.Output.secret("apiVersion: v1\nkind: Config\n")
        provider = k8s.Provider(f"{name}-testbed-k8s", kubeconfig=kubeconfig,
                                opts=pulumi.ResourceOptions(parent=control_plane))
        access = ClusterAccess(name=name, platform="testbed", kubernetes_version="1.34", kubeconfig=kubeconfig,
                               provider=provider)
        return PlatformBuild(control_plane=control_plane, access=access)


def test_a_new_platform_is_a_folder_that_gpu_cluster_finds_and_asks(monkeypatch):
    traits = platforms.PlatformTraits("testbed", platforms.contract.ProgramTraits(
        components="gpufleet.components.testbed.platform", extra="testbed"))
    platforms.register(traits)
    try:
        _plan_testbed(monkeypatch)
    finally:
        platforms.unregister("testbed")


def _plan_testbed(monkeypatch):
    module = types.ModuleType("gpufleet.components.testbed.platform")
    module.PLATFORM = Testbed()
    monkeypatch.setitem(sys.modules, "gpufleet.components.testbed", types.ModuleType("gpufleet.components.testbed"))
    monkeypatch.setitem(sys.modules, "gpufleet.components.testbed.platform", module)
    spec = spec_of("dev")
    spec = spec.model_copy(update={"cluster": spec.cluster.model_copy(update={"platform": "testbed"})})
    assert platform("testbed") is module.PLATFORM
    built = {}

    def program():
        built["cluster"] = GpuCluster("lab1", GpuClusterArgs(spec))

    monitor = run_under_mocks(program, stack="dev")
    by_type = {}
    for r in monitor.registrations:
        by_type.setdefault(r.type, []).append(r)
    (root,) = by_type["gpufleet:index:GpuCluster"]
    (control,) = by_type["testbed:index:Cluster"]
    assert control.parent == root.urn and control.name == "lab1-testbed"
    (operator,) = by_type["gpufleet:addons:GpuOperator"]
    assert operator.parent == root.urn and operator.name == "lab1-gpu-operator"
    # The defaults add nothing: no add-ons, node health or observability of another platform's.
    assert not [t for t in by_type if t.startswith(("gpufleet:k3s", "gpufleet:eks", "gpufleet:gke", "command:"))]
    assert "gpufleet:addons:NetworkOperator" not in by_type
    cluster = built["cluster"]
    assert cluster.addons == {} and cluster.node_health is None and cluster.observability is None
    assert cluster.control_plane is not None and cluster.access.platform == "testbed"


def test_k3s_hooks_build_what_they_name():
    """The k3s platform's hooks against its own stacks (the plans' URNs are pinned by tests/plan_identity.py)."""
    k3s = platform("k3s")
    lab = spec_of("lab")
    assert k3s.gpu_operator_rdma([p for p in lab.node_pools if p.rdma]) is True
    assert k3s.gpu_operator_rdma([p for p in lab.node_pools if not p.rdma]) is False
    dev = spec_of("dev")
    assert k3s.node_problem_detector(dev) is True  # node health on by default, NVIDIA L4 and A100 hosts
    off = dev.observability.model_copy(update={"node_health": dev.observability.node_health.model_copy(
        update={"enabled": False})})
    dev_off = dev.model_copy(update={"observability": off})
    assert k3s.node_problem_detector(dev_off) is False
    assert k3s.node_health(ClusterContext("x", dev_off, None, pulumi.ResourceOptions()), None) is None


def test_the_old_gpu_operator_switch_of_platform_build_warns_and_is_ignored():
    """A platform written for 0.2 still builds; whether the GPU Operator runs is its traits' `addons.own_gpu_stack`."""
    with pytest.warns(DeprecationWarning, match="AddonTraits.own_gpu_stack"):
        built = PlatformBuild(control_plane=None, access=None, install_gpu_operator=False)
    assert built.install_gpu_operator is False and PlatformBuild(None, None).install_gpu_operator is None
