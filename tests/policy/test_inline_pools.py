"""Policy tests (layer 4): GPU pools declared inline in a cluster resource are judged like pools of their own (issue 50),
through the platforms' inline pool types (contract/policy.py `Inline`): an Azure Native ManagedCluster's
`agentPoolProfiles`, a classic pulumi-azure KubernetesCluster's `defaultNodePool`, a GKE Cluster's `nodePools` and its
own default pool (`nodeConfig` + `initialNodeCount`). Each finding is on the cluster's URN and its message names the
inline pool; a non-GPU inline pool (the system pool) is not judged. Exact sets and messages, small stacks."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from gpufleet.base import labels
from gpufleet.policies import inputs as I
from tests.policy.conftest import OPERATOR_NO_DRIVER
from tests.policy.fixtures import (
    DELETE, GKE_CLUSTER_IN, NODE_POOL_IN, OPERATOR_IN, PROMETHEUS_IN, findings, messages, res, with_,
)
from tests.policy.test_aks_classic_rules import CLASSIC_CLUSTER_IN, CLASSIC_POOL_IN
from tests.policy.test_aks_rules import AKS_CLUSTER_IN, POOL_IN, SPOT_POOL_IN

SCALE, TAINT, SPOT, CONFLICT = "gpu-pool-scale-to-zero", "gpu-pool-taint", "spot-pool-safety", "gpu-operator-driver-conflict"
M = "mandatory"

# An agent pool profile: the AgentPool's properties (the fixture's) without the AgentPool resource's own
# agentPoolName / resourceName / resourceGroupName, plus the profile's name (ManagedClusterAgentPoolProfileArgs).
INLINE_POOL_IN = {**{k: v for k, v in POOL_IN.items() if k not in ("agentPoolName", "resourceName", "resourceGroupName")},
                  "name": "h100"}
INLINE_SPOT_POOL_IN = {**{k: v for k, v in SPOT_POOL_IN.items() if k not in ("agentPoolName", "resourceName",
                                                                               "resourceGroupName")}, "name": "a100"}
SYSTEM_PROFILE = AKS_CLUSTER_IN["agentPoolProfiles"][0]
# The classic default node pool (KubernetesClusterDefaultNodePoolArgs @v6.39.0): no kubernetesClusterId, mode, priority
# or nodeTaints.
CLASSIC_DEFAULT_IN = {k: v for k, v in CLASSIC_POOL_IN.items() if k not in ("kubernetesClusterId", "mode", "priority",
                                                                            "nodeTaints")}
# A GKE cluster's node pool (ClusterNodePoolArgs): the NodePool's fields without its cluster and location, plus its name.
INLINE_NODE_POOL_IN = {**{k: v for k, v in NODE_POOL_IN.items() if k not in ("cluster", "location")}, "name": "h100"}
CPU_NODE_POOL_IN = {"name": "system", "initialNodeCount": 1.0, "nodeConfig": {"machineType": "e2-standard-4"}}


def aks(*profiles: dict, **cluster) -> list:
    """An Azure Native cluster with the system pool and these profiles inline, and nothing else but the operator and a
    metrics pipeline."""
    inputs = {**AKS_CLUSTER_IN, "agentPoolProfiles": [SYSTEM_PROFILE, *profiles], **cluster}
    return [res(I.AKS_CLUSTER, "prod", inputs, protect=True), res(I.HELM_RELEASE, "gpu-operator", OPERATOR_IN),
            res(I.HELM_RELEASE, "kube-prometheus-stack", PROMETHEUS_IN)]


def aks_classic(default: dict = CLASSIC_DEFAULT_IN) -> list:
    return [res(I.AKS_CLASSIC_CLUSTER, "prod", {**CLASSIC_CLUSTER_IN, "defaultNodePool": default}, protect=True),
            res(I.HELM_RELEASE, "gpu-operator", OPERATOR_IN), res(I.HELM_RELEASE, "kube-prometheus-stack", PROMETHEUS_IN)]


def gke(*pools: dict, **cluster) -> list:
    inputs = {**GKE_CLUSTER_IN, "monitoringConfig": {"managedPrometheus": {"enabled": True}}, **cluster}
    if pools:
        inputs["nodePools"] = [CPU_NODE_POOL_IN, *pools]
    return [res(I.GKE_CLUSTER, "prod", inputs, protect=True), res(I.HELM_RELEASE, "gpu-operator", OPERATOR_NO_DRIVER)]


def gke_default(node_config: dict = NODE_POOL_IN["nodeConfig"], **cluster) -> list:
    return gke(**{"initialNodeCount": 1.0, "nodeConfig": node_config, **cluster})


def resource(r) -> SimpleNamespace:
    """A registration as a stack rule's resource (resource_type, name, urn, props)."""
    return SimpleNamespace(resource_type=r.type, name=r.name, urn=r.urn, props=r.inputs)


def said(resources: list, policy: str, config: dict | None = None) -> list[str]:
    """The rule's messages without the policy description the runner puts on their first line."""
    return [m.split("\n", 1)[-1] for m in messages(resources, policy, config)]


# --- Azure Native ManagedCluster.agentPoolProfiles ------------------------------------------------------------------


def test_a_compliant_inline_agent_pool_and_the_system_pool_pass_every_rule():
    assert findings(aks(INLINE_POOL_IN, INLINE_SPOT_POOL_IN)) == set()


def test_an_inline_agent_pool_that_violates_is_reported_on_the_cluster_naming_the_pool():
    stack = aks(INLINE_POOL_IN, with_(INLINE_POOL_IN, "name", "h100b") | {"minCount": 1.0, "nodeTaints": []})
    assert findings(stack) == {(SCALE, "prod", M), (TAINT, "prod", M)}
    assert said(stack, SCALE) == [
        "GPU pool 'prod/agentPoolProfiles[2] (h100b)': minCount is 1, not 0: 1 idle node(s) cost $98.32/h ($98.32/h each, "
        "catalog on-demand estimate) while no GPU work runs"]
    assert said(stack, TAINT) == [
        "inline agent pool 'prod/agentPoolProfiles[2] (h100b)': no nvidia.com/gpu taint: add {key: nvidia.com/gpu, "
        "value: \"true\", effect: NO_SCHEDULE}"]


def test_an_inline_spot_pool_is_judged_by_the_agent_pool_s_spot_rules():
    stack = aks(with_(INLINE_SPOT_POOL_IN, "scaleSetEvictionPolicy", "Deallocate"))
    assert said(stack, SPOT) == [
        "spot GPU pool 'prod/agentPoolProfiles[1] (a100)': scaleSetEvictionPolicy is Deallocate: evicted nodes stay "
        "deallocated (counted against the VM quota, disks billed) and block the autoscaler; use Delete"]


def test_the_system_pool_is_not_judged_whatever_it_lacks():
    """A CPU system pool at minCount 1 without any taint: not a GPU pool, so no pool rule reads it."""
    assert findings(aks()) == set()
    assert I.gpu_pools([resource(r) for r in aks()]) == []


def test_an_inline_pool_with_no_driver_of_its_own_and_the_operator_s_driver_off():
    stack = aks(INLINE_POOL_IN)
    stack[1] = res(I.HELM_RELEASE, "gpu-operator", OPERATOR_NO_DRIVER)
    assert said(stack, CONFLICT) == [
        "pool 'prod/agentPoolProfiles[1] (h100)' has no preinstalled driver and release 'gpu-operator' does not install one "
        "(driver.enabled=false): its GPUs are unusable"]


# --- classic pulumi-azure KubernetesCluster.defaultNodePool ---------------------------------------------------------


def test_a_gpu_default_node_pool_cannot_carry_the_gpu_taint_and_is_told_so():
    assert findings(aks_classic()) == {(TAINT, "prod", M)}
    assert said(aks_classic(), TAINT) == [
        "classic default node pool 'prod/defaultNodePool (h100)': no nvidia.com/gpu taint, and the classic default node "
        "pool cannot declare it (pulumi-azure 6 has no defaultNodePool.nodeTaints: the AKS API allows no arbitrary taints "
        "on the default node pool): run the GPUs in a node pool of their own that carries it"]


def test_a_pulumi_azure_5_default_node_pool_with_the_gpu_taint_passes():
    """v5.89.3 still had defaultNodePool.nodeTaints (deprecated) and enableAutoScaling."""
    v5 = {**{k: v for k, v in CLASSIC_DEFAULT_IN.items() if k not in ("autoScalingEnabled", "gpuDriver")},
          "enableAutoScaling": True, "nodeTaints": ["nvidia.com/gpu=true:NoSchedule"]}
    assert findings(aks_classic(v5), policy=TAINT) == set()
    assert findings(aks_classic(with_(v5, "minCount", 1.0)), policy=SCALE) == {(SCALE, "prod", M)}
    # No gpuDriver before v6.27.0: AKS's default Install, so the operator must not install another.
    assert findings(aks_classic(v5), policy=CONFLICT) == {(CONFLICT, "gpu-operator", M)}


def test_only_critical_addons_is_the_default_pool_s_taint():
    _, default = I.inline_pool_types()[I.AKS_CLASSIC_CLUSTER][0]
    assert default.taints(I.PropsInputs({**CLASSIC_DEFAULT_IN, "onlyCriticalAddonsEnabled": True})) == [
        ("CriticalAddonsOnly", "true", "NoSchedule")]
    assert default.spot(I.PropsInputs({**CLASSIC_DEFAULT_IN, "priority": "Spot"})) is False  # the default pool cannot be Spot


def test_the_classic_cpu_default_pool_is_not_judged():
    assert findings(aks_classic(CLASSIC_CLUSTER_IN["defaultNodePool"])) == set()


# --- GKE Cluster.nodePools and its default pool -----------------------------------------------------------------------


def test_a_compliant_inline_gke_pool_and_the_cpu_pool_pass():
    assert findings(gke(INLINE_NODE_POOL_IN)) == set()


def test_an_inline_gke_pool_that_violates_is_reported_naming_the_pool():
    stack = gke(with_(INLINE_NODE_POOL_IN, "autoscaling.minNodeCount", 1.0))
    assert findings(stack) == {(SCALE, "prod", M)}
    assert said(stack, SCALE) == [
        "GPU pool 'prod/nodePools[1] (h100)': autoscaling.minNodeCount is 1, not 0: 1 idle node(s) cost $88.49/h "
        "($88.49/h each, catalog on-demand estimate)"]


def test_an_inline_gke_pool_s_weak_gpu_taint():
    weak = with_(INLINE_NODE_POOL_IN, "nodeConfig.taints", [{"key": "nvidia.com/gpu", "value": "present", "effect": "PREFER_NO_SCHEDULE"}])
    assert said(gke(weak), TAINT) == [
        "inline node pool 'prod/nodePools[1] (h100)': taint nvidia.com/gpu has effect PreferNoSchedule; use NoSchedule "
        "(PreferNoSchedule still lets CPU pods in)"]


def test_an_inline_gke_pool_s_sharing_settings_are_judged_as_a_node_pool_s():
    """gpu-sharing-valid reads NodePool resources by token; the inline pool has a NodePool's shape (shaped_as)."""
    mps = with_(INLINE_NODE_POOL_IN, "nodeConfig.guestAccelerators.0.gpuSharingConfig",
                {"gpuSharingStrategy": "MPS", "maxSharedClientsPerGpu": 64.0})
    assert said(gke(mps), "gpu-sharing-valid") == [
        "inline node pool 'prod/nodePools[1] (h100)': nodeConfig.guestAccelerators[0]: maxSharedClientsPerGpu is 64; GKE "
        "allows at most 48"]
    assert said(gke_default(mps["nodeConfig"]), "gpu-sharing-valid") == [
        "default node pool 'prod/nodeConfig (default pool)': nodeConfig.guestAccelerators[0]: maxSharedClientsPerGpu is "
        "64; GKE allows at most 48"]
    assert findings(gke(INLINE_NODE_POOL_IN), policy="gpu-sharing-valid") == set()


def test_the_default_pool_is_judged_from_the_cluster_s_own_node_config():
    assert said(gke_default(), SCALE) == [
        "GPU pool 'prod/nodeConfig (default pool)': autoscaling is not enabled, so the pool never scales to or from 0: "
        "1 idle node(s) cost $88.49/h ($88.49/h each, catalog on-demand estimate)"]


@pytest.mark.parametrize("cluster", [
    {"removeDefaultNodePool": True},  # deleted upon cluster creation
    {"enableAutopilot": True},  # an Autopilot cluster has no node pools of the program's
    {"nodePools": [CPU_NODE_POOL_IN]},  # nodeConfig is not used for a default pool next to nodePools
])
def test_a_default_pool_the_cluster_does_not_make_is_not_judged(cluster):
    assert findings(gke_default(**cluster), policy=SCALE) == set()


def test_a_cpu_default_pool_is_not_judged():
    assert findings(gke_default({"machineType": "e2-standard-4"})) == set()


# --- exemptions, names, the servicer ------------------------------------------------------------------------------------


BAD = with_(INLINE_POOL_IN, "minCount", 1.0)


@pytest.mark.parametrize("how", ["pool label", "cluster tag", "cluster name", "cluster URN", "pool name"])
def test_exemptions_reach_inline_pools(how):
    reason = "always-on-inference"
    pool, cluster, config = BAD, {}, None
    if how == "pool label":
        pool = {**BAD, "nodeLabels": {**BAD["nodeLabels"], labels.exempt_key(SCALE): reason}}
    elif how == "cluster tag":
        cluster = {"tags": {labels.exempt_key(SCALE): reason}}
    else:
        ref = {"cluster name": "prod", "cluster URN": res(I.AKS_CLUSTER, "prod", {}).urn,
               "pool name": "prod/agentPoolProfiles[1] (h100)"}[how]
        config = {SCALE: {"exemptions": {ref: reason}}}
    assert findings(aks(pool, **cluster), config, policy=SCALE) == set()
    assert findings(aks(BAD), policy=SCALE) == {(SCALE, "prod", M)}


def test_an_exemption_of_one_inline_pool_leaves_the_other_judged():
    other = {**BAD, "name": "h200"}
    config = {SCALE: {"exemptions": {"prod/agentPoolProfiles[1] (h100)": "always-on"}}}
    assert [m.split(":")[0] for m in said(aks(BAD, other), SCALE, config)] == ["GPU pool 'prod/agentPoolProfiles[2] (h200)'"]


def test_inline_pools_carry_the_cluster_s_urn_and_their_own_inputs():
    cluster = resource(aks(INLINE_POOL_IN)[0])
    pools = I.gpu_pools([cluster])
    assert [(p.name, p.urn, p.inline, p.kind.kind_name, p.instance_types, p.props["name"]) for p in pools] == [
        ("prod/agentPoolProfiles[1] (h100)", cluster.urn, True, "inline agent pool", ["Standard_ND96isr_H100_v5"], "h100")]


def test_a_pool_of_its_own_is_unchanged():
    agent_pool = resource(res(I.AKS_NODE_POOL, "h100", POOL_IN))
    [pool] = I.gpu_pools([agent_pool])
    assert (pool.name, pool.urn, pool.inline, pool.props is agent_pool.props) == ("h100", agent_pool.urn, False, True)


def test_the_pool_rules_judge_the_cluster_types_and_nothing_else_more():
    from gpufleet.policies.rules import gpu_sharing_valid, secure_defaults
    from gpufleet.policies.servicer import _judged_types

    assert I.pool_type_tokens() == frozenset(I.pool_types()) | {I.AKS_CLUSTER, I.AKS_CLASSIC_CLUSTER, I.GKE_CLUSTER}
    # A rule reading NodePools by token reads GKE clusters too (their inline pools); one reading no pool type, no more.
    assert _judged_types(gpu_sharing_valid.POLICY) == {I.GKE_NODE_POOL, I.CONFIG_MAP, "kubernetes:amd.com/v1alpha1:DeviceConfig",
                                                      I.GKE_CLUSTER}
    assert set(secure_defaults.CHECKS) <= _judged_types(secure_defaults.POLICY)
    assert I.GKE_NODE_POOL not in _judged_types(secure_defaults.POLICY)


def test_the_servicers_agree_on_inline_pools():
    """upstream's servicer, the fast one on the engine's Struct and on plain inputs: the same verdicts."""
    from tests.policy.test_servicer import same

    stack = (aks(BAD, with_(INLINE_SPOT_POOL_IN, "nodeTaints", DELETE)) + aks_classic()[:1]
             + gke(with_(INLINE_NODE_POOL_IN, "autoscaling.minNodeCount", 1.0))[:1])
    stack[-1] = res(I.GKE_CLUSTER, "prod-gke", stack[-1].inputs)
    stack[-2] = res(I.AKS_CLASSIC_CLUSTER, "prod-classic", stack[-2].inputs)
    found = same(stack)
    said_on = {(d[1] if d[0] == "analyze" else d[4], d[4] if d[0] == "analyze" else d[3]) for d in found if d[0] != "n/a"}
    named = {(urn, name) for urn, message in said_on for name in (
        "prod/agentPoolProfiles[1] (h100)", "prod/agentPoolProfiles[2] (a100)", "prod-classic/defaultNodePool (h100)",
        "prod-gke/nodePools[1] (h100)") if f"'{name}'" in message}
    assert named == {(stack[0].urn, "prod/agentPoolProfiles[1] (h100)"), (stack[0].urn, "prod/agentPoolProfiles[2] (a100)"),
                     (stack[-2].urn, "prod-classic/defaultNodePool (h100)"), (stack[-1].urn, "prod-gke/nodePools[1] (h100)"),
                     # the GKE pool's driver is GKE's (LATEST) and the operator release installs one too
                     (stack[1].urn, "prod-gke/nodePools[1] (h100)")}


def test_an_unknown_in_an_inline_gpu_pool_is_not_known_and_one_the_rules_do_not_read_is_harmless():
    from pulumi_policy.proxy import UNKNOWN_NUMBER_VALUE, UNKNOWN_STRING_VALUE

    assert findings(aks(with_(INLINE_POOL_IN, "minCount", UNKNOWN_NUMBER_VALUE)), policy=SCALE) == {(SCALE, "", "advisory")}
    # A subnet ID is an output of the program's own VNet, unknown at preview: no rule reads it.
    subnet = {"vnetSubnetID": UNKNOWN_STRING_VALUE}
    assert findings(aks(agentPoolProfiles=[SYSTEM_PROFILE | subnet, INLINE_POOL_IN | subnet])) == set()
