"""DRA pools and NVLink sizing (issue 34): the spec refuses what cannot run, naming stack, key, value and what is
allowed; the example NVL72 stacks load; the scale-to-zero rule flags a DRA pool at minimum 0."""

from __future__ import annotations

from gpufleet.base.spec import dra_checks
from tests.helpers import example_config, load_config, planned, spec_problems, stack_file
from gpufleet.app.plan.engine import plan


def test_examples_load():
    for stack in ("nvl72-k3s", "nvl72-gke", "nvl72-eks"):
        assert [p.allocation for p in load_config(example_config(stack)).node_pools] == ["dra"]


def test_dra_refused_before_kubernetes_1_34():
    config = example_config("nvl72-eks")
    config["gpufleet:cluster"]["kubernetesVersion"] = "1.33"
    problems = [p for p in spec_problems(config) if "kubernetesVersion" in p and "resource.k8s.io/v1" in p]
    assert len(problems) == 1
    assert "allowed: 1.34 or newer" in problems[0] and "(got '1.33')" in problems[0]


def test_partial_nvlink_domain_is_an_error_on_gke():
    config = example_config("nvl72-gke")
    pool = config["gpufleet:nodePools"][0]
    pool["minNodes"] = pool["maxNodes"] = pool["reservation"]["instanceCount"] = 10
    problems = [p for p in spec_problems(config) if "partial NVLink domain" in p]
    assert {p.split(": ")[1] for p in problems} == {
        "gpufleet:nodePools[0].minNodes", "gpufleet:nodePools[0].maxNodes", "gpufleet:nodePools[0].reservation.instanceCount"}
    assert all("e.g. 18" in p for p in problems)


def test_partial_rack_on_k3s_is_a_warning():
    config = example_config("nvl72-k3s")
    config["gpufleet:nodePools"][0]["hosts"] = config["gpufleet:nodePools"][0]["hosts"][:17]
    spec = load_config(config)
    assert [p.path for p in dra_checks.warnings("test", spec)] == ["gpufleet:nodePools[0].hosts"]


def test_compute_domain_needs_a_dra_nvlink_pool_and_new_enough_driver():
    config = example_config("nvl72-k3s")
    config["gpufleet:gpuOperator"]["driver"]["version"] = "570.86.15"
    config["gpufleet:dra"]["computeDomains"].append({"name": "x", "pool": "nope"})
    problems = spec_problems(config)
    assert any("dra.computeDomains[0].pool" in p and "570.158.01" in p for p in problems)
    assert any("dra.computeDomains[1].pool" in p and "no such pool" in p for p in problems)


def test_dra_pool_sharing_and_amd_refused():
    config = example_config("nvl72-k3s")
    config["gpufleet:nodePools"][0]["sharing"] = {"mode": "time-slicing", "replicas": 2}
    assert any("sharing.mode" in p and "allowed: none, mig" in p for p in spec_problems(config))


def test_device_plugin_nvlink_pool_warns():
    config = example_config("nvl72-k3s")
    config["gpufleet:nodePools"][0]["allocation"] = "device-plugin"
    del config["gpufleet:dra"]
    spec = load_config(config)
    assert any(p.path.endswith(".allocation") for p in dra_checks.warnings("test", spec))


def test_dra_pool_nodes_turn_the_device_plugin_off():
    ng = next(r for r in planned("nvl72-eks").resources if r.type == "aws:eks/nodeGroup:NodeGroup" and "gb200" in r.name)
    assert ng.inputs["labels"]["nvidia.com/gpu.deploy.device-plugin"] == "false"
    assert ng.inputs["labels"]["gpufleet.io/gpu-allocation"] == "dra"
    assert ng.inputs["amiType"] == "AL2023_ARM_64_NVIDIA"


def _violations(config, stack):
    return [v for v in plan(stack_file(config, stack), evaluate_policies=True).violations if v.policy == "gpu-pool-scale-to-zero"]


def test_scale_to_zero_flags_a_dra_pool_at_zero():
    for stack in ("nvl72-gke", "nvl72-eks"):
        assert _violations(example_config(stack), stack) == []
        config = example_config(stack)
        config["gpufleet:nodePools"][0]["minNodes"] = 0
        found = [v.message for v in _violations(config, stack)]
        assert len([m for m in found if "would be stranded" in m]) == 1, found
        assert any("set minNodes to at least 1" in m for m in found)
