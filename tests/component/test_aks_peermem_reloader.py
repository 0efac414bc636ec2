"""AKS InfiniBand with AKS's own driver (issue 53, `cluster.aks.gpuDriver: aks`): the plan exits 0; the Network
Operator runs as on the operator path; the GPU Operator's driver and toolkit are off (no driver.rdma); the AKS
InfiniBand guide's nvidia-peermem reloader runs on the InfiniBand pool's nodes only, as asserted below whole, and
validates against Kubernetes' OpenAPI schema. Component (layer 2), CLI (5) and upstream-format (3) checks of one plan."""

from __future__ import annotations

import json

import pytest
import yaml

from gpufleet.app.cli import main
from gpufleet.base import versions
from gpufleet.base.catalog import images
from gpufleet.components.aks.peermem_reloader import AksPeermemReloaderArgs, daemonset, pinned_image
from tests.helpers import by_type, example_config, one, parent_of, plan_config, planned
from tests.k8s_validate import validate_strict

STACK = "aks-train"
RELOADER = "gpufleet:aks:PeermemReloader"
DAEMONSET = "kubernetes:apps/v1:DaemonSet"
DIGEST = "sha256:7d98d08a751cc528d1c8c8bdc2f9d9fcd59714b158a3985a5a0262f1620098e4"
MODPROBE = ["chroot", "/host", "modprobe", "nvidia-peermem"]

EXPECTED = {
    "apiVersion": "apps/v1",
    "kind": "DaemonSet",
    "metadata": {"name": "nvidia-peermem-reloader", "namespace": "kube-system",
                 "labels": {"app.kubernetes.io/name": "nvidia-peermem-reloader"}},
    "spec": {
        "selector": {"matchLabels": {"app.kubernetes.io/name": "nvidia-peermem-reloader"}},
        "updateStrategy": {"type": "RollingUpdate"},
        "template": {
            "metadata": {"labels": {"app.kubernetes.io/name": "nvidia-peermem-reloader"}},
            "spec": {
                "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "gpufleet.io/pool", "operator": "In", "values": ["h100ib"]}]}]}}},
                "tolerations": [{"key": "nvidia.com/gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"}],
                "priorityClassName": "system-node-critical",
                "automountServiceAccountToken": False,
                "containers": [{
                    "name": "nvidia-peermem-reloader",
                    "image": f"nvcr.io/nvidia/cloud-native/k8s-driver-manager:v0.12.0@{DIGEST}",
                    "command": ["sleep", "inf"],
                    "startupProbe": {"exec": {"command": MODPROBE}, "initialDelaySeconds": 10, "periodSeconds": 10,
                                     "timeoutSeconds": 10, "failureThreshold": 120, "successThreshold": 1},
                    "livenessProbe": {"exec": {"command": MODPROBE}, "initialDelaySeconds": 30, "periodSeconds": 30,
                                      "timeoutSeconds": 10, "failureThreshold": 1, "successThreshold": 1},
                    "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}, "limits": {"memory": "64Mi"}},
                    "securityContext": {"privileged": True},
                    "volumeMounts": [{"name": "host-root", "mountPath": "/host", "readOnly": True}],
                }],
                "volumes": [{"name": "host-root", "hostPath": {"path": "/", "type": "Directory"}}],
            },
        },
    },
}


def _config() -> dict:
    c = example_config(STACK)
    c["gpufleet:cluster"]["aks"]["gpuDriver"] = "aks"
    return c


@pytest.fixture(scope="module")
def plan():
    return plan_config(_config(), stack=STACK, policies=False)


def test_the_plan_of_an_infiniband_stack_with_the_aks_driver_exits_0(tmp_path):
    path, out = tmp_path / "Pulumi.aks-ib.yaml", tmp_path / "plan.json"
    path.write_text(yaml.safe_dump({"config": _config()}))
    assert main(["plan", "aks-ib", "--config", str(path), "--format", "json", "--output", str(out)]) == 0
    result = json.loads(out.read_text())
    assert [v for v in result["violations"] if v["level"] == "mandatory"] == []
    assert [r["name"] for r in result["resources"] if r["type"] == DAEMONSET] == ["aks-train-peermem-reloader-ds"]


def test_the_reloader_daemonset_whole(plan):
    ds = one(plan, DAEMONSET, "aks-train-peermem-reloader-ds")
    assert ds.revealed == EXPECTED
    component = parent_of(plan, ds)
    assert (component.type, component.name) == (RELOADER, "aks-train-peermem-reloader")
    assert parent_of(plan, component).type == "gpufleet:index:GpuCluster"


def test_the_reloader_validates_strictly_against_the_kubernetes_schema(plan):
    validate_strict(one(plan, DAEMONSET, "aks-train-peermem-reloader-ds").revealed, plan.spec.cluster.kubernetes_version)


def test_the_reloader_starts_after_the_doca_driver_and_the_pools(plan):
    deps = set(one(plan, DAEMONSET, "aks-train-peermem-reloader-ds").dependencies)
    policy = one(plan, "kubernetes:mellanox.com/v1alpha1:NicClusterPolicy")
    pools = {p.inputs["agentPoolName"]: p.urn for p in by_type(plan, "azure-native:containerservice:AgentPool")}
    assert {policy.urn, pools["h100ib"], pools["a100spot"]} <= deps


def test_gpu_operator_values_for_the_aks_driver_path(plan):
    values = one(plan, "kubernetes:helm.sh/v3:Release", "aks-train-gpu-operator-release").revealed["values"]
    assert (values["driver"], values["toolkit"]) == ({"enabled": False}, {"enabled": False})
    policy = one(plan, "kubernetes:mellanox.com/v1alpha1:NicClusterPolicy").revealed["spec"]
    assert policy["ofedDriver"]["image"] == "doca-driver" and "rdmaSharedDevicePlugin" in policy
    pools = {p.inputs["agentPoolName"]: p.inputs for p in by_type(plan, "azure-native:containerservice:AgentPool")}
    assert pools["h100ib"]["gpuProfile"] == {"driver": "Install"}


def test_the_operator_driver_path_has_no_reloader():
    assert by_type(planned(STACK), RELOADER) == []


def test_the_image_is_pinned_by_its_recorded_digest_and_mirrored_with_it():
    assert images.digest(versions.AKS_PEERMEM_RELOADER_IMAGE) == DIGEST
    args = AksPeermemReloaderArgs(pools=("a", "b"))
    container = daemonset(args, mirror="registry.example.com")["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == f"registry.example.com/nvcr.io/nvidia/cloud-native/k8s-driver-manager:v0.12.0@{DIGEST}"
    with pytest.raises(ValueError, match="docker.io/library/ubuntu:24.04 has no recorded digest"):
        pinned_image("docker.io/library/ubuntu:24.04")
