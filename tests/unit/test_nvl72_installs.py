"""Issue 49, "Fails at `pulumi up` or on the first job": A4X nodes' Arm taint is tolerated by everything that must run
there, Google's own A4X design plans (GKE's device plugin for GPUs, NVIDIA's DRA driver for ComputeDomains only, no
clique level nothing writes, no Kueue TAS on DRA pools, RoCE NICs on A4X), and an air-gapped stack that compiles the
NVIDIA driver names its package repository. Sources beside the code: gpufleet/base/platforms/gke/nodes.py,
gpufleet/base/spec/features/{dra,dra_checks,topology,topology_checks,registry_checks}.py."""

from __future__ import annotations

import json

from gpufleet.app import images as listing
from gpufleet.base import labels as L
from gpufleet.base.node_labels import node_taints
from gpufleet.components.gke.node_pool import gke_taints
from gpufleet.components.workloads.pool_flavor import pool_flavors
from tests.helpers import by_type, example_config, load_config, plan_config, planned, spec_problems

RELEASE = "kubernetes:helm.sh/v3:Release"
ARM = (L.ARCH_TAINT_KEY, "arm64", "NoSchedule")


def _release(plan, name: str) -> dict:
    return next(r.inputs for r in by_type(plan, RELEASE) if r.name == name)


def _google_a4x(kueue: bool = False, topology: bool = False) -> dict:
    """nvl72-gke as cluster-toolkit's gke-a4x builds it: GPUs from GKE's device plugin, a ComputeDomain on the pool."""
    config = example_config("nvl72-gke")
    config["gpufleet:nodePools"][0]["allocation"] = "device-plugin"
    if kueue:
        config["gpufleet:addons"] = {"kueue": {"enabled": True, "teams": [{"name": "research", "queues": [{"pool": "gb200"}]}],
                                               **({"topology": {"pools": [{"name": "gb200"}]}} if topology else {})}}
    return config


# Arm taint

def test_a4x_nodes_carry_gkes_arm_taint_and_x86_pools_do_not():
    spec = load_config(example_config("nvl72-gke"))
    assert ARM in [(t["key"], t["value"], t["effect"]) for t in node_taints(spec.node_pools[0], "gke")]
    other = load_config(example_config("prod-gke"))
    assert all(t["key"] != L.ARCH_TAINT_KEY for p in other.node_pools for t in node_taints(p, "gke"))


def test_the_dra_kubelet_plugin_tolerates_the_arm_taint_and_the_node_pool_leaves_it_to_gke():
    values = _release(planned("nvl72-gke"), "nvl72-gke-dra-driver-release")["values"]
    assert {"key": L.ARCH_TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"} in values["kubeletPlugin"]["tolerations"]
    spec = load_config(example_config("nvl72-gke"))
    # GKE applies the Arm taint itself (architectureTaintBehavior defaults to ARM): the pool declares only the GPU taint.
    assert gke_taints(spec.node_pools[0]) == [{"key": L.GPU_TAINT_KEY, "value": "present", "effect": "NO_SCHEDULE"}]


def test_the_a4x_kueue_flavor_tolerates_the_arm_taint():
    flavor = pool_flavors(load_config(_google_a4x(kueue=True)))["gb200"]
    assert {"key": L.ARCH_TAINT_KEY, "operator": "Equal", "value": "arm64", "effect": "NoSchedule"} in flavor.tolerations


# Google's A4X design

def test_a_compute_domain_on_a_device_plugin_a4x_pool_plans_with_gpu_allocation_off():
    config = _google_a4x(kueue=True)
    plan = plan_config(config, policies=False)
    values = _release(plan, "nvl72-gke-dra-driver-release")["values"]
    assert values["resources"] == {"gpus": {"enabled": False}, "computeDomains": {"enabled": True}}
    assert "gpuResourcesEnabledOverride" not in values and "nodeSelector" not in values["kubeletPlugin"]
    terms = values["kubeletPlugin"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms["nodeSelectorTerms"] == [{"matchExpressions": [{"key": L.POOL_LABEL, "operator": "In", "values": ["gb200"]}]}]
    assert values["nvidiaDriverRoot"] == "/home/kubernetes/bin/nvidia"  # GKE's driver, as cluster-toolkit's A4X
    pool = next(r for r in plan.resources if r.type == "gcp:container/nodePool:NodePool" and r.inputs.get("name") == "gb200")
    assert pool.inputs["nodeConfig"]["guestAccelerators"][0]["gpuDriverInstallationConfig"]["gpuDriverVersion"] != "INSTALLATION_DISABLED"
    # Kueue: GPUs as nvidia.com/gpu, the channels mapped (an unmapped DeviceClass makes a workload inadmissible).
    kueue = _release(plan, "nvl72-gke-kueue-release")["values"]
    assert "compute-domain-default-channel.nvidia.com" in kueue["managerConfig"]["controllerManagerConfigYaml"]
    queue = next(r for r in plan.resources if r.type.endswith("ClusterQueue"))
    covered = queue.inputs["spec"]["resourceGroups"][0]["coveredResources"]
    assert L.GPU_RESOURCE in covered and L.DRA_CHANNEL_RESOURCE in covered


def test_no_nvlink_warning_when_a_compute_domain_runs_on_the_device_plugin_pool():
    from gpufleet.base.spec.features import dra_checks

    assert not [p for p in dra_checks.warnings("test", load_config(_google_a4x())) if p.path.endswith(".allocation")]


def test_device_plugin_compute_domains_and_dra_pools_in_one_stack_are_refused():
    config = example_config("nvl72-k3s")
    pool = dict(config["gpufleet:nodePools"][0], name="gb200-b", allocation="device-plugin")
    pool["hosts"] = [dict(h, name=f"{h['name']}-b", address=h["address"].rsplit(".", 1)[0] + f".{100 + i}")
                     for i, h in enumerate(pool["hosts"])]
    config["gpufleet:nodePools"].append(pool)
    config["gpufleet:dra"]["computeDomains"].append({"name": "train-b", "pool": "gb200-b"})
    problems = spec_problems(config)
    assert [p for p in problems if "dra.computeDomains[1].pool" in p and "also has DRA pools (gb200)" in p]


def test_no_clique_level_on_gkes_own_gpu_stack():
    flavor = pool_flavors(load_config(_google_a4x(kueue=True, topology=True)))["gb200"]
    assert flavor.topology_levels == ("cloud.google.com/gce-topology-block", "cloud.google.com/gce-topology-subblock",
                                      "cloud.google.com/gce-topology-host", "kubernetes.io/hostname")
    config = _google_a4x(kueue=True, topology=True)
    config["gpufleet:addons"]["kueue"]["topology"]["pools"][0]["levels"] = ["nvidia.com/gpu.clique", "kubernetes.io/hostname"]
    assert [p for p in spec_problems(config) if "levels[0]" in p and "no node label of this pool provides" in p]


def test_kueue_tas_on_a_dra_pool_is_refused():
    config = example_config("nvl72-k3s")
    config["gpufleet:addons"]["kueue"]["topology"] = {"pools": [{"name": "gb200"}]}
    assert [p for p in spec_problems(config) if "kueue.topology.pools[0].name" in p and "does not support" in p]


def test_rdma_on_a4x_attaches_a_roce_network_with_four_subnets():
    config = example_config("nvl72-gke")
    config["gpufleet:nodePools"][0]["rdma"] = True
    plan = plan_config(config, policies=False)
    subnets = sorted(r.name for r in plan.resources if r.type == "gcp:compute/subnetwork:Subnetwork" and "rdma" in r.name)
    assert subnets == [f"nvl72-gke-pool-gb200-gpudirect-rdma-sub-{i}" for i in range(4)]


# Air-gapped driver builds

def test_an_air_gapped_stack_compiling_the_driver_needs_a_package_repository():
    config = example_config("airgap-k3s")
    del config["gpufleet:gpuOperator"]["driver"]["repoConfig"]
    assert [p for p in spec_problems(config) if "gpufleet:gpuOperator.driver" in p and "repoConfig" in p]
    config["gpufleet:gpuOperator"]["driver"]["precompiled"] = True
    assert not [p for p in spec_problems_or_none(config) if "gpufleet:gpuOperator.driver:" in p]
    values = _release(planned("airgap-k3s"), "airgap-k3s-gpu-operator-release")["values"]
    assert values["driver"]["repoConfig"] == {"configMapName": "local-repo-config"}


def spec_problems_or_none(config: dict) -> list[str]:
    from gpufleet.base.spec.errors import SpecError

    try:
        load_config(config)
    except SpecError as exc:
        return [str(p) for p in exc.problems]
    return []


def test_images_lists_precompiled_driver_tags_as_branch_kernel_os():
    config = example_config("airgap-k3s")
    config["gpufleet:gpuOperator"]["driver"] = {"source": "operator", "precompiled": True}
    found = listing.image_list(plan_config(config, "airgap-pre", policies=False))
    driver = [i for i in found.images if "/driver:" in i.source]
    assert [i.source.rsplit(":", 1)[1] for i in driver] == ["595-<kernel>-<os>"]  # the default driver 595.91.07's branch
    assert "<branch>-<kernel>-<os>" in driver[0].note
    assert json.loads(listing.dumps(found))  # still a valid listing
