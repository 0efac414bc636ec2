"""The rules that know AMD pools (issue 17): gpu-pool-taint, gpu-sharing-valid, gpu-operator-version-support,
gpu-operator-driver-conflict, gpu-driver-cuda-alignment (ROCm). Each case starts from a valid AMD stack (what
gpufleet writes for a CPX/NPS4 MI300X pool and a whole-GPU MI300X pool) and changes one field; exact sets."""

import json

import pytest

from gpufleet.policies import inputs as I
from tests.helpers import planned
from tests.policy.fixtures import DELETE, K3S_COMMAND_IN, OPERATOR_IN, findings, messages, res, with_

TAINT, SHARING, SUPPORT, CONFLICT, ALIGN = (
    "gpu-pool-taint", "gpu-sharing-valid", "gpu-operator-version-support", "gpu-operator-driver-conflict",
    "gpu-driver-cuda-alignment",
)
AMD_RULES = (TAINT, SHARING, SUPPORT, CONFLICT, ALIGN)
DEVICE_CONFIG = "kubernetes:amd.com/v1alpha1:DeviceConfig"
TOL = [{"key": "amd.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]

AMD_RELEASE_IN = {
    "name": "gpu-operator-charts",
    "chart": "gpu-operator-charts",
    "version": "v1.5.1",
    "repositoryOpts": {"repo": "https://rocm.github.io/gpu-operator"},
    "values": {"crds": {"defaultCR": {"install": False}}, "node-feature-discovery": {"enabled": True}, "kmm": {"enabled": True}},
}


def device_config(pool: str, partitioned: bool = False) -> dict:
    spec = {
        "selector": {"gpufleet.io/pool": pool},
        "driver": {"enable": True, "blacklist": True, "version": "30.20.1", "tolerations": TOL},
        "devicePlugin": {"enableDevicePlugin": True, "devicePluginArguments": {"resource_naming_strategy": "single"},
                         "devicePluginTolerations": TOL, "enableNodeLabeller": True, "nodeLabellerTolerations": TOL},
        "metricsExporter": {"enable": True, "tolerations": TOL},
    }
    if partitioned:
        spec["configManager"] = {"enable": True, "config": {"name": "gpufleet-dcm-config"}, "configManagerTolerations": TOL}
    return {"apiVersion": "amd.com/v1alpha1", "kind": "DeviceConfig",
            "metadata": {"name": f"gpufleet-{pool}", "namespace": "kube-amd-gpu"}, "spec": spec}


def dcm(profiles: list[dict]) -> dict:
    return {"metadata": {"name": "gpufleet-dcm-config", "namespace": "kube-amd-gpu"},
            "data": {"config.json": json.dumps({"gpu-config-profiles": {"cpx": {"skippedGPUs": {"ids": []}, "profiles": profiles}}})}}


CPX_NPS4 = [{"computePartition": "CPX", "memoryPartition": "NPS4", "numGPUsAssigned": 8}]
AMD_NS_IN = {"metadata": {"name": "kube-amd-gpu", "annotations": {"gpufleet.io/rocm-versions": "7.2",
                                                                   "gpufleet.io/amd-driver-version": "30.20.1"}}}


def stack(**changes) -> list:
    """The valid AMD stack, with whole resources replaced by keyword (release=, cpx=, train=, dcm=, ns=, extra=)."""
    out = [
        res(I.REMOTE_COMMAND, "server", K3S_COMMAND_IN),
        res(I.HELM_RELEASE, "amd-operator", changes.get("release", AMD_RELEASE_IN)),
        res(DEVICE_CONFIG, "cpx", changes.get("cpx", device_config("mi300x-cpx", partitioned=True))),
        res(DEVICE_CONFIG, "train", changes.get("train", device_config("mi300x-train"))),
        res(I.CONFIG_MAP, "dcm", changes.get("dcm", dcm(CPX_NPS4))),
        res("kubernetes:core/v1:Namespace", "amd-ns", changes.get("ns", AMD_NS_IN)),
    ]
    return out + changes.get("extra", [])


def details(resources, policy, config=None) -> list[str]:
    """The rules' own messages (the pack prefixes each with the rule's description line)."""
    return [m.split("\n", 1)[-1] for m in messages(resources, policy, config)]


def amd_findings(resources, config=None) -> set:
    return {f for f in findings(resources, config) if f[0] in AMD_RULES}


def test_valid_amd_stack_PASSED():
    assert amd_findings(stack()) == set()


def test_amd_lab_plan_PASSED():
    """What gpufleet really registers for stacks/Pulumi.amd-lab.yaml (mixed NVIDIA + AMD) passes every rule but the
    advisory gpu-observability: the example keeps metrics off, as every k3s example does (issue 16's default there)."""
    assert findings(planned("amd-lab").resources) == {("gpu-observability", "amd-lab-gpu-operator-release", "advisory")}


# --- gpu-pool-taint -------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "path",
    ["spec.devicePlugin.devicePluginTolerations", "spec.devicePlugin.nodeLabellerTolerations",
     "spec.metricsExporter.tolerations", "spec.configManager.configManagerTolerations"],
)
def test_operand_without_amd_gpu_toleration_FAILED(path):
    cpx = with_(device_config("mi300x-cpx", partitioned=True), path, [])
    assert amd_findings(stack(cpx=cpx)) == {(TAINT, "cpx", "mandatory")}


def test_disabled_operand_needs_no_toleration_PASSED():
    train = with_(with_(device_config("mi300x-train"), "spec.metricsExporter.enable", False), "spec.metricsExporter.tolerations", [])
    assert amd_findings(stack(train=train)) == set()


def test_taint_message_names_the_operand_and_fix():
    train = with_(device_config("mi300x-train"), "spec.devicePlugin.devicePluginTolerations", [])
    assert details(stack(train=train), TAINT) == [
        "the device plugin does not tolerate the amd.com/gpu NoSchedule taint AMD GPU pools carry, so it never runs "
        "there: add {key: amd.com/gpu, operator: Exists, effect: NoSchedule} to its tolerations"
    ]


# --- gpu-sharing-valid ----------------------------------------------------------------------------

@pytest.mark.parametrize(
    "profiles,expected",
    [
        (CPX_NPS4, set()),
        ([{"computePartition": "SPX", "memoryPartition": "NPS1", "numGPUsAssigned": 8}], set()),
        ([{"computePartition": "SPX", "memoryPartition": "NPS4", "numGPUsAssigned": 8}], {(SHARING, "dcm", "mandatory")}),
        ([{"computePartition": "XPX", "memoryPartition": "NPS1", "numGPUsAssigned": 8}], {(SHARING, "dcm", "mandatory")}),
        ([{"computePartition": "CPX", "memoryPartition": "NPS1", "numGPUsAssigned": 4},
          {"computePartition": "CPX", "memoryPartition": "NPS4", "numGPUsAssigned": 4}], {(SHARING, "dcm", "mandatory")}),
        ([{"computePartition": "CPX", "memoryPartition": "NPS4", "numGPUsAssigned": 0}], {(SHARING, "dcm", "mandatory")}),
    ],
)
def test_dcm_profiles(profiles, expected):
    assert amd_findings(stack(dcm=dcm(profiles))) == expected


def test_dcm_message():
    bad = dcm([{"computePartition": "SPX", "memoryPartition": "NPS4", "numGPUsAssigned": 8}])
    assert details(stack(dcm=bad), SHARING) == [
        "data.config.json: DCM profile 'cpx' profiles[0]: memoryPartition NPS4 runs only with computePartition CPX (got SPX)"
    ]


def test_operand_tolerating_the_dcm_taint_FAILED():
    tol = TOL + [{"key": "amd-dcm", "operator": "Equal", "value": "up", "effect": "NoExecute"}]
    cpx = with_(device_config("mi300x-cpx", partitioned=True), "spec.devicePlugin.devicePluginTolerations", tol)
    assert amd_findings(stack(cpx=cpx)) == {(SHARING, "cpx", "mandatory")}
    # The DCM itself carries it (upstream adds it): not a finding.
    cpx = with_(device_config("mi300x-cpx", partitioned=True), "spec.configManager.configManagerTolerations", tol)
    assert amd_findings(stack(cpx=cpx)) == set()


# --- gpu-operator-version-support -----------------------------------------------------------------

def test_unknown_amd_release_FAILED():
    assert amd_findings(stack(release=with_(AMD_RELEASE_IN, "version", "v1.2.0"))) == {(SUPPORT, "amd-operator", "mandatory")}


def test_kubernetes_below_the_charts_floor_FAILED():
    old = with_(K3S_COMMAND_IN, "create", K3S_COMMAND_IN["create"].replace("v1.34.1+k3s1", "v1.28.9+k3s1"))
    resources = [res(I.REMOTE_COMMAND, "server", old)] + stack()[1:]
    assert amd_findings(resources) == {(SUPPORT, "amd-operator", "mandatory")}
    assert details(resources, SUPPORT) == [
        "Kubernetes 1.28 (Command 'server') is older than AMD GPU Operator v1.5.1 supports (>= 1.29)"]


def test_unknown_driver_line_FAILED():
    train = with_(device_config("mi300x-train"), "spec.driver.version", "29.1.0")
    assert (SUPPORT, "train", "mandatory") in amd_findings(stack(train=train))


# --- gpu-operator-driver-conflict -----------------------------------------------------------------

def test_chart_default_device_config_next_to_ours_FAILED():
    release = with_(AMD_RELEASE_IN, "values.crds", DELETE)
    assert amd_findings(stack(release=release)) == {(CONFLICT, "amd-operator", "mandatory")}


def test_two_device_configs_on_one_pool_FAILED():
    train = with_(device_config("mi300x-train"), "spec.selector", {"gpufleet.io/pool": "mi300x-cpx"})
    assert amd_findings(stack(train=train)) == {(CONFLICT, "train", "mandatory")}


def test_two_nfds_FAILED_and_one_PASSED():
    nvidia = res(I.HELM_RELEASE, "gpu-operator", OPERATOR_IN)
    assert amd_findings(stack(extra=[nvidia])) == {(CONFLICT, "amd-operator", "mandatory")}
    one_nfd = with_(AMD_RELEASE_IN, "values.node-feature-discovery.enabled", False)
    assert amd_findings(stack(release=one_nfd, extra=[nvidia])) == set()
    # A quoted "false" is a non-empty string, true to Helm's `if`: the subchart still installs (issue 56: `is not
    # False` -> `> False` survived, which would also crash on the string).
    quoted = with_(AMD_RELEASE_IN, "values.node-feature-discovery.enabled", "false")
    assert amd_findings(stack(release=quoted, extra=[nvidia])) == {(CONFLICT, "amd-operator", "mandatory")}


# --- gpu-driver-cuda-alignment (ROCm) -------------------------------------------------------------

@pytest.mark.parametrize(
    "driver,rocm,expected",
    [
        ("30.20.1", "7.2", set()),
        ("30.20.1", "7.0", {(ALIGN, "cpx", "mandatory"), (ALIGN, "train", "mandatory")}),
        ("30.30.3", "7.0,7.1,7.2", set()),
        ("6.4.3", "7.1", {(ALIGN, "cpx", "mandatory"), (ALIGN, "train", "mandatory")}),
    ],
)
def test_operator_driver_runs_rocm(driver, rocm, expected):
    ns = with_(AMD_NS_IN, "metadata.annotations", {"gpufleet.io/rocm-versions": rocm})
    cpx = with_(device_config("mi300x-cpx", partitioned=True), "spec.driver.version", driver)
    train = with_(device_config("mi300x-train"), "spec.driver.version", driver)
    assert amd_findings(stack(cpx=cpx, train=train, ns=ns)) == expected


def test_inbox_driver_declared_on_the_namespace():
    inbox = {"enable": False}
    cpx = with_(device_config("mi300x-cpx", partitioned=True), "spec.driver", inbox)
    train = with_(device_config("mi300x-train"), "spec.driver", inbox)
    ns = with_(AMD_NS_IN, "metadata.annotations", {"gpufleet.io/rocm-versions": "7.1", "gpufleet.io/amd-driver-version": "30.10.2"})
    assert amd_findings(stack(cpx=cpx, train=train, ns=ns)) == {(ALIGN, "amd-ns", "mandatory")}
    assert details(stack(cpx=cpx, train=train, ns=ns), ALIGN) == [
        "AMD GPU Driver 30.10.2 (annotation gpufleet.io/amd-driver-version on 'amd-ns'), which cannot run ROCm 7.1: AMD GPU "
        "Driver 30.10.x runs ROCm 7.2, 7.0, 6.4, 6.3, 6.2, not 7.1 (drivers that run ROCm 7.1: 30.30)"
    ]


def test_rocm_from_policy_config():
    ns = with_(AMD_NS_IN, "metadata.annotations", {})
    assert amd_findings(stack(ns=ns), config={ALIGN: {"rocmVersions": ["6.1"]}}) == {
        (ALIGN, "cpx", "mandatory"), (ALIGN, "train", "mandatory")}
