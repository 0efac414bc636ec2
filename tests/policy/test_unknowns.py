"""Preview-time unknowns never raise out of a rule: either the rule does not need the value, or the SDK
reports "can't be known during preview" as an advisory diagnostic."""

import pytest
from pulumi_policy.proxy import UNKNOWN_NUMBER_VALUE, UNKNOWN_STRING_VALUE

from gpufleet.policies import inputs as I
from tests.policy.conftest import OPERATOR_NO_DRIVER
from tests.policy.fixtures import (
    AUTOSCALER_IN, EKS_CLUSTER_IN, GKE_CLUSTER_IN, K3S_COMMAND_IN, LAUNCH_TEMPLATE_IN, NODE_GROUP_IN, NODE_POOL_IN,
    OPERATOR_IN, PLACEMENT_GROUP_IN, SPOT_NODE_GROUP_IN, findings, namespace, res,
)
from gpufleet.app.plan.policy_runner import evaluate
from tests.policy.test_aks_classic_rules import CLASSIC_CLUSTER_IN, CLASSIC_SPOT_POOL_IN
from tests.policy.test_aks_rules import AKS_CLUSTER_IN
from tests.policy.test_inline_pools import CLASSIC_DEFAULT_IN, INLINE_NODE_POOL_IN, INLINE_SPOT_POOL_IN

FIXTURES = [
    (I.EKS_CLUSTER, EKS_CLUSTER_IN),
    (I.EKS_NODE_GROUP, NODE_GROUP_IN),
    (I.EKS_NODE_GROUP, SPOT_NODE_GROUP_IN),
    (I.EC2_LAUNCH_TEMPLATE, LAUNCH_TEMPLATE_IN),
    (I.EC2_PLACEMENT_GROUP, PLACEMENT_GROUP_IN),
    (I.GKE_NODE_POOL, NODE_POOL_IN),
    (I.GKE_CLUSTER, GKE_CLUSTER_IN),
    (I.HELM_RELEASE, OPERATOR_IN),
    (I.HELM_RELEASE, OPERATOR_NO_DRIVER),
    (I.HELM_RELEASE, AUTOSCALER_IN),
    (I.REMOTE_COMMAND, K3S_COMMAND_IN),
    ("kubernetes:core/v1:Namespace", namespace({I.CUDA_VERSIONS_ANNOTATION: "13.0"})),
    # stateful-resource-protection
    ("kubernetes:core/v1:PersistentVolumeClaim", {"metadata": {"name": "ckpt", "annotations": {"a": "b"}}, "spec": {"accessModes": ["ReadWriteMany"]}}),
    ("kubernetes:storage.k8s.io/v1:StorageClass", {"metadata": {"name": "nfs"}, "provisioner": "nfs.csi.k8s.io", "reclaimPolicy": "Retain"}),
    ("aws:kms/key:Key", {"description": "k", "tags": {"a": "b"}}),
    ("gcp:container/cluster:Cluster", {**GKE_CLUSTER_IN, "resourceLabels": {"a": "b"}}),
    # secure-defaults on a privileged pod with its reason (the reason read only when something is granted)
    ("kubernetes:apps/v1:Deployment", {"metadata": {"name": "rdma"}, "spec": {"template": {
        "metadata": {"annotations": {"gpufleet.io/rdma-capabilities-reason": "RoCE"}},
        "spec": {"containers": [{"name": "c", "securityContext": {"privileged": True, "capabilities": {"add": ["IPC_LOCK"]}}}]}}}}),
    # AKS on the classic pulumi-azure, read through its own adapters (pool type, AKS_CLUSTERS)
    (I.AKS_CLASSIC_CLUSTER, {**CLASSIC_CLUSTER_IN, "privateClusterEnabled": False,
                             "apiServerAccessProfile": {"authorizedIpRanges": ["203.0.113.0/24"]}}),
    (I.AKS_CLASSIC_NODE_POOL, {**CLASSIC_SPOT_POOL_IN, "capacityReservationGroupId": "crg", "zones": ["1"]}),
    # GPU pools declared inline in a cluster (issue 50): the pool rules read the nested maps.
    (I.AKS_CLUSTER, {**AKS_CLUSTER_IN, "agentPoolProfiles": [INLINE_SPOT_POOL_IN]}),
    (I.AKS_CLASSIC_CLUSTER, {**CLASSIC_CLUSTER_IN, "defaultNodePool": CLASSIC_DEFAULT_IN}),
    (I.GKE_CLUSTER, {**GKE_CLUSTER_IN, "nodePools": [INLINE_NODE_POOL_IN]}),
    (I.GKE_CLUSTER, {**GKE_CLUSTER_IN, "initialNodeCount": 1.0, "nodeConfig": INLINE_NODE_POOL_IN["nodeConfig"]}),
]


def _paths(value, prefix=()):
    """Every key path of a nested input, leaves and containers alike."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield prefix + (k,)
            yield from _paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value[:2]):
            yield prefix + (i,)
            yield from _paths(v, prefix + (i,))


def _replace(value, path, unknown):
    import copy

    out = copy.deepcopy(value)
    node = out
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = unknown
    return out




@pytest.mark.parametrize("index", range(len(FIXTURES)))
def test_every_input_unknown_in_turn(index):
    type_, inputs = FIXTURES[index]
    others = [res(t, f"other-{i}", v) for i, (t, v) in enumerate(FIXTURES) if i != index]
    for path in _paths(inputs):
        unknown = UNKNOWN_NUMBER_VALUE if isinstance(_get(inputs, path), float) else UNKNOWN_STRING_VALUE
        subject = res(type_, "subject", _replace(inputs, path, unknown))
        violations = evaluate(others + [subject], stack="test")  # must not raise
        for v in violations:
            if "during preview" in v.message:
                assert v.level == "advisory" and "can't be known during preview" in v.message


def _get(value, path):
    for p in path:
        value = value[p]
    return value


def test_unknown_min_size_is_reported_as_not_known():
    inputs = dict(NODE_GROUP_IN, scalingConfig={"minSize": UNKNOWN_NUMBER_VALUE, "maxSize": 4.0})
    got = findings([res(I.EKS_NODE_GROUP, "h100", inputs), res(I.HELM_RELEASE, "ca", AUTOSCALER_IN)])
    assert got - {("gpu-observability", "h100", "advisory")} == {("gpu-pool-scale-to-zero", "", "advisory")}  # no metrics pipeline: its advisory too
