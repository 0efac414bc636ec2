"""The placement each cloud requires for one NVLink domain, and GB300 machines (issue 34): GKE A4X and A4X Max pools get a
Compute Engine workload policy (HIGH_THROUGHPUT, accelerator topology 1x72) named by the pool's COMPACT placement
policy; EC2 UltraServers only come through Capacity Blocks; machines no source sizes are refused with the reason.
Facts and sources: gpufleet/base/catalog/dra.yaml."""

from __future__ import annotations

import copy

import pulumi_gcp as gcp

from gpufleet.base.catalog import dra as dra_facts
from gpufleet.base.platforms.gke import scheduling as gke_scheduling
from gpufleet.base.spec.features import dra_checks
from gpufleet.app.plan.engine import plan
from tests.helpers import example_config, load_config, planned, spec_problems, stack_file


def _paths(problems: list[str], needle: str) -> set[str]:
    return {p.split(": ")[1] for p in problems if needle in p}


def test_a4x_pool_names_a_workload_policy_with_the_nvlink_topology():
    resources = planned("nvl72-gke").resources
    policies = [r for r in resources if r.type == "gcp:compute/resourcePolicy:ResourcePolicy"]
    assert [p.name for p in policies] == ["nvl72-gke-pool-gb200-workload-policy"]
    policy = policies[0]
    assert policy.inputs["workloadPolicy"] == {"type": "HIGH_THROUGHPUT", "acceleratorTopology": "1x72"}
    assert policy.inputs["region"] == "us-central1" and policy.inputs["project"] == "my-gpu-project"
    pool = next(r for r in resources if r.type == "gcp:container/nodePool:NodePool" and r.inputs.get("name") == "gb200")
    assert policy.parent == pool.parent  # both children of the GkeNodePool component
    assert pool.inputs["placementPolicy"]["type"] == "COMPACT"
    # The pool names the policy GCE creates (Pulumi's auto-name of the resource policy).
    assert pool.inputs["placementPolicy"]["policyName"].startswith("nvl72-gke-pool-gb200-workload-policy-")


def test_the_workload_policy_inputs_exist_in_the_installed_provider():
    # The Args the component uses, with the fields it sets (pulumi_gcp as installed, not a guess of its API).
    gcp.compute.ResourcePolicyWorkloadPolicyArgs(type="HIGH_THROUGHPUT", accelerator_topology="1x72")
    gcp.container.NodePoolPlacementPolicyArgs(type="COMPACT", policy_name="p")
    for machine in ("a4x-highgpu-4g", "a4x-maxgpu-4g-metal"):
        assert dra_facts.nvlink_system("gke", machine).workload_policy == {"type": "HIGH_THROUGHPUT", "accelerator_topology": "1x72"}


def test_pools_of_other_machines_get_no_workload_policy():
    resources = planned("dws-gke").resources
    assert not [r for r in resources if r.type == "gcp:compute/resourcePolicy:ResourcePolicy"]


def test_a4x_pool_placement_refuses_two_zones_blue_green_and_queued():
    config = example_config("nvl72-gke")
    pool = config["gpufleet:nodePools"][0]
    pool["gke"] = {"zones": ["us-central1-b", "us-central1-c"], "upgrade": {"strategy": "blue-green"}}
    problems = spec_problems(config)
    assert _paths(problems, "COMPACT placement") == {"gpufleet:nodePools[0].gke.zones",
                                                      "gpufleet:nodePools[0].gke.upgrade.strategy"}
    assert any("exactly one zone" in p and "(got ['us-central1-b', 'us-central1-c'])" in p for p in problems)


def test_a4x_pool_in_the_reservations_zone_passes():
    config = example_config("nvl72-gke")
    del config["gpufleet:nodePools"][0]["gke"]  # the zone comes from the reservation
    assert not gke_scheduling._workload_policy("test", load_config(config))


def test_ultraserver_pool_must_come_from_a_capacity_block():
    config = example_config("nvl72-eks")
    pool = config["gpufleet:nodePools"][0]
    odcr = copy.deepcopy(config)
    odcr["gpufleet:nodePools"][0]["reservation"]["type"] = "odcr"
    assert _paths(spec_problems(odcr), "Capacity Blocks for ML") == {"gpufleet:nodePools[0].reservation.type"}
    pool["capacity"] = "on-demand"
    del pool["reservation"]
    problems = [p for p in spec_problems(config) if "Capacity Blocks for ML" in p]
    assert [p.split(": ")[1] for p in problems] == ["gpufleet:nodePools[0].capacity"]
    assert "(got 'on-demand')" in problems[0]


def _a4x_max(config: dict) -> dict:
    pool = config["gpufleet:nodePools"][0]
    pool["machineType"] = pool["reservation"]["instanceType"] = "a4x-maxgpu-4g-metal"
    return config


def test_a4x_max_is_sized_in_sub_blocks_of_18():
    system = dra_facts.nvlink_system("gke", "a4x-maxgpu-4g-metal")
    assert (system.gpu, system.gpus_per_machine, system.unit, system.rule) == ("GB300", 4, 18, "error")
    config = _a4x_max(example_config("nvl72-gke"))
    config["gpufleet:cluster"]["gke"]["gpuStack"] = "operator"
    pool = config["gpufleet:nodePools"][0]
    pool["minNodes"] = pool["maxNodes"] = pool["reservation"]["instanceCount"] = 9
    assert _paths(spec_problems(config), "partial NVLink domain") == {
        "gpufleet:nodePools[0].minNodes", "gpufleet:nodePools[0].maxNodes", "gpufleet:nodePools[0].reservation.instanceCount"}


def test_a4x_max_dra_pool_on_gkes_own_stack_is_refused_without_an_installer():
    problems = spec_problems(_a4x_max(example_config("nvl72-gke")))
    assert [p for p in problems if "driver installer" in p] == [
        "stack 'test': gpufleet:nodePools[0].machineType: no pinned Google driver installer selects a4x-maxgpu-4g-metal: "
        "the A4X one's nodeAffinity lists a4x-highgpu-4g, a4x-highgpu-4g-nolssd only, and no source read says the default "
        "one supports GB300; use cluster.gke.gpuStack: operator (got 'a4x-maxgpu-4g-metal')"]


def test_a4x_max_with_the_operator_plans_a_workload_policy():
    config = _a4x_max(example_config("nvl72-gke"))
    config["gpufleet:cluster"]["gke"]["gpuStack"] = "operator"
    result = plan(stack_file(config, "nvl72-gke"))
    policy = next(r for r in result.resources if r.type == "gcp:compute/resourcePolicy:ResourcePolicy")
    assert policy.inputs["workloadPolicy"] == {"type": "HIGH_THROUGHPUT", "acceleratorTopology": "1x72"}
    pool = next(r for r in result.resources if r.type == "gcp:container/nodePool:NodePool" and r.inputs.get("name") == "gb200")
    assert pool.inputs["nodeConfig"]["machineType"] == "a4x-maxgpu-4g-metal"
    assert pool.inputs["nodeConfig"]["guestAccelerators"][0]["type"] == "nvidia-gb300"
    assert pool.inputs["nodeConfig"]["diskType"] == "hyperdisk-balanced"


def test_gb300_rack_on_k3s_warns_when_partial():
    config = example_config("nvl72-k3s")
    config["gpufleet:nodePools"][0]["gpu"] = "GB300"
    assert not dra_checks.warnings("test", load_config(config))
    config["gpufleet:nodePools"][0]["hosts"] = config["gpufleet:nodePools"][0]["hosts"][:12]
    warnings = dra_checks.warnings("test", load_config(config))
    assert [(w.path, w.value) for w in warnings] == [("gpufleet:nodePools[0].hosts", 12)]
    assert "e.g. 18" in str(warnings[0])


def test_p6e_gb300_is_refused_with_the_reason_not_sized_by_a_guess():
    config = example_config("nvl72-eks")
    pool = config["gpufleet:nodePools"][0]
    pool["instanceType"] = pool["reservation"]["instanceType"] = "p6e-gb300.36xlarge"
    problems = [p for p in spec_problems(config) if "cannot size" in p]
    assert len(problems) == 1
    assert problems[0].startswith("stack 'test': gpufleet:nodePools[0].instanceType: gpufleet cannot size p6e-gb300.36xlarge")
    assert "no AWS document read gives its GPU count" in problems[0]
