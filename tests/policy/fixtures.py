"""Valid resources of each type the pack judges, in the input shapes the Pulumi SDKs send (camelCase,
numbers as floats). Tests start from one of these and change one field per case."""

from __future__ import annotations

import copy
from typing import Optional

from gpufleet.app.plan.mocks import Registration
from gpufleet.app.plan.policy_runner import evaluate

PROJECT, STACK = "gpufleet", "test"


# Types a valid stack registers with protect=True (stateful-resource-protection).
PROTECTED_TYPES = ("aws:eks/cluster:Cluster", "gcp:container/cluster:Cluster")


def res(type_: str, name: str, inputs: dict, parent: Optional[str] = None, protect: Optional[bool] = None) -> Registration:
    """A registration as the plan records it; clusters protected unless `protect` says otherwise."""
    urn = f"urn:pulumi:{STACK}::{PROJECT}::{type_}::{name}"
    protect = type_ in PROTECTED_TYPES if protect is None else protect
    return Registration(urn=urn, type=type_, name=name, parent=parent, custom=True, inputs=copy.deepcopy(inputs), protect=protect)


TEMPLATE = "k8s.io/cluster-autoscaler/node-template"

NODE_GROUP_IN = {
    "clusterName": "prod",
    "nodeRoleArn": "arn:aws:iam::123456789012:role/gpu",
    "subnetIds": ["subnet-a"],
    "instanceTypes": ["p5.48xlarge"],
    "amiType": "AL2023_x86_64_NVIDIA",
    "capacityType": "ON_DEMAND",
    "scalingConfig": {"minSize": 0.0, "maxSize": 4.0, "desiredSize": 0.0},
    "labels": {"gpufleet.io/pool": "h100"},
    "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}],
    "tags": {
        f"{TEMPLATE}/resources/nvidia.com/gpu": "8",
        f"{TEMPLATE}/label/gpufleet.io/pool": "h100",
        f"{TEMPLATE}/taint/nvidia.com/gpu": "true:NoSchedule",
    },
}
SPOT_NODE_GROUP_IN = {
    **NODE_GROUP_IN,
    "capacityType": "SPOT",
    "instanceTypes": ["g5.12xlarge", "g5.24xlarge"],
    "taints": NODE_GROUP_IN["taints"] + [{"key": "gpufleet.io/spot", "value": "true", "effect": "NO_SCHEDULE"}],
    "tags": {**NODE_GROUP_IN["tags"], f"{TEMPLATE}/taint/gpufleet.io/spot": "true:NoSchedule"},
}
EKS_CLUSTER_IN = {
    "roleArn": "arn:aws:iam::123456789012:role/eks",
    "version": "1.33",
    "vpcConfig": {"subnetIds": ["subnet-a"], "endpointPublicAccess": True, "publicAccessCidrs": ["203.0.113.0/24"]},
    "encryptionConfig": {"resources": ["secrets"], "provider": {"keyArn": "arn:aws:kms:us-east-1:123456789012:key/k"}},
}
LAUNCH_TEMPLATE_IN = {
    "name": "h100-efa",
    "networkInterfaces": [
        {"deviceIndex": float(i and 1), "networkCardIndex": float(i), "interfaceType": "efa"} for i in range(32)
    ],
    "placement": {"groupName": "h100-pg"},
    "blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"volumeSize": 500.0, "encrypted": "true"}}],
    "metadataOptions": {"httpTokens": "required", "httpPutResponseHopLimit": 2.0},
}
PLACEMENT_GROUP_IN = {"name": "h100-pg", "strategy": "cluster"}
NODE_POOL_IN = {
    "cluster": "prod",
    "location": "us-central1",
    "autoscaling": {"minNodeCount": 0.0, "maxNodeCount": 4.0},
    "nodeConfig": {
        "machineType": "a3-highgpu-8g",
        "guestAccelerators": [
            {"type": "nvidia-h100-80gb", "count": 8.0, "gpuDriverInstallationConfig": {"gpuDriverVersion": "LATEST"}}
        ],
        "labels": {"gpufleet.io/pool": "h100"},
    },
}
GKE_CLUSTER_IN = {
    "location": "us-central1",
    "minMasterVersion": "1.33",
    "masterAuthorizedNetworksConfig": {"cidrBlocks": [{"cidrBlock": "203.0.113.0/24"}]},
}
OPERATOR_IN = {
    "name": "gpu-operator",
    "chart": "gpu-operator",
    "version": "v26.7.0",
    "repositoryOpts": {"repo": "https://helm.ngc.nvidia.com/nvidia"},
    "values": {"driver": {"enabled": True, "version": "580.95.05"}, "toolkit": {"enabled": True}},
}
AUTOSCALER_IN = {"name": "cluster-autoscaler", "chart": "cluster-autoscaler", "version": "9.46.0", "values": {}}
NTH_IN = {"name": "nth", "chart": "aws-node-termination-handler", "version": "0.27.6", "values": {}}
# A metrics pipeline (gpu-observability): the stack's own Prometheus.
PROMETHEUS_IN = {"name": "kube-prometheus-stack", "chart": "kube-prometheus-stack", "version": "88.5.3", "values": {}}
K3S_COMMAND_IN = {
    "connection": {"host": "192.0.2.10", "user": "ubuntu", "privateKey": "[secret]"},
    "create": "curl -sfL 'https://example/install.sh' | sudo INSTALL_K3S_VERSION='v1.34.1+k3s1' INSTALL_K3S_EXEC='server --secrets-encryption' sh -s -",
    "stdin": "[secret]",
}


def namespace(annotations: dict) -> dict:
    return {"metadata": {"name": "gpu-operator", "annotations": annotations}}


def device_plugin_config_map(config_yaml: str) -> dict:
    return {"metadata": {"name": "sharing", "namespace": "gpu-operator"}, "data": {"l4": config_yaml}}


def with_(base: dict, path: str, value) -> dict:
    """A deep copy of base with the dotted path set (value DELETE removes it)."""
    out = copy.deepcopy(base)
    node = out
    parts = path.split(".")
    for p in parts[:-1]:
        node = node[int(p)] if isinstance(node, list) else node.setdefault(p, {})
    last = parts[-1]
    if value is DELETE:
        node.pop(last, None)
    elif isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return out


DELETE = object()


def findings(resources: list[Registration], config: Optional[dict] = None, policy: Optional[str] = None) -> set:
    """{(policy, resource name or '', level)} the pack reports, through the in-process analyzer runner."""
    names = {r.urn: r.name for r in resources}
    out = set()
    for v in evaluate(resources, stack=STACK, config=config):
        if policy is None or v.policy == policy:
            out.add((v.policy, names.get(v.urn, v.urn), v.level))
    return out


def messages(resources: list[Registration], policy: str, config: Optional[dict] = None) -> list[str]:
    return [v.message for v in evaluate(resources, stack=STACK, config=config) if v.policy == policy]
