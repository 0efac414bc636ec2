"""Component tests: GpuOperator's namespace and Helm release, and GpuCluster's composition."""

import pytest

from gpufleet.base import catalog, versions
from tests.helpers import one, parent_of, planned

RELEASE = "kubernetes:helm.sh/v3:Release"


@pytest.fixture(scope="module")
def dev():
    return planned("dev")


@pytest.fixture(scope="module")
def ha():
    return planned("ha")


def test_release_pinned_in_its_namespace_on_the_cluster_provider(dev):
    component = one(dev, "gpufleet:addons:GpuOperator", "dev-gpu-operator")
    assert parent_of(dev, component).name == "dev"
    ns = one(dev, "kubernetes:core/v1:Namespace", "dev-gpu-operator-ns")
    release = one(dev, RELEASE, "dev-gpu-operator-release")
    assert ns.parent == component.urn and release.parent == component.urn
    assert ns.inputs["metadata"] == {
        "name": "gpu-operator",
        "labels": {"pod-security.kubernetes.io/enforce": "privileged"},
        # What the policy pack reads for driver/CUDA alignment (gpu-driver-cuda-alignment).
        "annotations": {"gpufleet.io/cuda-versions": "12.8"},
    }
    assert release.inputs["chart"] == "gpu-operator"
    assert release.inputs["version"] == versions.GPU_OPERATOR.version
    assert release.inputs["repositoryOpts"] == {"repo": versions.GPU_OPERATOR.repo}
    assert release.inputs["namespace"] == "gpu-operator"
    provider = one(dev, "pulumi:providers:kubernetes")
    assert release.provider.startswith(provider.urn) and ns.provider.startswith(provider.urn)


def test_operator_managed_driver_and_k3s_containerd(dev):
    values = one(dev, RELEASE).inputs["values"]
    assert values["driver"] == {
        "enabled": True, "version": catalog.operator_release(versions.GPU_OPERATOR.version).default_driver,
        # Issue 51: a driver change rolls one node at a time, waits up to 24 h for JobSet pods, then finishes.
        "upgradePolicy": {
            "autoUpgrade": True, "maxParallelUpgrades": 1, "maxUnavailable": 1,
            "waitForCompletion": {"podSelector": "jobset.sigs.k8s.io/jobset-name", "timeoutSeconds": 86400},
            "gpuPodDeletion": {"force": True, "timeoutSeconds": 900, "deleteEmptyDir": True},
            "drain": {"enable": False, "force": False, "timeoutSeconds": 900, "deleteEmptyDir": True},
        },
    }
    env = {e["name"]: e["value"] for e in values["toolkit"]["env"]}
    assert env == {
        "CONTAINERD_CONFIG": "/var/lib/rancher/k3s/agent/etc/containerd/config.toml",
        "CONTAINERD_SOCKET": "/run/k3s/containerd/containerd.sock",
        "CONTAINERD_RUNTIME_CLASS": "nvidia",
        "CONTAINERD_SET_AS_DEFAULT": "true",
    }
    assert values["toolkit"]["enabled"] and values["dcgmExporter"]["enabled"] and values["nfd"]["enabled"]
    gpu_toleration = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    assert values["daemonsets"]["tolerations"] == [gpu_toleration]
    assert gpu_toleration in values["node-feature-discovery"]["worker"]["tolerations"]


def test_preinstalled_driver_is_not_installed_again(ha):
    assert one(ha, RELEASE).inputs["values"]["driver"] == {"enabled": False}


def test_release_waits_for_the_nodes(dev):
    """The chart goes on after the GPU agents joined (GpuCluster passes them as `ready`)."""
    release = one(dev, RELEASE)
    waits_for = {r.name for r in dev.resources if r.urn in release.dependencies}
    assert {
        "dev-k3s-server-cp-1", "dev-k3s-agent-cpu-1", "dev-pool-l4-agent-gpu-l4-1", "dev-pool-a100-agent-gpu-a100-1",
    } <= waits_for


def test_operator_can_be_disabled():
    from tests.helpers import example_config, plan_config

    # On EKS Bottlerocket NVIDIA AMIs, whose device plugin is built in (on k3s the spec refuses it: nothing would
    # advertise the GPUs).
    config = example_config("ai-on-eks")
    config["gpufleet:gpuOperator"] = {"enabled": False}
    p = plan_config(config, stack="ai-on-eks", policies=False)
    assert [r for r in p.resources if r.type == RELEASE and r.inputs.get("chart") == "gpu-operator"] == []
    assert [r for r in p.resources if r.type == RELEASE]  # the cluster's other charts are still there
