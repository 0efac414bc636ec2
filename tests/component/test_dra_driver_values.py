"""components/gpu_stack/dra_driver.py on small args (issue 56: what the DRA driver release and its objects say,
exactly, so a mutant of a branch fails here in a second rather than only in the chart renders): the values of both
designs, the claim templates at the GPU-count edge, MIG classes, ComputeDomains, the tolerations, which pools the
driver serves, and the component's children under mocks."""

from __future__ import annotations

from types import SimpleNamespace

import pulumi
import pulumi_kubernetes as k8s

from gpufleet.base import labels
from gpufleet.base.spec.features.dra import ComputeDomainSpec
from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.components.gpu_stack import dra_driver as D
from gpufleet.testing import run as run_under_mocks

SPOT = {"key": "gpufleet.io/spot", "value": "true", "effect": "NoSchedule"}


def test_dra_pool_values_turn_gpus_on_with_the_override_and_select_dra_nodes():
    args = D.DraDriverArgs(pools=[D.DraClaimPool("h100")], node_taints=[SPOT, SPOT], driver_root="/run/nvidia/driver")
    assert D.driver_values(args) == {
        "nvidiaDriverRoot": "/run/nvidia/driver",
        "gpuResourcesEnabledOverride": True,
        "resources": {"gpus": {"enabled": True}, "computeDomains": {"enabled": False}},
        "kubeletPlugin": {
            "nodeSelector": {labels.GPU_ALLOCATION_LABEL: "dra"},
            "tolerations": [{"key": "gpufleet.io/spot", "operator": "Exists", "effect": "NoSchedule"},
                            {"key": labels.GPU_TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"}],
        },
    }
    with_domain = D.DraDriverArgs(pools=[D.DraClaimPool("h100")], compute_domains=[ComputeDomainSpec(name="t", pool="h100")])
    assert D.driver_values(with_domain)["resources"]["computeDomains"] == {"enabled": True}
    assert D.driver_values(with_domain)["nvidiaDriverRoot"] == "/"


def test_channel_only_values_turn_gpus_off_and_pin_the_plugin_to_those_pools():
    args = D.DraDriverArgs(pools=[], channel_pools=["b", "a"], compute_domains=[ComputeDomainSpec(name="t", pool="a")],
                           driver_root="/home/kubernetes/bin/nvidia")
    assert D.driver_values(args) == {
        "nvidiaDriverRoot": "/home/kubernetes/bin/nvidia",
        "resources": {"gpus": {"enabled": False}, "computeDomains": {"enabled": True}},
        "kubeletPlugin": {
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": labels.POOL_LABEL, "operator": "In", "values": ["a", "b"]}]}]}}},
            "tolerations": [{"key": labels.GPU_TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"}],
        },
    }
    # DRA pools win over channel pools (the spec refuses both; the values never mix them).
    assert "gpuResourcesEnabledOverride" in D.driver_values(D.DraDriverArgs(pools=[D.DraClaimPool("x")], channel_pools=["a"]))


def _request(spec: dict) -> dict:
    (request,) = spec["spec"]["devices"]["requests"]
    return request


def test_claim_templates_one_gpu_and_a_whole_node_from_two_gpus():
    one = D.claim_templates(D.DraClaimPool("l4", gpus_per_node=1))
    assert list(one) == ["l4-gpu"]
    assert _request(one["l4-gpu"]) == {"name": "gpu", "exactly": {"deviceClassName": D.GPU_CLASS,
                                                                   "allocationMode": "ExactCount", "count": 1}}
    assert D.DraClaimPool("l4").gpus_per_node == 1 and list(D.claim_templates(D.DraClaimPool("l4"))) == ["l4-gpu"]
    assert list(D.claim_templates(D.DraClaimPool("unknown", gpus_per_node=0))) == ["unknown-gpu"]  # no node size known
    two = D.claim_templates(D.DraClaimPool("h100", gpus_per_node=2))
    assert list(two) == ["h100-gpu", "h100-node"]
    assert _request(two["h100-node"]) == {"name": "gpus", "exactly": {"deviceClassName": D.GPU_CLASS,
                                                                       "allocationMode": "ExactCount", "count": 2}}


def test_mig_pools_get_a_template_per_profile_and_no_whole_node():
    t = D.claim_templates(D.DraClaimPool("a100", ("1g.10gb", "3g.40gb"), gpus_per_node=8))
    assert list(t) == ["a100-gpu", "a100-mig-1g-10gb", "a100-mig-3g-40gb"]
    assert _request(t["a100-mig-3g-40gb"]) == {"name": "mig", "exactly": {
        "deviceClassName": "mig-3g-40gb.gpufleet.io", "allocationMode": "ExactCount", "count": 1}}
    assert D.mig_class("1g.10gb") == "mig-1g-10gb.gpufleet.io"
    assert D.mig_device_class("1g.10gb") == {"selectors": [{"cel": {"expression": (
        "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig' && "
        "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'")}}]}


def test_compute_domain_manifest_names_its_channel_template():
    cd = ComputeDomainSpec(name="train", pool="gb200", namespace="research", numNodes=2)
    assert D.compute_domain_manifest(cd) == {
        "apiVersion": "resource.nvidia.com/v1beta1", "kind": "ComputeDomain",
        "metadata": {"name": "train", "namespace": "research"},
        "spec": {"numNodes": 2, "channel": {"resourceClaimTemplate": {"name": "train-channel"}}},
    }


def _text(value: str) -> str:
    """`value` as a string built at run time, as a stack file's values are: an `is` in place of `==` fails on it."""
    return "".join(list(value))


def _pool(mode="mig", profile=None, profiles=(), layout=None, gpu="A100-80GB", allocation="dra", name="p"):
    return SimpleNamespace(name=name, gpu=gpu, allocation=_text(allocation),
                           sharing=SimpleNamespace(mode=_text(mode), profile=profile, profiles=list(profiles), layout=layout))


def test_mig_profiles_from_each_way_a_pool_names_them():
    from gpufleet.base import catalog

    assert D.mig_profiles(_pool(mode="none", profile="1g.10gb")) == ()
    assert D.mig_profiles(_pool(profile="1g.10gb", profiles=["2g.20gb"])) == ("1g.10gb",)
    assert D.mig_profiles(_pool(profiles=["2g.20gb", "1g.10gb"])) == ("2g.20gb", "1g.10gb")
    assert D.mig_profiles(_pool(layout="all-balanced")) == tuple(catalog.gpu("A100-80GB").mig.all_balanced)
    assert D.mig_profiles(_pool(layout="all-1g.10gb")) == ("1g.10gb",)
    assert D.mig_profiles(_pool(layout="mixed")) == ()
    assert D.mig_profiles(_pool()) == ()


def test_driver_pools_are_the_dra_pools_and_the_channel_pools(monkeypatch):
    pools = [_pool(name="a", allocation="dra"), _pool(name="b", allocation="device-plugin"),
             _pool(name="c", allocation="device-plugin")]
    monkeypatch.setattr(D, "channel_pools", lambda spec: ["c"])
    assert [p.name for p in D.driver_pools(None, pools)] == ["a", "c"]
    monkeypatch.setattr(D, "channel_pools", lambda spec: [])
    assert [p.name for p in D.driver_pools(None, pools)] == ["a"]


def _children(args: D.DraDriverArgs, facts: dict) -> dict:
    def program():
        provider = k8s.Provider("k8s", kubeconfig="apiVersion: v1\nkind: Config\n")
        access = ClusterAccess(name="c", platform="k3s", kubernetes_version="1.34", kubeconfig=pulumi.Output.from_input(""),
                               provider=provider, facts=facts)
        D.DraDriver("dra", args, access)

    return {r.name: r for r in run_under_mocks(program).registrations}


def test_the_component_s_children_names_and_inputs():
    args = D.DraDriverArgs(pools=[D.DraClaimPool("a100", ("1g.10gb",), 8)], namespaces=["default", "research"],
                           compute_domains=[ComputeDomainSpec(name="train", pool="a100", namespace="research", numNodes=2)])
    got = _children(args, {"critical_pods_need_quota": True})
    assert sorted(n for n in got if n.startswith("dra-")) == [
        "dra-cd-research-train", "dra-claim-default-a100-gpu", "dra-claim-default-a100-mig-1g-10gb",
        "dra-claim-research-a100-gpu", "dra-claim-research-a100-mig-1g-10gb", "dra-class-mig-1g-10gb.gpufleet.io",
        "dra-crds", "dra-ns", "dra-quota", "dra-release"]
    assert got["dra-ns"].inputs["metadata"] == {"name": D.NAMESPACE, "labels": {"pod-security.kubernetes.io/enforce": "privileged"}}
    assert got["dra-quota"].inputs["spec"]["scopeSelector"]["matchExpressions"][0]["values"] == [
        "system-node-critical", "system-cluster-critical"]
    assert got["dra-claim-research-a100-gpu"].inputs["metadata"] == {"name": "a100-gpu", "namespace": "research"}
    assert got["dra-cd-research-train"].inputs["spec"] == {"numNodes": 2.0, "channel": {"resourceClaimTemplate": {"name": "train-channel"}}}
    assert got["dra-release"].inputs["values"]["gpuResourcesEnabledOverride"] is True
    assert got["dra-release"].inputs["timeout"] == 600  # seconds Helm waits for the release (the component sets 600)
    assert got["dra-quota"].urn in got["dra-release"].dependencies  # the quota admits the critical pods first
    class_urn = got["dra-class-mig-1g-10gb.gpufleet.io"].urn
    assert class_urn in got["dra-claim-default-a100-mig-1g-10gb"].dependencies
    assert class_urn in got["dra-claim-research-a100-gpu"].dependencies
    # Its CRDs are applied from the pinned archive before the release (docs/upgrades.md), which then skips them.
    assert got["dra-release"].inputs.get("skipCrds") is True
    assert got["dra-crds"].urn in got["dra-release"].dependencies
    plain = _children(D.DraDriverArgs(pools=[D.DraClaimPool("l4")]), {})
    assert "dra-quota" not in plain and not [n for n in plain if n.startswith("dra-class-")]


def test_the_args_are_frozen_values():
    assert D.DraDriverArgs.__dataclass_params__.frozen and D.DraClaimPool.__dataclass_params__.frozen


def test_the_gpu_taint_is_tolerated_once_whether_or_not_the_pool_lists_it():
    gpu = {"key": labels.GPU_TAINT_KEY, "value": "true", "effect": "NoSchedule"}
    expected = [{"key": labels.GPU_TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"}]
    assert D.driver_values(D.DraDriverArgs(pools=[D.DraClaimPool("h100")], node_taints=[gpu]))["kubeletPlugin"]["tolerations"] == expected
    assert D.driver_values(D.DraDriverArgs(pools=[D.DraClaimPool("h100")]))["kubeletPlugin"]["tolerations"] == expected


def test_the_driver_root_stated_then_the_platform_s_then_the_operator_s_then_slash():
    from tests.helpers import example_config, load_config

    config = example_config("nvl72-k3s")
    spec = load_config(config)
    assert spec.gpu_operator.driver.source == "preinstalled" and spec.dra.driver_root is None
    assert D.dra_args(spec, spec.node_pools, {}).driver_root == "/"
    assert D.dra_args(spec, spec.node_pools, {"nvidia_driver_root": "/home/kubernetes/bin/nvidia"}).driver_root == "/home/kubernetes/bin/nvidia"
    config["gpufleet:gpuOperator"]["driver"] = {"source": "operator"}
    assert D.dra_args(load_config(config), spec.node_pools, {}).driver_root == "/run/nvidia/driver"
    # A stated root wins over the platform's (with the operator's driver only its own is allowed: the spec refuses
    # another, gpufleet/base/spec/checks/dra_checks.py, so the stack here keeps a preinstalled driver).
    config["gpufleet:gpuOperator"]["driver"] = {"source": "preinstalled"}
    config["gpufleet:dra"]["driverRoot"] = "/opt/nvidia"
    assert D.dra_args(load_config(config), spec.node_pools, {"nvidia_driver_root": "/x"}).driver_root == "/opt/nvidia"


def test_dra_args_split_the_dra_pools_from_the_device_plugin_pools():
    from tests.helpers import example_config, load_config

    config = example_config("nvl72-k3s")
    other = dict(config["gpufleet:nodePools"][0], name="gb200-b", allocation="device-plugin")
    other["hosts"] = [dict(h, name=f"{h['name']}-b", address=h["address"].rsplit(".", 1)[0] + f".{200 + i}")
                      for i, h in enumerate(other["hosts"])]
    config["gpufleet:nodePools"].append(other)
    spec = load_config(config)
    args = D.dra_args(spec, spec.node_pools, {})
    assert [p.name for p in args.pools] == ["gb200"] and args.channel_pools == ["gb200-b"]
    assert args.pools[0].gpus_per_node == 4  # a GB200 NVL72 host: four GPUs
    assert args.namespaces == list(spec.dra.namespaces) and args.compute_domains == list(spec.dra.compute_domains)
