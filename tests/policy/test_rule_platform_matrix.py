"""The rule x platform matrix (issue 56): every rule of the pack, on every kind of resource by which a platform brings
GPU nodes (the registry's `PolicyTraits.node_kinds()`: EKS managed node groups and Karpenter NodePools, GKE node
pools, AKS agent pools (Azure Native) and node pools of the classic pulumi-azure, k3s hosts, existing-cluster pools, and
the pools declared inline in a cluster (issue 50: an AKS ManagedCluster's agentPoolProfiles[], a classic KubernetesCluster's
defaultNodePool, a GKE Cluster's nodePools[] and its default pool), keyed by `NodeKind.key`), has a PASSED and a FAILED
fixture (exact finding sets of that rule), or a reason it does not apply. A rule or a platform added without its row fails
`test_every_rule_and_node_kind_has_fixtures_or_a_reason`.

Each fixture is a small stack in the pulumi SDKs' input shapes (tests/policy/fixtures.py), the PASSED one valid and
the FAILED one changed in one field, so a mutant that flips the rule's condition for one platform fails here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import pytest

from gpufleet.base import labels, platforms
from gpufleet.policies import inputs as I
from gpufleet.policies.pack import POLICIES
from tests.policy.conftest import OPERATOR_NO_DRIVER
from tests.policy.fixtures import (
    AUTOSCALER_IN, EKS_CLUSTER_IN, GKE_CLUSTER_IN, K3S_COMMAND_IN, LAUNCH_TEMPLATE_IN, NODE_GROUP_IN, NODE_POOL_IN,
    OPERATOR_IN, PLACEMENT_GROUP_IN, PROMETHEUS_IN, SPOT_NODE_GROUP_IN, findings, namespace, res, with_,
)
from tests.policy.test_aks_classic_rules import CLASSIC_CLUSTER_IN, CLASSIC_POOL_IN, CLASSIC_SPOT_POOL_IN
from tests.policy.test_aks_rules import AKS_CLUSTER_IN, POOL_IN, SPOT_POOL_IN
from tests.policy.test_inline_pools import CLASSIC_DEFAULT_IN, INLINE_NODE_POOL_IN, INLINE_POOL_IN, INLINE_SPOT_POOL_IN
from tests.policy.test_inline_pools import aks as aks_cluster
from tests.policy.test_inline_pools import aks_classic as aks_classic_cluster
from tests.policy.test_inline_pools import gke as gke_cluster
from tests.policy.test_inline_pools import gke_default as gke_default_pool
from tests.policy.test_capacity_rules import (
    BLOCK_LT, BLOCK_NG, GKE_RESERVED, KARPENTER_IN, NODECLASS, NODECLASS_IN, NODEPOOL, NODEPOOL_IN, PARENT,
    RESERVED_NODEPOOL_IN,
)

EKS_NG, KARPENTER, GKE_NP, AKS_NP, AKS_CLASSIC_NP = (
    I.EKS_NODE_GROUP, NODEPOOL, I.GKE_NODE_POOL, I.AKS_NODE_POOL, I.AKS_CLASSIC_NODE_POOL)
K3S_HOST, EXISTING = I.REMOTE_COMMAND, "kubernetes:core/v1:NodePatch"
# Pools declared inline in a cluster (NodeKind.key: the cluster's token and where the pools are).
AKS_INLINE, AKS_CLASSIC_DEFAULT, GKE_INLINE, GKE_DEFAULT = (
    f"{I.AKS_CLUSTER} agentPoolProfiles[]", f"{I.AKS_CLASSIC_CLUSTER} defaultNodePool", f"{I.GKE_CLUSTER} nodePools[]",
    f"{I.GKE_CLUSTER} nodeConfig")
NAMESPACE = "kubernetes:core/v1:Namespace"
M, A = "mandatory", "advisory"


@dataclass(frozen=True)
class Case:
    """PASSED: the rule reports nothing; FAILED: exactly `expected` (resource name, level) of this rule."""

    passed: Callable[[], list]
    failed: Callable[[], list]
    expected: set
    config: dict | None = None


@dataclass(frozen=True)
class NotApplicable:
    reason: str


# --- small stacks, one per node kind --------------------------------------------------------------

def eks(ng: dict = NODE_GROUP_IN, operator: dict = OPERATOR_NO_DRIVER, *extra) -> list:
    return [res(I.EKS_CLUSTER, "prod", EKS_CLUSTER_IN), res(EKS_NG, "h100", ng),
            res(I.HELM_RELEASE, "gpu-operator", operator), res(I.HELM_RELEASE, "cluster-autoscaler", AUTOSCALER_IN),
            res(I.HELM_RELEASE, "kube-prometheus-stack", PROMETHEUS_IN), *extra]


def karpenter(np_: dict = NODEPOOL_IN, release: dict = KARPENTER_IN, *extra) -> list:
    return [res(KARPENTER, "np", np_), res(I.HELM_RELEASE, "karpenter", release),
            res(I.HELM_RELEASE, "kube-prometheus-stack", PROMETHEUS_IN), *extra]


def gke(np_: dict = NODE_POOL_IN, operator: dict = OPERATOR_NO_DRIVER, managed_prometheus: bool = True) -> list:
    cluster = with_(GKE_CLUSTER_IN, "monitoringConfig.managedPrometheus.enabled", managed_prometheus)
    return [res(I.GKE_CLUSTER, "prod", cluster), res(GKE_NP, "h100", np_), res(I.HELM_RELEASE, "gpu-operator", operator)]


def aks(pool: dict = POOL_IN, operator: dict = OPERATOR_IN, prometheus: bool = True) -> list:
    return [res(I.AKS_CLUSTER, "prod", AKS_CLUSTER_IN, protect=True), res(AKS_NP, "h100", pool),
            res(I.HELM_RELEASE, "gpu-operator", operator)] + (
        [res(I.HELM_RELEASE, "kube-prometheus-stack", PROMETHEUS_IN)] if prometheus else [])


def aks_classic(pool: dict = CLASSIC_POOL_IN, operator: dict = OPERATOR_IN, prometheus: bool = True) -> list:
    """aks() on the classic pulumi-azure provider's types and input names."""
    return [res(I.AKS_CLASSIC_CLUSTER, "prod", CLASSIC_CLUSTER_IN, protect=True), res(AKS_CLASSIC_NP, "h100", pool),
            res(I.HELM_RELEASE, "gpu-operator", operator)] + (
        [res(I.HELM_RELEASE, "kube-prometheus-stack", PROMETHEUS_IN)] if prometheus else [])


def k3s(command: dict = K3S_COMMAND_IN, operator: dict = OPERATOR_IN, annotations: dict | None = None,
        protect: bool = True, prometheus: bool = True) -> list:
    out = [res(K3S_HOST, "server", command, protect=protect), res(I.HELM_RELEASE, "gpu-operator", operator)]
    if annotations is not None:
        out.append(res(NAMESPACE, "gpu-operator-ns", namespace(annotations)))
    return out + ([res(I.HELM_RELEASE, "kube-prometheus-stack", PROMETHEUS_IN)] if prometheus else [])


NODE_PATCH_IN = {"metadata": {"name": "gpu-node-1", "labels": {labels.POOL_LABEL: "h100", labels.GPU_NODE_LABEL: "true"}}}


def existing(operator: dict = OPERATOR_IN, annotations: dict | None = None, prometheus: bool = True) -> list:
    out = [res(EXISTING, "h100-gpu-node-1", NODE_PATCH_IN), res(I.HELM_RELEASE, "gpu-operator", operator)]
    if annotations is not None:
        out.append(res(NAMESPACE, "gpu-operator-ns", namespace(annotations)))
    return out + ([res(I.HELM_RELEASE, "kube-prometheus-stack", PROMETHEUS_IN)] if prometheus else [])


def k3s_version(version: str) -> dict:
    return with_(K3S_COMMAND_IN, "create", K3S_COMMAND_IN["create"].replace("v1.34.1+k3s1", version))


DRIVER_ON = with_(OPERATOR_IN, "values.toolkit.enabled", False)  # installs the driver, not the toolkit
PREINSTALLED = {I.PREINSTALLED_DRIVER_ANNOTATION: "580.95.05"}
SPOT_NODEPOOL_NO_TAINT = with_(NODEPOOL_IN, "spec.template.spec.taints", [NODEPOOL_IN["spec"]["template"]["spec"]["taints"][0]])
AKS_SPOT = {**SPOT_POOL_IN, "agentPoolName": "h100"}
AKS_CLASSIC_SPOT = {**CLASSIC_SPOT_POOL_IN, "name": "h100"}
GKE_SPOT = with_(with_(NODE_POOL_IN, "nodeConfig.spot", True), "nodeConfig.taints",
                 [{"key": "cloud.google.com/gke-spot", "value": "true", "effect": "NO_SCHEDULE"}])
EFA_NG = with_(NODE_GROUP_IN, "launchTemplate", {"name": "h100-efa", "version": "1"})
IB_POOL = {**POOL_IN, "nodeLabels": {**POOL_IN["nodeLabels"], labels.RDMA_NODE_LABEL: "true"}, "availabilityZones": ["1"]}
CLASSIC_IB_POOL = {**CLASSIC_POOL_IN, "nodeLabels": {**CLASSIC_POOL_IN["nodeLabels"], labels.RDMA_NODE_LABEL: "true"},
                   "zones": ["1"]}
GPUDIRECT = [{"network": f"net-{i}", "subnetwork": f"sub-{i}"} for i in range(4)]
CUDA = {I.CUDA_VERSIONS_ANNOTATION: "12.8,13.0"}
OLD_DRIVER = with_(with_(OPERATOR_IN, "version", "v26.3.3"), "values.driver.version", "570.195.03")  # 13.0 needs 580


def efa(lt: dict = LAUNCH_TEMPLATE_IN) -> list:
    return [res(I.EC2_LAUNCH_TEMPLATE, "h100-lt", lt), res(I.EC2_PLACEMENT_GROUP, "h100-pg", PLACEMENT_GROUP_IN),
            res(EKS_NG, "h100", EFA_NG)]


def block(ng: dict = BLOCK_NG) -> list:
    return [res("gpufleet:eks:EksNodeGroup", "block", {}), res(EKS_NG, "block-ng", ng, parent=PARENT),
            res(I.EC2_LAUNCH_TEMPLATE, "block-lt", BLOCK_LT, parent=PARENT)]


def reserved_np(np_: dict = RESERVED_NODEPOOL_IN) -> list:
    return [res(KARPENTER, "np", np_), res(NODECLASS, "nc", NODECLASS_IN), res(I.HELM_RELEASE, "karpenter", KARPENTER_IN)]


def aks_inline(profile: dict = INLINE_POOL_IN, operator: dict = OPERATOR_IN, prometheus: bool = True) -> list:
    """aks() with the GPU pool inline in the ManagedCluster's agentPoolProfiles (beside its system pool)."""
    out = aks_cluster(profile)
    out[1] = res(I.HELM_RELEASE, "gpu-operator", operator)
    return out if prometheus else out[:-1]


def aks_classic_default(pool: dict = CLASSIC_DEFAULT_IN, operator: dict = OPERATOR_IN, prometheus: bool = True) -> list:
    """aks_classic() with the GPU pool as the KubernetesCluster's defaultNodePool."""
    out = aks_classic_cluster(pool)
    out[1] = res(I.HELM_RELEASE, "gpu-operator", operator)
    return out if prometheus else out[:-1]


def gke_inline(np_: dict = INLINE_NODE_POOL_IN, operator: dict = OPERATOR_NO_DRIVER, managed_prometheus: bool = True) -> list:
    """gke() with the GPU pool inline in the Cluster's nodePools (beside a CPU pool)."""
    out = gke_cluster(np_)
    out[0] = res(I.GKE_CLUSTER, "prod", with_(out[0].inputs, "monitoringConfig.managedPrometheus.enabled", managed_prometheus))
    out[1] = res(I.HELM_RELEASE, "gpu-operator", operator)
    return out


def gke_default(node_config: dict = NODE_POOL_IN["nodeConfig"], operator: dict = OPERATOR_NO_DRIVER,
                managed_prometheus: bool = True, **cluster) -> list:
    """gke() with the GPU pool as the Cluster's default pool (its own nodeConfig and initialNodeCount)."""
    out = gke_default_pool(node_config, **cluster)
    out[0] = res(I.GKE_CLUSTER, "prod", with_(out[0].inputs, "monitoringConfig.managedPrometheus.enabled", managed_prometheus))
    out[1] = res(I.HELM_RELEASE, "gpu-operator", operator)
    return out


AKS_INLINE_SPOT = {**INLINE_SPOT_POOL_IN, "name": "h100"}
AKS_INLINE_IB = {**INLINE_POOL_IN, "nodeLabels": {**INLINE_POOL_IN["nodeLabels"], labels.RDMA_NODE_LABEL: "true"},
                 "availabilityZones": ["1"]}
CLASSIC_DEFAULT_IB = {**CLASSIC_DEFAULT_IN, "nodeLabels": {**CLASSIC_DEFAULT_IN["nodeLabels"], labels.RDMA_NODE_LABEL: "true"},
                      "zones": ["1"]}
# pulumi-azure 5's default node pool: nodeTaints (deprecated, gone in 6), enableAutoScaling, no gpuDriver.
CLASSIC_DEFAULT_V5 = {**{k: v for k, v in CLASSIC_DEFAULT_IN.items() if k not in ("autoScalingEnabled", "gpuDriver")},
                      "enableAutoScaling": True, "nodeTaints": ["nvidia.com/gpu=true:NoSchedule"]}
GKE_INLINE_SPOT = with_(with_(INLINE_NODE_POOL_IN, "nodeConfig.spot", True), "nodeConfig.taints",
                        [{"key": "cloud.google.com/gke-spot", "value": "true", "effect": "NO_SCHEDULE"}])
GKE_WEAK_TAINT = [{"key": "nvidia.com/gpu", "value": "present", "effect": "PREFER_NO_SCHEDULE"}]
GKE_DEFAULT_SPOT = GKE_INLINE_SPOT["nodeConfig"]

NO_POOL_RESOURCE = "the pack reads no resource of this kind for it: {what}"
K3S_NO_POOL = "k3s hosts are machines the stack lists and joins by a remote command, not an autoscaled pool: {what}"
EXISTING_NO_POOL = "an existing cluster's nodes and their autoscaling are not resources of the program: {what}"
OPERATOR_ONLY = ("it judges the GPU Operator release (and declared CUDA versions), whatever platform runs it; its "
                 "platform-free fixtures are in tests/policy/test_gpu_versions.py")
CLUSTER_ONLY = ("it judges the control plane (cluster resources) and stateful resources, not pools: cluster fixtures per "
                "platform are in tests/policy/test_secure_defaults.py, test_aks_rules.py, "
                "test_stateful_resource_protection.py")
SPOT_NONE = "no spot capacity: {what}"

ZERO, ALIGN, SUPPORT, CONFLICT, SHARING, TAINT, SPOT, DIVERSE, RDMA, SECURE, MINOR, PROTECT, PLACE, OBSERVE = (
    "gpu-pool-scale-to-zero", "gpu-driver-cuda-alignment", "gpu-operator-version-support",
    "gpu-operator-driver-conflict", "gpu-sharing-valid", "gpu-pool-taint", "spot-pool-safety", "spot-pool-diversified",
    "rdma-placement", "secure-defaults", "gpu-cuda-minor-version-compat", "stateful-resource-protection",
    "reservation-placement", "gpu-observability")

MATRIX: dict[str, dict[str, Case | NotApplicable]] = {
    ZERO: {
        EKS_NG: Case(eks, lambda: eks(with_(NODE_GROUP_IN, "scalingConfig.minSize", 1.0)), {("h100", M)}),
        KARPENTER: Case(karpenter, lambda: karpenter(with_(NODEPOOL_IN, "spec.replicas", 2.0)), {("np", M)}),
        GKE_NP: Case(gke, lambda: gke(with_(NODE_POOL_IN, "autoscaling.minNodeCount", 1.0)), {("h100", M)}),
        # AKS's own branch: a pool at minCount 0 passes, minCount 1 fails (issue 56: `minimum > 0` -> `>= 0`).
        AKS_NP: Case(aks, lambda: aks(with_(POOL_IN, "minCount", 1.0)), {("h100", M)}),
        AKS_CLASSIC_NP: Case(aks_classic, lambda: aks_classic(with_(CLASSIC_POOL_IN, "minCount", 1.0)), {("h100", M)}),
        K3S_HOST: NotApplicable(K3S_NO_POOL.format(what="there is no minimum size to judge")),
        EXISTING: NotApplicable(EXISTING_NO_POOL.format(what="there is no minimum size to judge")),
    },
    ALIGN: {
        # A pool whose image ships the driver: its version must be declared to judge CUDA against it.
        EKS_NG: Case(lambda: eks(NODE_GROUP_IN, OPERATOR_NO_DRIVER, res(NAMESPACE, "ns", namespace({**CUDA, **PREINSTALLED}))),
                     lambda: eks(NODE_GROUP_IN, OPERATOR_NO_DRIVER, res(NAMESPACE, "ns", namespace(CUDA))),
                     {("", M)}, {ALIGN: {"requireKnownDriver": True}}),
        KARPENTER: NotApplicable(NO_POOL_RESOURCE.format(what="a NodePool does not say which AMI (driver) its nodes run "
                                                         "(its EC2NodeClass's amiSelectorTerms does); the operator "
                                                         "release's driver is judged platform-free")),
        GKE_NP: Case(lambda: gke(NODE_POOL_IN, OPERATOR_NO_DRIVER) + [res(NAMESPACE, "ns", namespace({**CUDA, **PREINSTALLED}))],
                     lambda: gke(NODE_POOL_IN, OPERATOR_NO_DRIVER) + [res(NAMESPACE, "ns", namespace(CUDA))],
                     {("", M)}, {ALIGN: {"requireKnownDriver": True}}),
        AKS_NP: Case(lambda: aks(with_(POOL_IN, "gpuProfile.driver", "None"), OLD_DRIVER) + [res(NAMESPACE, "ns", namespace({I.CUDA_VERSIONS_ANNOTATION: "12.8"}))],
                     lambda: aks(with_(POOL_IN, "gpuProfile.driver", "None"), OLD_DRIVER) + [res(NAMESPACE, "ns", namespace(CUDA))],
                     {("gpu-operator", M)}),
        AKS_CLASSIC_NP: Case(
            lambda: aks_classic(with_(CLASSIC_POOL_IN, "gpuDriver", "None"), OLD_DRIVER) + [res(NAMESPACE, "ns", namespace({I.CUDA_VERSIONS_ANNOTATION: "12.8"}))],
            lambda: aks_classic(with_(CLASSIC_POOL_IN, "gpuDriver", "None"), OLD_DRIVER) + [res(NAMESPACE, "ns", namespace(CUDA))],
            {("gpu-operator", M)}),
        K3S_HOST: Case(lambda: k3s(operator=OPERATOR_NO_DRIVER, annotations={**CUDA, **PREINSTALLED}),
                       lambda: k3s(operator=OPERATOR_NO_DRIVER, annotations={**CUDA, I.PREINSTALLED_DRIVER_ANNOTATION: "575.57.08"}),
                       {("gpu-operator-ns", M)}),
        EXISTING: Case(lambda: existing(OPERATOR_NO_DRIVER, {**CUDA, **PREINSTALLED}),
                       lambda: existing(OPERATOR_NO_DRIVER, {**CUDA, I.PREINSTALLED_DRIVER_ANNOTATION: "575.57.08"}),
                       {("gpu-operator-ns", M)}),
    },
    SUPPORT: {
        EKS_NG: NotApplicable(OPERATOR_ONLY + "; the EKS cluster's version is judged in test_gpu_versions.py"),
        KARPENTER: NotApplicable(OPERATOR_ONLY),
        GKE_NP: NotApplicable(OPERATOR_ONLY + "; the GKE cluster's version is judged in test_gpu_versions.py"),
        AKS_NP: NotApplicable(OPERATOR_ONLY + "; the AKS cluster's version: test_aks_rules.py"),
        AKS_CLASSIC_NP: NotApplicable(OPERATOR_ONLY + "; the classic AKS cluster's version: test_aks_classic_rules.py"),
        # The k3s server's install script carries the Kubernetes version the operator release must support.
        K3S_HOST: Case(lambda: k3s(k3s_version("v1.35.1+k3s1"), with_(OPERATOR_IN, "version", "v25.10.1")),
                       lambda: k3s(k3s_version("v1.36.0+k3s1"), with_(OPERATOR_IN, "version", "v25.10.1")),
                       {("gpu-operator", M)}),
        EXISTING: NotApplicable(OPERATOR_ONLY + "; an existing cluster's version is the stack's kubernetesVersion "
                                "(policy config), judged in test_gpu_versions.py"),
    },
    CONFLICT: {
        EKS_NG: Case(eks, lambda: eks(NODE_GROUP_IN, DRIVER_ON), {("gpu-operator", M)}),
        KARPENTER: NotApplicable(NO_POOL_RESOURCE.format(what="a NodePool does not name its AMI (its EC2NodeClass does), "
                                                         "so whether its nodes have a driver is not in its inputs")),
        GKE_NP: Case(gke, lambda: gke(NODE_POOL_IN, DRIVER_ON), {("gpu-operator", M)}),
        AKS_NP: Case(lambda: aks(with_(POOL_IN, "gpuProfile.driver", "None"), OPERATOR_IN),
                     lambda: aks(with_(POOL_IN, "gpuProfile.driver", "None"), OPERATOR_NO_DRIVER), {("h100", M)}),
        AKS_CLASSIC_NP: Case(lambda: aks_classic(with_(CLASSIC_POOL_IN, "gpuDriver", "None"), OPERATOR_IN),
                             lambda: aks_classic(with_(CLASSIC_POOL_IN, "gpuDriver", "None"), OPERATOR_NO_DRIVER), {("h100", M)}),
        # Hosts with their own driver are declared by the preinstalled-driver annotation.
        K3S_HOST: Case(lambda: k3s(operator=OPERATOR_NO_DRIVER, annotations=PREINSTALLED),
                       lambda: k3s(operator=DRIVER_ON, annotations=PREINSTALLED), {("gpu-operator", M)}),
        EXISTING: Case(lambda: existing(OPERATOR_NO_DRIVER, PREINSTALLED), lambda: existing(DRIVER_ON, PREINSTALLED),
                       {("gpu-operator", M)}),
    },
    SHARING: {
        EKS_NG: NotApplicable(NO_POOL_RESOURCE.format(what="sharing on EKS is the device plugin's ConfigMap, judged "
                                                      "platform-free in test_pool_rules.py")),
        KARPENTER: NotApplicable(NO_POOL_RESOURCE.format(what="sharing is the device plugin's ConfigMap (test_pool_rules.py)")),
        GKE_NP: Case(lambda: gke(with_(NODE_POOL_IN, "nodeConfig.guestAccelerators.0.gpuPartitionSize", "1g.10gb")),
                     lambda: gke(with_(NODE_POOL_IN, "nodeConfig.guestAccelerators.0.gpuPartitionSize", "1g.5gb")),
                     {("h100", M)}),
        AKS_NP: NotApplicable(NO_POOL_RESOURCE.format(what="sharing on AKS is the device plugin's ConfigMap (test_pool_rules.py)")),
        AKS_CLASSIC_NP: NotApplicable(NO_POOL_RESOURCE.format(what="sharing on AKS is the device plugin's ConfigMap "
                                                              "(test_pool_rules.py)")),
        K3S_HOST: NotApplicable(K3S_NO_POOL.format(what="sharing is the device plugin's ConfigMap (test_pool_rules.py)")),
        EXISTING: NotApplicable(EXISTING_NO_POOL.format(what="sharing is the device plugin's ConfigMap (test_pool_rules.py)")),
    },
    TAINT: {
        EKS_NG: Case(eks, lambda: eks(with_(NODE_GROUP_IN, "taints", [])), {("h100", M)}),
        KARPENTER: NotApplicable(NO_POOL_RESOURCE.format(what="the rule reads pool types only: gpufleet's own "
                                                         "NodePools take their taints from the pool's spec "
                                                         "(components/eks/karpenter_pool.py), and a hand-written "
                                                         "NodePool without the GPU taint is not judged (a gap in the "
                                                         "rule, not in its tests)")),
        # GKE taints GPU nodes itself: no taint passes, a PreferNoSchedule one fails.
        GKE_NP: Case(gke, lambda: gke(with_(NODE_POOL_IN, "nodeConfig.taints",
                                            [{"key": "nvidia.com/gpu", "value": "present", "effect": "PREFER_NO_SCHEDULE"}])),
                     {("h100", M)}),
        AKS_NP: Case(aks, lambda: aks(with_(POOL_IN, "nodeTaints", [])), {("h100", M)}),
        AKS_CLASSIC_NP: Case(aks_classic, lambda: aks_classic(with_(CLASSIC_POOL_IN, "nodeTaints", [])), {("h100", M)}),
        K3S_HOST: NotApplicable(K3S_NO_POOL.format(what="their taints travel in the k3s config, a secret; "
                                                   "gpufleet/base/node_labels.py always adds the GPU taint")),
        EXISTING: NotApplicable(EXISTING_NO_POOL.format(what="taints on an existing cluster's nodes are its owner's")),
    },
    SPOT: {
        EKS_NG: Case(lambda: eks(SPOT_NODE_GROUP_IN), lambda: eks(with_(SPOT_NODE_GROUP_IN, "taints", NODE_GROUP_IN["taints"])),
                     {("h100", M)}),
        KARPENTER: Case(karpenter, lambda: karpenter(SPOT_NODEPOOL_NO_TAINT), {("np", M)}),
        GKE_NP: Case(lambda: gke(GKE_SPOT), lambda: gke(with_(GKE_SPOT, "nodeConfig.taints", [])), {("h100", M)}),
        AKS_NP: Case(lambda: aks(AKS_SPOT), lambda: aks(with_(AKS_SPOT, "scaleSetEvictionPolicy", "Deallocate")), {("h100", M)}),
        AKS_CLASSIC_NP: Case(lambda: aks_classic(AKS_CLASSIC_SPOT),
                             lambda: aks_classic(with_(AKS_CLASSIC_SPOT, "evictionPolicy", "Deallocate")), {("h100", M)}),
        K3S_HOST: NotApplicable(SPOT_NONE.format(what="k3s hosts are machines the stack lists")),
        EXISTING: NotApplicable(SPOT_NONE.format(what="an existing cluster's capacity is not bought by the program")),
    },
    DIVERSE: {
        # At the minimum (2 types) passes, one below fails; three types (above it) pass too (test below).
        EKS_NG: Case(lambda: eks(SPOT_NODE_GROUP_IN), lambda: eks(with_(SPOT_NODE_GROUP_IN, "instanceTypes", ["g5.12xlarge"])),
                     {("h100", A)}),
        KARPENTER: NotApplicable(NO_POOL_RESOURCE.format(what="Karpenter chooses among every type its requirements "
                                                         "allow itself; the rule judges node groups' instance lists")),
        GKE_NP: NotApplicable("one machine type per node pool by construction (GKE API NodePool.config.machineType)"),
        AKS_NP: NotApplicable("one VM size per agent pool by construction (AKS API agentPool vmSize)"),
        AKS_CLASSIC_NP: NotApplicable("one VM size per node pool by construction (pulumi-azure KubernetesClusterNodePool vmSize)"),
        K3S_HOST: NotApplicable(SPOT_NONE.format(what="k3s hosts are machines the stack lists")),
        EXISTING: NotApplicable(SPOT_NONE.format(what="an existing cluster's capacity is not bought by the program")),
    },
    RDMA: {
        EKS_NG: Case(efa, lambda: efa(with_(LAUNCH_TEMPLATE_IN, "networkInterfaces", LAUNCH_TEMPLATE_IN["networkInterfaces"][:4])),
                     {("h100-lt", M)}),
        KARPENTER: NotApplicable(NO_POOL_RESOURCE.format(what="gpufleet puts EFA pools on managed node groups "
                                                         "(components/eks/efa.py); an EC2NodeClass's interfaces are not read")),
        GKE_NP: Case(lambda: gke(with_(NODE_POOL_IN, "networkConfig", {"additionalNodeNetworkConfigs": GPUDIRECT})),
                     lambda: gke(with_(NODE_POOL_IN, "networkConfig", {"additionalNodeNetworkConfigs": GPUDIRECT[:2]})),
                     {("h100", M)}),
        AKS_NP: Case(lambda: aks(IB_POOL), lambda: aks({**IB_POOL, "availabilityZones": ["1", "2"]}), {("h100", M)}),
        AKS_CLASSIC_NP: Case(lambda: aks_classic(CLASSIC_IB_POOL), lambda: aks_classic({**CLASSIC_IB_POOL, "zones": ["1", "2"]}),
                             {("h100", M)}),
        K3S_HOST: NotApplicable(K3S_NO_POOL.format(what="their NICs are the hosts' own, not in the program's inputs")),
        EXISTING: NotApplicable(EXISTING_NO_POOL.format(what="their NICs are not in the program's inputs")),
    },
    SECURE: {
        EKS_NG: NotApplicable(CLUSTER_ONLY),
        KARPENTER: NotApplicable(CLUSTER_ONLY),
        GKE_NP: NotApplicable(CLUSTER_ONLY),
        AKS_NP: NotApplicable(CLUSTER_ONLY),
        AKS_CLASSIC_NP: NotApplicable(CLUSTER_ONLY + "; the classic cluster's in test_aks_classic_rules.py"),
        # A k3s server host: secrets encryption at rest in its install script.
        K3S_HOST: Case(k3s, lambda: k3s(with_(K3S_COMMAND_IN, "create", K3S_COMMAND_IN["create"].replace(" --secrets-encryption", ""))),
                       {("server", M)}),
        EXISTING: NotApplicable(EXISTING_NO_POOL.format(what="the control plane is not the program's either")),
    },
    MINOR: {
        EKS_NG: NotApplicable(OPERATOR_ONLY), KARPENTER: NotApplicable(OPERATOR_ONLY),
        GKE_NP: NotApplicable(OPERATOR_ONLY), AKS_NP: NotApplicable(OPERATOR_ONLY),
        AKS_CLASSIC_NP: NotApplicable(OPERATOR_ONLY),
        # Declared host drivers (k3s hosts, an existing cluster's nodes) are judged like the operator's.
        K3S_HOST: Case(lambda: k3s(operator=OPERATOR_NO_DRIVER, annotations={I.CUDA_VERSIONS_ANNOTATION: "12.8", **PREINSTALLED}),
                       lambda: k3s(operator=OPERATOR_NO_DRIVER, annotations={I.CUDA_VERSIONS_ANNOTATION: "12.9",
                                                                            I.PREINSTALLED_DRIVER_ANNOTATION: "535.274.02"}),
                       {("gpu-operator-ns", A)}),
        EXISTING: Case(lambda: existing(OPERATOR_NO_DRIVER, {I.CUDA_VERSIONS_ANNOTATION: "12.8", **PREINSTALLED}),
                       lambda: existing(OPERATOR_NO_DRIVER, {I.CUDA_VERSIONS_ANNOTATION: "12.9",
                                                            I.PREINSTALLED_DRIVER_ANNOTATION: "535.274.02"}),
                       {("gpu-operator-ns", A)}),
    },
    PROTECT: {
        EKS_NG: NotApplicable(CLUSTER_ONLY), KARPENTER: NotApplicable(CLUSTER_ONLY),
        GKE_NP: NotApplicable(CLUSTER_ONLY), AKS_NP: NotApplicable(CLUSTER_ONLY),
        AKS_CLASSIC_NP: NotApplicable(CLUSTER_ONLY + "; the classic cluster's in test_aks_classic_rules.py"),
        # A k3s server host holds the datastore: protected passes, unprotected fails.
        K3S_HOST: Case(k3s, lambda: k3s(protect=False), {("server", M)}),
        EXISTING: NotApplicable(EXISTING_NO_POOL.format(what="its control plane and datastore are not the program's")),
    },
    PLACE: {
        EKS_NG: Case(block, lambda: block(with_(BLOCK_NG, "instanceTypes", ["p5e.48xlarge"])), {("block-ng", M)}),
        # A NodePool allowing another type besides its reservation's (issue 56: `!=` -> `is`).
        KARPENTER: Case(reserved_np, lambda: reserved_np(with_(RESERVED_NODEPOOL_IN, "spec.template.spec.requirements.0.values",
                                                               ["p5.48xlarge", "p5e.48xlarge"])), {("np", M)}),
        GKE_NP: Case(lambda: [res(GKE_NP, "h100", GKE_RESERVED)],
                     lambda: [res(GKE_NP, "h100", with_(GKE_RESERVED, "nodeLocations", ["us-central1-a"]))], {("h100", M)}),
        AKS_NP: NotApplicable("an AKS capacity reservation group is zonal or regional by the group itself and holds the "
                              "pool's VM size by its own API (AKS: capacityReservationGroupID), so the pool has no "
                              "placement of its own to get wrong; AksNodePool declares no reservation_problems"),
        AKS_CLASSIC_NP: NotApplicable("as for the agent pool: the capacity reservation group (pulumi-azure: "
                                      "capacityReservationGroupId) holds the placement; AksClassicNodePool declares no "
                                      "reservation_problems"),
        K3S_HOST: NotApplicable(K3S_NO_POOL.format(what="no reserved capacity")),
        EXISTING: NotApplicable(EXISTING_NO_POOL.format(what="no reserved capacity")),
    },
    OBSERVE: {
        EKS_NG: Case(eks, lambda: eks()[:-1], {("h100", A)}),
        KARPENTER: Case(karpenter, lambda: karpenter()[:-1], {("np", A)}),
        GKE_NP: Case(gke, lambda: gke(managed_prometheus=False), {("h100", A)}),
        AKS_NP: Case(aks, lambda: aks(prometheus=False), {("h100", A)}),
        AKS_CLASSIC_NP: Case(aks_classic, lambda: aks_classic(prometheus=False), {("h100", A)}),
        # No pool resource: the finding is on the GPU Operator release.
        K3S_HOST: Case(k3s, lambda: k3s(prometheus=False), {("gpu-operator", A)}),
        EXISTING: Case(existing, lambda: existing(prometheus=False), {("gpu-operator", A)}),
    },
}

GKE_INLINE_RESERVED = with_(with_(with_(INLINE_NODE_POOL_IN, "nodeLocations", ["us-central1-b"]), "nodeConfig.reservationAffinity",
                                  GKE_RESERVED["nodeConfig"]["reservationAffinity"]),
                            "nodeConfig.resourceLabels", GKE_RESERVED["nodeConfig"]["resourceLabels"])
INLINE_DEFAULT_NOTE = ("the default pool's Kubernetes version is the cluster's, judged on the cluster resource "
                       "(test_aks_classic_rules.py, test_gpu_versions.py)")

# The cells of the pools declared inline in a cluster (issue 50): findings are on the cluster ("prod"), whose messages
# name the inline pool (tests/policy/test_inline_pools.py asserts them).
INLINE_CELLS: dict[str, dict[str, Case | NotApplicable]] = {
    ZERO: {
        AKS_INLINE: Case(aks_inline, lambda: aks_inline(with_(INLINE_POOL_IN, "minCount", 1.0)), {("prod", M)}),
        AKS_CLASSIC_DEFAULT: Case(aks_classic_default, lambda: aks_classic_default(with_(CLASSIC_DEFAULT_IN, "minCount", 1.0)),
                                  {("prod", M)}),
        GKE_INLINE: Case(gke_inline, lambda: gke_inline(with_(INLINE_NODE_POOL_IN, "autoscaling.minNodeCount", 1.0)), {("prod", M)}),
        # The cluster cannot autoscale its default pool: a GPU default pool is always a finding; removed, it is none.
        GKE_DEFAULT: Case(lambda: gke_default(removeDefaultNodePool=True), gke_default, {("prod", M)}),
    },
    ALIGN: {
        AKS_INLINE: Case(lambda: aks_inline(with_(INLINE_POOL_IN, "gpuProfile.driver", "None"), OLD_DRIVER) + [res(NAMESPACE, "ns", namespace({I.CUDA_VERSIONS_ANNOTATION: "12.8"}))],
                         lambda: aks_inline(with_(INLINE_POOL_IN, "gpuProfile.driver", "None"), OLD_DRIVER) + [res(NAMESPACE, "ns", namespace(CUDA))],
                         {("gpu-operator", M)}),
        AKS_CLASSIC_DEFAULT: Case(
            lambda: aks_classic_default(with_(CLASSIC_DEFAULT_IN, "gpuDriver", "None"), OLD_DRIVER) + [res(NAMESPACE, "ns", namespace({I.CUDA_VERSIONS_ANNOTATION: "12.8"}))],
            lambda: aks_classic_default(with_(CLASSIC_DEFAULT_IN, "gpuDriver", "None"), OLD_DRIVER) + [res(NAMESPACE, "ns", namespace(CUDA))],
            {("gpu-operator", M)}),
        GKE_INLINE: Case(lambda: gke_inline() + [res(NAMESPACE, "ns", namespace({**CUDA, **PREINSTALLED}))],
                         lambda: gke_inline() + [res(NAMESPACE, "ns", namespace(CUDA))], {("", M)}, {ALIGN: {"requireKnownDriver": True}}),
        GKE_DEFAULT: Case(lambda: gke_default() + [res(NAMESPACE, "ns", namespace({**CUDA, **PREINSTALLED}))],
                          lambda: gke_default() + [res(NAMESPACE, "ns", namespace(CUDA))], {("", M)}, {ALIGN: {"requireKnownDriver": True}}),
    },
    SUPPORT: {
        AKS_INLINE: NotApplicable(OPERATOR_ONLY + "; the ManagedCluster's own version: test_aks_rules.py"),
        AKS_CLASSIC_DEFAULT: NotApplicable(OPERATOR_ONLY + "; " + INLINE_DEFAULT_NOTE),
        GKE_INLINE: NotApplicable(OPERATOR_ONLY + "; the cluster's minMasterVersion: test_gpu_versions.py"),
        GKE_DEFAULT: NotApplicable(OPERATOR_ONLY + "; " + INLINE_DEFAULT_NOTE),
    },
    CONFLICT: {
        AKS_INLINE: Case(lambda: aks_inline(with_(INLINE_POOL_IN, "gpuProfile.driver", "None"), OPERATOR_IN),
                         lambda: aks_inline(with_(INLINE_POOL_IN, "gpuProfile.driver", "None"), OPERATOR_NO_DRIVER), {("prod", M)}),
        AKS_CLASSIC_DEFAULT: Case(lambda: aks_classic_default(with_(CLASSIC_DEFAULT_IN, "gpuDriver", "None"), OPERATOR_IN),
                                  lambda: aks_classic_default(with_(CLASSIC_DEFAULT_IN, "gpuDriver", "None"), OPERATOR_NO_DRIVER),
                                  {("prod", M)}),
        GKE_INLINE: Case(gke_inline, lambda: gke_inline(INLINE_NODE_POOL_IN, DRIVER_ON), {("gpu-operator", M)}),
        GKE_DEFAULT: Case(gke_default, lambda: gke_default(operator=DRIVER_ON), {("gpu-operator", M)}),
    },
    SHARING: {
        AKS_INLINE: NotApplicable(NO_POOL_RESOURCE.format(what="sharing on AKS is the device plugin's ConfigMap (test_pool_rules.py)")),
        AKS_CLASSIC_DEFAULT: NotApplicable(NO_POOL_RESOURCE.format(what="sharing on AKS is the device plugin's ConfigMap "
                                                                   "(test_pool_rules.py)")),
        # The inline pool has a NodePool's shape (its pool type's shaped_as), so the NodePool check judges it.
        GKE_INLINE: Case(lambda: gke_inline(with_(INLINE_NODE_POOL_IN, "nodeConfig.guestAccelerators.0.gpuPartitionSize", "1g.10gb")),
                         lambda: gke_inline(with_(INLINE_NODE_POOL_IN, "nodeConfig.guestAccelerators.0.gpuPartitionSize", "1g.5gb")),
                         {("prod", M)}),
        GKE_DEFAULT: Case(lambda: gke_default(with_(NODE_POOL_IN["nodeConfig"], "guestAccelerators.0.gpuPartitionSize", "1g.10gb")),
                          lambda: gke_default(with_(NODE_POOL_IN["nodeConfig"], "guestAccelerators.0.gpuPartitionSize", "1g.5gb")),
                          {("prod", M)}),
    },
    TAINT: {
        AKS_INLINE: Case(aks_inline, lambda: aks_inline(with_(INLINE_POOL_IN, "nodeTaints", [])), {("prod", M)}),
        # pulumi-azure 6's default pool cannot declare the taint (no defaultNodePool.nodeTaints); 5's still could.
        AKS_CLASSIC_DEFAULT: Case(lambda: aks_classic_default(CLASSIC_DEFAULT_V5),
                                  lambda: aks_classic_default(with_(CLASSIC_DEFAULT_V5, "nodeTaints", [])), {("prod", M)}),
        GKE_INLINE: Case(gke_inline, lambda: gke_inline(with_(INLINE_NODE_POOL_IN, "nodeConfig.taints", GKE_WEAK_TAINT)), {("prod", M)}),
        GKE_DEFAULT: Case(gke_default, lambda: gke_default(with_(NODE_POOL_IN["nodeConfig"], "taints", GKE_WEAK_TAINT)), {("prod", M)}),
    },
    SPOT: {
        AKS_INLINE: Case(lambda: aks_inline(AKS_INLINE_SPOT), lambda: aks_inline(with_(AKS_INLINE_SPOT, "scaleSetEvictionPolicy", "Deallocate")),
                         {("prod", M)}),
        AKS_CLASSIC_DEFAULT: NotApplicable("the default node pool cannot be Spot: KubernetesClusterDefaultNodePoolArgs has no "
                                           "priority (pulumi/pulumi-azure v6.39.0)"),
        GKE_INLINE: Case(lambda: gke_inline(GKE_INLINE_SPOT), lambda: gke_inline(with_(GKE_INLINE_SPOT, "nodeConfig.taints", [])),
                         {("prod", M)}),
        GKE_DEFAULT: Case(lambda: gke_default(GKE_DEFAULT_SPOT), lambda: gke_default(with_(GKE_DEFAULT_SPOT, "taints", [])),
                          {("prod", M)}),
    },
    DIVERSE: {
        AKS_INLINE: NotApplicable("one VM size per agent pool profile by construction (AKS API vmSize)"),
        AKS_CLASSIC_DEFAULT: NotApplicable("one VM size per node pool, and the default pool cannot be Spot"),
        GKE_INLINE: NotApplicable("one machine type per node pool by construction (ClusterNodePool nodeConfig.machineType)"),
        GKE_DEFAULT: NotApplicable("one machine type per node pool by construction (the cluster's nodeConfig.machineType)"),
    },
    RDMA: {
        AKS_INLINE: Case(lambda: aks_inline(AKS_INLINE_IB), lambda: aks_inline({**AKS_INLINE_IB, "availabilityZones": ["1", "2"]}),
                         {("prod", M)}),
        AKS_CLASSIC_DEFAULT: Case(lambda: aks_classic_default(CLASSIC_DEFAULT_IB),
                                  lambda: aks_classic_default({**CLASSIC_DEFAULT_IB, "zones": ["1", "2"]}), {("prod", M)}),
        GKE_INLINE: Case(lambda: gke_inline(with_(INLINE_NODE_POOL_IN, "networkConfig", {"additionalNodeNetworkConfigs": GPUDIRECT})),
                         lambda: gke_inline(with_(INLINE_NODE_POOL_IN, "networkConfig", {"additionalNodeNetworkConfigs": GPUDIRECT[:2]})),
                         {("prod", M)}),
        GKE_DEFAULT: NotApplicable("a cluster has no networkConfig.additionalNodeNetworkConfigs of its own (pulumi-gcp 10.2.0 "
                                   "ClusterArgs), so its default pool cannot be a GPUDirect pool"),
    },
    SECURE: {key: NotApplicable(CLUSTER_ONLY + "; the cluster resource's own fields are judged whatever pools it declares")
             for key in (AKS_INLINE, AKS_CLASSIC_DEFAULT, GKE_INLINE, GKE_DEFAULT)},
    MINOR: {key: NotApplicable(OPERATOR_ONLY) for key in (AKS_INLINE, AKS_CLASSIC_DEFAULT, GKE_INLINE, GKE_DEFAULT)},
    PROTECT: {key: NotApplicable(CLUSTER_ONLY + "; the cluster resource's protect option, whatever pools it declares")
              for key in (AKS_INLINE, AKS_CLASSIC_DEFAULT, GKE_INLINE, GKE_DEFAULT)},
    PLACE: {
        AKS_INLINE: NotApplicable("as for the agent pool: the capacity reservation group holds the placement "
                                  "(capacityReservationGroupID); AksInlineAgentPool declares no reservation_problems"),
        AKS_CLASSIC_DEFAULT: NotApplicable("as for the classic node pool: the capacity reservation group holds the placement "
                                           "(capacityReservationGroupId)"),
        GKE_INLINE: Case(lambda: [res(I.GKE_CLUSTER, "prod", {**GKE_CLUSTER_IN, "nodePools": [GKE_INLINE_RESERVED]})],
                         lambda: [res(I.GKE_CLUSTER, "prod", {**GKE_CLUSTER_IN, "nodePools": [
                             with_(GKE_INLINE_RESERVED, "nodeLocations", ["us-central1-a"])]})], {("prod", M)}),
        GKE_DEFAULT: Case(lambda: [res(I.GKE_CLUSTER, "prod", {**GKE_CLUSTER_IN, "initialNodeCount": 1.0,
                                                               "nodeLocations": ["us-central1-b"], "nodeConfig": GKE_RESERVED["nodeConfig"]})],
                          lambda: [res(I.GKE_CLUSTER, "prod", {**GKE_CLUSTER_IN, "initialNodeCount": 1.0,
                                                               "nodeLocations": ["us-central1-a"], "nodeConfig": GKE_RESERVED["nodeConfig"]})],
                          {("prod", M)}),
    },
    OBSERVE: {
        AKS_INLINE: Case(aks_inline, lambda: aks_inline(prometheus=False), {("prod", A)}),
        AKS_CLASSIC_DEFAULT: Case(aks_classic_default, lambda: aks_classic_default(prometheus=False), {("prod", A)}),
        GKE_INLINE: Case(gke_inline, lambda: gke_inline(managed_prometheus=False), {("prod", A)}),
        GKE_DEFAULT: Case(gke_default, lambda: gke_default(managed_prometheus=False), {("prod", A)}),
    },
}
for _rule, _cells in INLINE_CELLS.items():
    MATRIX[_rule].update(_cells)


def _node_kinds() -> list[tuple[str, str, str]]:
    """(platform, kind name, key) of every registered platform: the key is the type token, and where the pools are for
    a pool declared inline (NodeKind.key)."""
    return [(p, k.name, k.key) for p in platforms.names() for k in platforms.get(p).policy.node_kinds()]


def test_every_rule_and_node_kind_has_fixtures_or_a_reason():
    rules = sorted(p.name for p in POLICIES)
    missing = [f"{rule} x {platform} {name} ({token})" for rule in rules for platform, name, token in _node_kinds()
               if token not in MATRIX.get(rule, {})]
    assert missing == []
    assert sorted(MATRIX) == rules  # no row for a rule the pack no longer has
    tokens = {token for _, _, token in _node_kinds()}
    assert {rule: sorted(set(row) - tokens) for rule, row in MATRIX.items() if set(row) - tokens} == {}
    assert all(c.reason.strip() for row in MATRIX.values() for c in row.values() if isinstance(c, NotApplicable))


def test_the_registry_names_each_kind_the_issue_lists():
    assert {(p, name) for p, name, _ in _node_kinds()} >= {
        ("eks", "managed node group"), ("eks", "Karpenter NodePool"), ("gke", "node pool"), ("aks", "agent pool"),
        ("k3s", "k3s host"), ("existing", "existing-cluster pool")}


def test_the_registry_names_each_inline_pool_kind_issue_50_lists():
    assert {(p, name, key) for p, name, key in _node_kinds() if " " in key} == {
        ("aks", "inline agent pool", AKS_INLINE), ("aks", "classic default node pool", AKS_CLASSIC_DEFAULT),
        ("gke", "inline node pool", GKE_INLINE), ("gke", "default node pool", GKE_DEFAULT)}


CASES = [(rule, token, case) for rule, row in MATRIX.items() for token, case in row.items() if isinstance(case, Case)]


KIND_NAMES = {token: f"{platform}-{name.replace(' ', '-')}" for platform, name, token in _node_kinds()}


@pytest.mark.parametrize("rule,token,case", CASES, ids=[f"{r}-{KIND_NAMES.get(t, t)}" for r, t, _ in CASES])
def test_PASSED_and_FAILED(rule, token, case):
    assert findings(case.passed(), case.config, policy=rule) == set()
    assert findings(case.failed(), case.config, policy=rule) == {(rule, name, level) for name, level in case.expected}
