"""Component tests (issue 17): AmdGpuOperator's children and their key inputs, the AMD pools' k3s agents, and
GpuCluster running each vendor's operator on its own pools only (mixed and AMD-only clusters)."""

import json

import pytest
import yaml

from gpufleet.base import versions
from tests.helpers import by_type, example_config, one, parent_of, plan_config, planned

RELEASE = "kubernetes:helm.sh/v3:Release"
DEVICE_CONFIG = "kubernetes:amd.com/v1alpha1:DeviceConfig"
CMD = "command:remote:Command"
TOL = [{"key": "amd.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]


@pytest.fixture(scope="module")
def lab():
    return planned("amd-lab")


@pytest.fixture(scope="module")
def amd_only():
    """amd-lab without its L4 host and with the hosts' inbox driver: no NVIDIA GPU Operator at all."""
    config = example_config("amd-lab")
    config["gpufleet:nodePools"] = config["gpufleet:nodePools"][:2]
    config["gpufleet:amdGpuOperator"] = {"driver": {"source": "inbox", "version": "30.30.3"}}
    config["gpufleet:workloads"] = {"rocmVersions": ["7.1"]}
    config["gpufleet:addons"] = {}
    return plan_config(config, stack="amd-only")


def test_children_types_names_and_parents(lab):
    component = one(lab, "gpufleet:addons:AmdGpuOperator", "amd-lab-amd-gpu-operator")
    assert parent_of(lab, component).name == "amd-lab"
    children = {r.name: r.type for r in lab.resources if r.parent == component.urn}
    assert children == {
        "amd-lab-amd-gpu-operator-ns": "kubernetes:core/v1:Namespace",
        "amd-lab-amd-gpu-operator-crds": "kubernetes:yaml/v2:ConfigGroup",  # its CRDs, before the release (issue 51)
        "amd-lab-amd-gpu-operator-release": RELEASE,
        "amd-lab-amd-gpu-operator-dcm-config": "kubernetes:core/v1:ConfigMap",
        "amd-lab-amd-gpu-operator-device-config-mi300x-cpx": DEVICE_CONFIG,
        "amd-lab-amd-gpu-operator-device-config-mi300x-train": DEVICE_CONFIG,
        "amd-lab-amd-gpu-operator-labels-mi300x-cpx-1": "kubernetes:core/v1:NodePatch",
    }
    provider = one(lab, "pulumi:providers:kubernetes")
    assert all(r.provider.startswith(provider.urn) for r in lab.resources if r.parent == component.urn)


def test_release_and_namespace(lab):
    release = one(lab, RELEASE, "amd-lab-amd-gpu-operator-release")
    # The archive at the gh-pages commit that published the release, not the moving rocm.github.io index.
    assert (release.inputs["name"], release.inputs["chart"], release.inputs["version"], release.inputs["namespace"]) == (
        "gpu-operator-charts", versions.AMD_GPU_OPERATOR.archive, versions.AMD_GPU_OPERATOR.version, "kube-amd-gpu")
    assert "repositoryOpts" not in release.inputs
    assert release.inputs["values"] == {
        "crds": {"defaultCR": {"install": False}},
        "node-feature-discovery": {"enabled": False},  # the NVIDIA GPU Operator's NFD serves the mixed cluster
        "installdefaultNFDRule": True,
        "kmm": {"enabled": True},
        # gpufleet applies the chart's CRDs (docs/upgrades.md): no Argo Workflows controller and CRDs, no CRD hook.
        "remediation": {"enabled": False, "installCRDs": False},
        "upgradeCRD": False,
    }
    ns = one(lab, "kubernetes:core/v1:Namespace", "amd-lab-amd-gpu-operator-ns")
    assert ns.inputs["metadata"] == {
        "name": "kube-amd-gpu",
        "labels": {"pod-security.kubernetes.io/enforce": "privileged"},
        "annotations": {"gpufleet.io/rocm-versions": "7.2", "gpufleet.io/amd-driver-version": versions.AMD_GPU_DRIVER_DEFAULT},
    }


def test_device_config_per_pool(lab):
    cpx = one(lab, DEVICE_CONFIG, "amd-lab-amd-gpu-operator-device-config-mi300x-cpx").revealed
    train = one(lab, DEVICE_CONFIG, "amd-lab-amd-gpu-operator-device-config-mi300x-train").revealed
    assert cpx["metadata"] == {"name": "gpufleet-mi300x-cpx", "namespace": "kube-amd-gpu"}
    assert train["spec"] == {
        "selector": {"gpufleet.io/pool": "mi300x-train"},
        "driver": {"enable": True, "blacklist": True, "version": versions.AMD_GPU_DRIVER_DEFAULT, "tolerations": TOL},
        "devicePlugin": {"enableDevicePlugin": True, "devicePluginArguments": {"resource_naming_strategy": "single"},
                         "devicePluginTolerations": TOL, "enableNodeLabeller": True, "nodeLabellerTolerations": TOL},
        "metricsExporter": {"enable": True, "tolerations": TOL},
    }
    assert cpx["spec"]["selector"] == {"gpufleet.io/pool": "mi300x-cpx"}
    assert cpx["spec"]["configManager"]["config"] == {"name": "gpufleet-dcm-config"}
    assert cpx["spec"]["devicePlugin"]["nodeLabellerArguments"] == [
        "compute-partitioning-supported", "memory-partitioning-supported", "compute-memory-partition"]
    release = one(lab, RELEASE, "amd-lab-amd-gpu-operator-release")
    assert all(release.urn in r.dependencies for r in by_type(lab, DEVICE_CONFIG))


def test_dcm_profile_and_node_label(lab):
    cm = one(lab, "kubernetes:core/v1:ConfigMap", "amd-lab-amd-gpu-operator-dcm-config")
    profiles = json.loads(cm.revealed["data"]["config.json"])["gpu-config-profiles"]
    assert profiles["mi300x-cpx"]["profiles"] == [{"computePartition": "CPX", "memoryPartition": "NPS4", "numGPUsAssigned": 8}]
    patch = one(lab, "kubernetes:core/v1:NodePatch", "amd-lab-amd-gpu-operator-labels-mi300x-cpx-1")
    assert patch.inputs["metadata"]["labels"] == {"dcm.amd.com/gpu-config-profile": "mi300x-cpx"}


def test_amd_agents_join_with_the_amd_taint_and_profile_label(lab):
    cfg = yaml.safe_load(one(lab, CMD, "amd-lab-pool-mi300x-cpx-agent-mi300x-cpx-1").revealed["stdin"])
    assert cfg["node-taint"] == ["amd.com/gpu=true:NoSchedule"]
    assert set(cfg["node-label"]) == {
        "gpufleet.io/pool=mi300x-cpx", "gpufleet.io/gpu=true", "gpufleet.io/gpu-model=MI300X",
        "gpufleet.io/capacity-type=on-demand", "dcm.amd.com/gpu-config-profile=mi300x-cpx",
    }
    l4 = yaml.safe_load(one(lab, CMD, "amd-lab-pool-l4-agent-l4-1").revealed["stdin"])
    assert l4["node-taint"] == ["nvidia.com/gpu=true:NoSchedule"]


def test_nvidia_operator_serves_only_nvidia_pools_but_its_nfd_labels_all(lab):
    values = one(lab, RELEASE, "amd-lab-gpu-operator-release").inputs["values"]
    assert values["daemonsets"]["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    worker = values["node-feature-discovery"]["worker"]["tolerations"]
    assert TOL[0] in worker and {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in worker


def test_kueue_counts_amd_gpus(lab):
    cqs = {r.name: r.inputs["spec"]["resourceGroups"][0] for r in by_type(lab, "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue")}
    cpx = cqs["amd-lab-kueue-cq-research-mi300x-cpx"]
    assert cpx["coveredResources"] == ["cpu", "memory", "amd.com/gpu"]
    assert cpx["flavors"][0]["resources"][-1] == {"name": "amd.com/gpu", "nominalQuota": 64}
    flavor = one(lab, "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor", "amd-lab-kueue-flavor-mi300x-cpx")
    assert flavor.inputs["spec"]["tolerations"] == [
        {"key": "amd.com/gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"}]


def test_amd_only_cluster_has_no_nvidia_operator(amd_only):
    assert by_type(amd_only, "gpufleet:addons:GpuOperator") == []
    values = one(amd_only, RELEASE).inputs["values"]
    assert values["node-feature-discovery"] == {"enabled": True, "worker": {"tolerations": [
        {"key": "amd-dcm", "operator": "Equal", "value": "up", "effect": "NoExecute"},
        {"key": "amd-gpu-unhealthy", "operator": "Exists", "effect": "NoSchedule"},
        TOL[0],
    ]}}
    assert values["kmm"] == {"enabled": False}  # inbox driver: nothing to build
    for r in by_type(amd_only, DEVICE_CONFIG):
        assert r.revealed["spec"]["driver"] == {"enable": False}
    ns = one(amd_only, "kubernetes:core/v1:Namespace", "amd-lab-amd-gpu-operator-ns")
    assert ns.inputs["metadata"]["annotations"] == {"gpufleet.io/rocm-versions": "7.1", "gpufleet.io/amd-driver-version": "30.30.3"}
    assert [v.policy for v in amd_only.violations if v.level == "mandatory"] == []
