"""The subscription's AKSInfinibandSupport feature (issue 53): InfiniBand stacks either declare it
(`cluster.aks.infinibandFeature: register`, kept when the stack is destroyed, the InfiniBand pools waiting for it) or
get the commands to register it in the plan's warnings (`manual`, the default); stacks without InfiniBand get neither."""

from __future__ import annotations

from tests.helpers import by_type, example_config, one, plan_config

FEATURE = "azure-native:features:SubscriptionFeatureRegistration"
POOL = "azure-native:containerservice:AgentPool"


def _plan(feature=None, rdma=True):
    c = example_config("aks-train")
    if feature:
        c["gpufleet:cluster"]["aks"]["infinibandFeature"] = feature
    if not rdma:
        c["gpufleet:nodePools"] = [p for p in c["gpufleet:nodePools"] if not p.get("rdma")]
    return plan_config(c, stack="aks-train")


def _warned(result) -> list[str]:
    return [str(w) for w in result.warnings if "infinibandFeature" in str(w)]


def test_register_declares_the_feature_retained_and_the_infiniband_pool_waits_for_it():
    result = _plan("register")
    reg = one(result, FEATURE)
    assert (reg.inputs["featureName"], reg.inputs["providerNamespace"]) == ("AKSInfinibandSupport", "Microsoft.ContainerService")
    assert reg.retain_on_delete and reg.name == "aks-train-infiniband-feature-registration"
    pools = {p.inputs["agentPoolName"]: p for p in by_type(result, POOL)}
    assert reg.urn in pools["h100ib"].dependencies and reg.urn not in pools["a100spot"].dependencies
    assert _warned(result) == []


def test_manual_warns_with_the_commands_and_declares_nothing():
    result = _plan()
    assert by_type(result, FEATURE) == []
    (warning,) = _warned(result)
    assert warning.startswith("stack 'aks-train': gpufleet:cluster.aks.infinibandFeature: InfiniBand pools (h100ib): register "
                              "the subscription's AKSInfinibandSupport feature once before `pulumi up`")
    assert "`az feature register --namespace Microsoft.ContainerService --name AKSInfinibandSupport`" in warning


def test_no_infiniband_pool_no_feature_and_no_warning():
    result = _plan("register", rdma=False)
    assert by_type(result, FEATURE) == [] and _warned(result) == []
