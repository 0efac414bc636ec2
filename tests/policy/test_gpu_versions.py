"""gpu-driver-cuda-alignment, gpu-operator-version-support, gpu-operator-driver-conflict."""

import pytest

from gpufleet.policies import inputs as I
from tests.policy.conftest import OPERATOR_NO_DRIVER
from tests.policy.fixtures import (
    K3S_COMMAND_IN, NODE_GROUP_IN, NODE_POOL_IN, OPERATOR_IN, findings, messages, namespace, res, with_,
)

ALIGN, SUPPORT, CONFLICT = "gpu-driver-cuda-alignment", "gpu-operator-version-support", "gpu-operator-driver-conflict"


def k3s_stack(operator: dict, annotations: dict) -> list:
    return [
        res(I.REMOTE_COMMAND, "server", K3S_COMMAND_IN),
        res(I.HELM_RELEASE, "gpu-operator", operator),
        res("kubernetes:core/v1:Namespace", "gpu-operator-ns", namespace(annotations)),
    ]


# --- gpu-driver-cuda-alignment --------------------------------------------------------------------

@pytest.mark.parametrize(
    "driver,cuda,expected",
    [
        ("580.95.05", "12.8,13.0", set()),  # PASSED: 580 runs 12.x and 13.0
        ("570.195.03", "12.8,13.0", {(ALIGN, "gpu-operator", "mandatory")}),  # FAILED: 13.0 needs 580
        ("535.274.02", "12.9", set()),  # PASSED by minor-version compatibility (branch >= 525)
    ],
)
def test_operator_driver(driver, cuda, expected):
    op = with_(with_(OPERATOR_IN, "version", "v26.3.3"), "values.driver.version", driver)
    assert findings(k3s_stack(op, {I.CUDA_VERSIONS_ANNOTATION: cuda}), policy=ALIGN) == expected


def test_operator_default_driver_is_judged_when_no_version_is_set():
    # v25.10.1 ships 580.105.08: runs 13.0
    op = with_(with_(OPERATOR_IN, "version", "v25.10.1"), "values.driver", {"enabled": True})
    assert findings(k3s_stack(op, {I.CUDA_VERSIONS_ANNOTATION: "13.0"}), policy=ALIGN) == set()


def test_preinstalled_driver_from_annotation_FAILED():
    annotations = {I.CUDA_VERSIONS_ANNOTATION: "13.0", I.PREINSTALLED_DRIVER_ANNOTATION: "575.57.08"}
    stack = k3s_stack(OPERATOR_NO_DRIVER, annotations)
    assert findings(stack, policy=ALIGN) == {(ALIGN, "gpu-operator-ns", "mandatory")}
    (message,) = messages(stack, ALIGN)
    assert "preinstalled driver 575.57.08 (annotation gpufleet.io/preinstalled-driver-version on 'gpu-operator-ns'), which cannot run CUDA 13.0" in message


def test_cuda_versions_from_policy_config():
    op = with_(with_(OPERATOR_IN, "version", "v26.3.3"), "values.driver.version", "570.195.03")
    stack = k3s_stack(op, {})
    assert findings(stack, policy=ALIGN) == set()
    assert findings(stack, {ALIGN: {"cudaVersions": ["13.0"]}}, policy=ALIGN) == {(ALIGN, "gpu-operator", "mandatory")}


def test_unknown_preinstalled_version_is_not_guessed(eks_stack):
    """EKS NVIDIA AMI, driver version undeclared: not applicable by default, a violation when required."""
    stack = list(eks_stack.values()) + [res("kubernetes:core/v1:Namespace", "ns", namespace({I.CUDA_VERSIONS_ANNOTATION: "13.0"}))]
    assert findings(stack, policy=ALIGN) == set()
    assert findings(stack, {ALIGN: {"requireKnownDriver": True}}, policy=ALIGN) == {(ALIGN, "", "mandatory")}
    assert findings(stack, {ALIGN: {"preinstalledDriverVersion": "570.195.03"}}, policy=ALIGN) == {(ALIGN, "", "mandatory")}


# --- gpu-operator-version-support -----------------------------------------------------------------

@pytest.mark.parametrize(
    "path,value,expected",
    [
        ("version", "v26.7.0", set()),
        ("version", "v24.9.2", {(SUPPORT, "gpu-operator", "mandatory")}),  # unknown release
        ("values.driver.version", "550.163.01", {(SUPPORT, "gpu-operator", "mandatory")}),  # branch 550 not in v26.7.0
        ("values.driver.version", "latest", {(SUPPORT, "gpu-operator", "mandatory")}),  # not a dotted version
        ("values.driver.enabled", False, set()),  # no driver installed: branch not judged
    ],
)
def test_release(path, value, expected):
    assert findings(k3s_stack(with_(OPERATOR_IN, path, value), {}), policy=SUPPORT) == expected


@pytest.mark.parametrize(
    "k3s,expected",
    # v26.7.0 supports 1.33-1.36 (platform-support.rst @187a4a5b): 1.36 passes now, 1.32 and 1.37 do not.
    [("v1.34.1+k3s1", set()), ("v1.36.0+k3s1", set()), ("v1.32.5+k3s1", {(SUPPORT, "gpu-operator", "mandatory")}),
     ("v1.37.0+k3s1", {(SUPPORT, "gpu-operator", "mandatory")})],
)
def test_kubernetes_version_from_k3s_install(k3s, expected):
    stack = k3s_stack(OPERATOR_IN, {})
    stack[0] = res(I.REMOTE_COMMAND, "server", with_(K3S_COMMAND_IN, "create", K3S_COMMAND_IN["create"].replace("v1.34.1+k3s1", k3s)))
    assert findings(stack, policy=SUPPORT) == expected


def test_kubernetes_version_from_eks_and_gke_clusters(eks_stack, gke_stack):
    eks_stack["prod"].inputs["version"] = "1.30"  # v26.7.0 supports 1.33..1.36
    gke_stack["prod"].inputs["minMasterVersion"] = "1.30.5-gke.1014001"
    for stack in (eks_stack, gke_stack):
        assert findings(list(stack.values()), policy=SUPPORT) == {(SUPPORT, "gpu-operator", "mandatory")}
    (message,) = messages(list(gke_stack.values()), SUPPORT)
    assert "Kubernetes 1.30 (Cluster 'prod') is not supported by GPU Operator v26.7.0 (supported: 1.33, 1.34, 1.35, 1.36)" in message


def test_other_charts_are_not_judged():
    assert findings([res(I.HELM_RELEASE, "x", {"chart": "ingress-nginx", "version": "4.0.0"})], policy=SUPPORT) == set()


# --- gpu-operator-driver-conflict -----------------------------------------------------------------

def test_eks_nvidia_ami_with_operator_driver_and_toolkit_FAILED(eks_stack):
    eks_stack["gpu-operator"] = res(I.HELM_RELEASE, "gpu-operator", OPERATOR_IN)
    assert findings(list(eks_stack.values()), policy=CONFLICT) == {(CONFLICT, "gpu-operator", "mandatory")}
    assert len(messages(list(eks_stack.values()), CONFLICT)) == 2  # driver and toolkit


def test_eks_nvidia_ami_with_operator_toolkit_only_FAILED(eks_stack):
    eks_stack["gpu-operator"] = res(I.HELM_RELEASE, "gpu-operator", with_(OPERATOR_NO_DRIVER, "values.toolkit.enabled", True))
    (message,) = messages(list(eks_stack.values()), CONFLICT)
    assert "installs the container toolkit on pool 'h100', whose NVIDIA AMI ships it" in message


def test_eks_standard_ami_without_operator_driver_FAILED(eks_stack):
    eks_stack["h100"] = res(I.EKS_NODE_GROUP, "h100", with_(NODE_GROUP_IN, "amiType", "AL2023_x86_64_STANDARD"))
    assert findings(list(eks_stack.values()), policy=CONFLICT) == {(CONFLICT, "h100", "mandatory")}


def test_eks_standard_ami_with_operator_driver_PASSED(eks_stack):
    eks_stack["h100"] = res(I.EKS_NODE_GROUP, "h100", with_(NODE_GROUP_IN, "amiType", "AL2023_x86_64_STANDARD"))
    eks_stack["gpu-operator"] = res(I.HELM_RELEASE, "gpu-operator", OPERATOR_IN)
    assert findings(list(eks_stack.values()), policy=CONFLICT) == set()


@pytest.mark.parametrize(
    "mode,operator,expected",
    [
        ("LATEST", OPERATOR_IN, {(CONFLICT, "gpu-operator", "mandatory")}),
        ("INSTALLATION_DISABLED", OPERATOR_NO_DRIVER, {(CONFLICT, "h100", "mandatory")}),
        ("INSTALLATION_DISABLED", OPERATOR_IN, set()),
    ],
)
def test_gke_driver_installation(gke_stack, mode, operator, expected):
    gke_stack["h100"] = res(I.GKE_NODE_POOL, "h100", with_(NODE_POOL_IN, "nodeConfig.guestAccelerators.0.gpuDriverInstallationConfig.gpuDriverVersion", mode))
    gke_stack["gpu-operator"] = res(I.HELM_RELEASE, "gpu-operator", operator)
    assert findings(list(gke_stack.values()), policy=CONFLICT) == expected


def test_declared_preinstalled_hosts_with_operator_driver_FAILED():
    stack = k3s_stack(OPERATOR_IN, {I.PREINSTALLED_DRIVER_ANNOTATION: "580.95.05"})
    assert findings(stack, policy=CONFLICT) == {(CONFLICT, "gpu-operator", "mandatory")}


def test_conflict_exempt_by_config(eks_stack):
    eks_stack["gpu-operator"] = res(I.HELM_RELEASE, "gpu-operator", OPERATOR_IN)
    assert findings(list(eks_stack.values()), {CONFLICT: {"exemptions": {"h100": "custom AMI without driver"}}}, policy=CONFLICT) == set()


# --- gpu-cuda-minor-version-compat (advisory) -----------------------------------------------------

MINOR = "gpu-cuda-minor-version-compat"


@pytest.mark.parametrize(
    "driver,cuda,expected",
    [
        ("580.95.05", "12.8,13.0", set()),  # PASSED: both at or above their own minimum
        ("535.274.02", "12.9", {(MINOR, "gpu-operator", "advisory")}),  # FAILED: 12.9 needs 575.51.03; runs by compat only
        ("570.195.03", "13.0", set()),  # not runnable at all: gpu-driver-cuda-alignment's case, not this rule's
    ],
)
def test_minor_version_compat_only(driver, cuda, expected):
    op = with_(with_(OPERATOR_IN, "version", "v26.3.3"), "values.driver.version", driver)
    assert findings(k3s_stack(op, {I.CUDA_VERSIONS_ANNOTATION: cuda}), policy=MINOR) == expected


def test_minor_version_compat_message_names_what_breaks():
    op = with_(with_(OPERATOR_IN, "version", "v26.3.3"), "values.driver.version", "535.274.02")
    (message,) = messages(k3s_stack(op, {I.CUDA_VERSIONS_ANNOTATION: "12.9"}), MINOR)
    assert "runs CUDA 12.9 only through minor-version compatibility" in message
    assert "PTX JIT" in message and "NVRTC" in message and "cudaErrorCallRequiresNewerDriver" in message


@pytest.mark.parametrize("chart", ["kube-prometheus-stack", "amd-gpu", "zzz", "aaa"])
def test_a_release_of_another_chart_has_no_operator_problem(chart):
    """`check` judges the GPU Operator's chart only (issue 56: `!=` -> `<` survived, the stack path filters first)."""
    from gpufleet.policies.rules import gpu_operator_version_support as rule

    assert rule.check({**OPERATOR_IN, "chart": chart, "version": "0.0.1"}) == []
    assert rule.check({**OPERATOR_IN, "version": "0.0.1"}) != []  # the operator's chart at an unknown version is judged


def test_a_driver_without_an_enabled_key_is_installed_and_judged():
    """The chart installs the driver unless driver.enabled is false (issue 56: default=True -> False survived)."""
    unsaid = with_(OPERATOR_IN, "values.driver", {"version": "550.163.01"})  # branch 550: not in the pinned release
    assert findings(k3s_stack(unsaid, {}), policy=SUPPORT) == {(SUPPORT, "gpu-operator", "mandatory")}


def test_an_operator_that_installs_a_known_driver_leaves_nothing_unknown():
    """With requireKnownDriver, an operator release with driver.enabled: true and a version is known (issue 56: the
    `is False` test of the off switch turned `> False` survived, which reads enabled: true as off)."""
    op = with_(with_(OPERATOR_IN, "version", "v26.3.3"), "values.driver", {"enabled": True, "version": "580.95.05"})
    config = {ALIGN: {"requireKnownDriver": True}}
    assert findings(k3s_stack(op, {I.CUDA_VERSIONS_ANNOTATION: "12.8"}), config, policy=ALIGN) == set()


def test_a_quoted_false_toolkit_switch_still_installs_it(eks_stack):
    """Helm's `if .Values.toolkit.enabled` is true for the string "false" (a non-empty string), so the chart installs the
    toolkit: the rule reads only the boolean false as off, and never crashes on the string (issue 56: `is not False`
    -> `> False` survived)."""
    eks_stack["gpu-operator"] = res(I.HELM_RELEASE, "gpu-operator",
                                    with_(with_(OPERATOR_IN, "values.driver", {"enabled": False}), "values.toolkit", {"enabled": "false"}))
    assert findings(list(eks_stack.values()), policy=CONFLICT) == {(CONFLICT, "gpu-operator", "mandatory")}


def test_cluster_versions_are_read_from_type_tokens_built_at_run_time():
    """Over gRPC a resource's type token is a string built at run time, never the pack's own constant (issue 56:
    `resource_type == I.GKE_CLUSTER` and `== I.REMOTE_COMMAND` -> `is` survived, the fixtures pass the constants)."""
    fresh = lambda token: "".join(list(token))  # noqa: E731  an equal string, another object
    stack = k3s_stack(OPERATOR_IN, {})
    stack[0] = res(fresh(I.REMOTE_COMMAND), "server", with_(K3S_COMMAND_IN, "create", K3S_COMMAND_IN["create"].replace("v1.34.1", "v1.32.5")))
    stack.append(res(fresh(I.GKE_CLUSTER), "prod", {"minMasterVersion": "1.30.5-gke.1014001"}))
    (message,) = messages(stack, SUPPORT)
    assert "Kubernetes 1.30 (Cluster 'prod'), 1.32 (Command 'server') is not supported by GPU Operator v26.7.0" in message


def test_an_exempt_release_does_not_hide_the_next_one(eks_stack):
    """Issue 56: the exempt release's `continue` -> `break` survived: no test had a second release after an exempt one."""
    stack = [res(I.HELM_RELEASE, "old-operator", OPERATOR_IN), *eks_stack.values()]
    stack[stack.index(eks_stack["gpu-operator"])] = res(I.HELM_RELEASE, "gpu-operator", with_(OPERATOR_NO_DRIVER, "values.driver.enabled", True))
    config = {CONFLICT: {"exemptions": {"old-operator": "being removed"}}}
    assert findings(stack, config, policy=CONFLICT) == {(CONFLICT, "gpu-operator", "mandatory")}


def test_an_operator_driver_without_an_enabled_key_leaves_nothing_unknown():
    """driver.enabled unsaid means on (the chart's default): with requireKnownDriver nothing is unknown and nothing
    crashes (issue 56: the off-switch test `is False` -> `<= False` survived; it raises on the missing key)."""
    op = with_(with_(OPERATOR_IN, "version", "v26.3.3"), "values.driver", {"version": "580.95.05"})
    config = {ALIGN: {"requireKnownDriver": True}}
    assert findings(k3s_stack(op, {I.CUDA_VERSIONS_ANNOTATION: "12.8"}), config, policy=ALIGN) == set()
