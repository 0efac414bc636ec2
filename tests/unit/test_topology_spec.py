"""Kueue Topology Aware Scheduling (issue 35): each platform's levels, and the checks on failing and passing stacks.
Each failing stack starts from a passing example and changes one thing."""

from __future__ import annotations

import copy

from gpufleet.base.capacity import addons_warnings, capacity, capacity_notes
from gpufleet.base.spec import SpecError
from gpufleet.base.spec.features import topology as tas
from gpufleet.base.spec.features import topology_checks
from tests.helpers import example_config, load_config, spec_problems

EKS_LEVELS = [f"topology.k8s.aws/network-node-layer-{n}" for n in (1, 2, 3)]
GKE_LEVELS = ["cloud.google.com/gce-topology-block", "cloud.google.com/gce-topology-subblock", "cloud.google.com/gce-topology-host"]
HOST = "kubernetes.io/hostname"


def _levels(stack: str, pool: str, config=None) -> list[str]:
    spec = load_config(config or example_config(stack))
    tp = tas.topology_pools(spec)[pool]
    return tas.levels(tp, next(p for p in spec.node_pools if p.name == pool), spec.cluster.platform)


def _topology_problems(config) -> list[str]:
    try:
        load_config(config)
    except SpecError as exc:
        return [str(p) for p in exc.problems if "topology" in str(p)]
    return []


def test_example_stacks_pass_with_each_platforms_levels():
    assert _levels("teams-eks", "h100-train") == EKS_LEVELS + [HOST]
    assert _levels("dws-gke", "h200-train") == GKE_LEVELS + [HOST]
    assert _levels("teams", "a100-train") == ["gpufleet.io/topology-rack", HOST]
    for stack in ("teams-eks", "dws-gke", "teams"):
        assert _topology_problems(example_config(stack)) == [], stack


def test_four_layer_instance_types_get_layer_4():
    config = example_config("teams-eks")
    config["gpufleet:nodePools"][0]["instanceType"] = "p6-b200.48xlarge"
    assert _levels("", "h100-train", config) == EKS_LEVELS + ["topology.k8s.aws/network-node-layer-4", HOST]


def test_nvl72_pools_get_the_nvlink_clique_as_a_level():
    # Device-plugin pools: Kueue 0.19 plans no TAS on DRA pools (topology_checks._dra_problems).
    config = example_config("nvl72-k3s")
    config["gpufleet:nodePools"][0]["allocation"] = "device-plugin"
    del config["gpufleet:dra"]
    for i, h in enumerate(config["gpufleet:nodePools"][0]["hosts"]):
        h["rack"] = "nvl72-a"
    config["gpufleet:addons"] = {"kueue": {"enabled": True, "teams": [{"name": "ml", "queues": [{"pool": "gb200"}]}],
                                           "topology": {"pools": [{"name": "gb200"}]}}}
    assert _levels("", "gb200", config) == ["gpufleet.io/topology-rack", "nvidia.com/gpu.clique", HOST]
    gke = example_config("nvl72-gke")
    gke["gpufleet:nodePools"][0]["allocation"] = "device-plugin"
    del gke["gpufleet:dra"]
    gke["gpufleet:addons"] = copy.deepcopy(config["gpufleet:addons"])
    # GPU Feature Discovery (the GPU Operator's) writes the clique label: with GKE's own GPU stack nothing does.
    gke["gpufleet:cluster"]["gke"]["gpuStack"] = "operator"
    gke["gpufleet:gpuOperator"] = {"driver": {"source": "operator"}}
    # An A4X sub-block is one NVLink domain; the clique nests under it and above the physical host.
    assert _levels("", "gb200", gke) == GKE_LEVELS[:2] + ["nvidia.com/gpu.clique", GKE_LEVELS[2], HOST]


def test_eks_instance_type_without_topology_is_an_error():
    config = example_config("teams-eks")
    config["gpufleet:addons"]["kueue"]["topology"]["pools"].append({"name": "l4-infer"})
    problems = _topology_problems(config)
    assert len(problems) == 1
    assert "gpufleet:addons.kueue.topology.pools[1].name" in problems[0]
    assert "EC2 gives no network topology for g6.xlarge, g6.2xlarge" in problems[0] and "p5.48xlarge" in problems[0]


def test_k3s_hosts_without_racks_are_an_error():
    config = example_config("teams")
    del config["gpufleet:nodePools"][0]["hosts"][1]["rack"]
    problems = _topology_problems(config)
    assert any("hosts gpu-a100-2 of pool a100-train declare no rack" in p and "(got 'a100-train')" in p for p in problems)


def test_a_level_no_node_label_provides_is_an_error():
    config = example_config("teams-eks")
    config["gpufleet:addons"]["kueue"]["topology"]["pools"][0]["levels"] = ["example.com/rack", HOST]
    config["gpufleet:addons"]["kueue"]["teams"][0]["queues"][0]["topology"]["preferred"] = HOST
    problems = _topology_problems(config)
    assert any("topology.pools[0].levels[0]" in p and "no node label of this pool provides" in p
               and "(got 'example.com/rack')" in p for p in problems)
    # A label the pool puts on its nodes is a level.
    config["gpufleet:nodePools"][0]["labels"] = {"example.com/rack": "r1"}
    assert _topology_problems(config) == []


def test_hostname_only_last():
    config = example_config("teams-eks")
    config["gpufleet:addons"]["kueue"]["topology"]["pools"][0]["levels"] = [HOST, EKS_LEVELS[0]]
    assert any("may only be the last level" in p for p in _topology_problems(config))


def test_kueue_without_tas_is_an_error():
    spec = load_config(example_config("teams-eks"))
    problems = topology_checks.check("t", spec, kueue_version="v0.13.4")
    assert [p.path for p in problems] == ["gpufleet:addons.kueue.topology"]
    assert "pin kueue >= 0.14" in problems[0].message
    assert topology_checks.check("t", spec, kueue_version="v0.14.0") == []


def test_required_topology_larger_than_any_rack_is_an_error():
    config = example_config("teams")
    queue = config["gpufleet:addons"]["kueue"]["teams"][1]["queues"][0]
    queue["topology"]["gpusPerJob"] = 24
    problems = _topology_problems(config)
    assert any("queues[0].topology.gpusPerJob" in p and "never fits one gpufleet.io/topology-rack domain" in p
               and "16 GPUs (2 nodes)" in p for p in problems)
    # Two racks of one host each: a 16-GPU job no longer fits one rack either.
    config = example_config("teams")
    config["gpufleet:nodePools"][0]["hosts"][1]["rack"] = "r02"
    assert any("the largest holds 8 GPUs" in p for p in _topology_problems(config))
    # Preferred falls back to the level above: no error.
    queue = config["gpufleet:addons"]["kueue"]["teams"][1]["queues"][0]
    queue["topology"] = {"preferred": "gpufleet.io/topology-rack", "gpusPerJob": 16}
    assert _topology_problems(config) == []


def test_queue_topology_needs_a_tas_pool_and_one_of_its_levels():
    config = example_config("teams-eks")
    config["gpufleet:addons"]["kueue"]["teams"][1]["queues"][0]["topology"] = {"required": HOST}
    config["gpufleet:addons"]["kueue"]["teams"][0]["queues"][0]["topology"]["preferred"] = "cloud.google.com/gce-topology-block"
    problems = _topology_problems(config)
    assert any("teams[1].queues[0].topology" in p and "pool l4-infer is not topology-aware" in p for p in problems)
    assert any("teams[0].queues[0].topology.preferred" in p and "not a level of pool h100-train" in p for p in problems)


def test_unknown_or_unqueued_pool_is_an_error():
    config = example_config("teams-eks")
    config["gpufleet:addons"]["kueue"]["topology"]["pools"].append({"name": "nope"})
    assert any("pools[1].name" in p and "no such pool" in p for p in _topology_problems(config))


def test_bad_rack_value_is_refused():
    config = example_config("teams")
    config["gpufleet:nodePools"][0]["hosts"][0]["rack"] = "rack 1"
    assert any("hosts[0].rack" in p for p in spec_problems(config))


def test_gke_warnings_unlabelled_family_and_unreserved():
    config = example_config("dws-gke")
    config["gpufleet:addons"]["kueue"]["topology"]["pools"].append({"name": "h100-flex"})
    spec = load_config(config)
    msgs = [p.message for p in addons_warnings("t", spec) if "topology" in p.path]
    assert len(msgs) == 1 and "not on a3-highgpu-8g" in msgs[0]
    pool = config["gpufleet:nodePools"][3]
    pool["capacity"] = "spot"
    del pool["reservation"]
    config["gpufleet:addons"]["kueue"]["topology"]["pools"].pop()
    msgs = [p.message for p in addons_warnings("t", load_config(config)) if "topology" in p.path]
    assert len(msgs) == 1 and "works best on reserved capacity" in msgs[0]


def test_plan_capacity_shows_levels_and_gpus_per_domain():
    spec = load_config(example_config("teams"))
    caps = capacity(spec)
    a100 = next(c for c in caps if c.pool == "a100-train")
    assert a100.to_json()["topology"] == [
        {"level": "gpufleet.io/topology-rack", "nodes": 2, "gpus": 16, "known": True},
        {"level": HOST, "nodes": 1, "gpus": 8, "known": True}]
    assert "a100-train: Kueue topology a100-train, largest domain per level: gpufleet.io/topology-rack 16 GPUs > " \
           "kubernetes.io/hostname 8 GPUs" in capacity_notes(caps)
    assert "topology" not in next(c for c in caps if c.pool == "l4-infer").to_json()


def test_reservation_bounds_the_blocks():
    config = example_config("dws-gke")
    config["gpufleet:nodePools"][3]["maxNodes"] = 8
    spec = load_config(config)
    h200 = next(c for c in capacity(spec) if c.pool == "h200-train")
    assert h200.topology[0] == {"level": GKE_LEVELS[0], "nodes": 4, "gpus": 32, "known": False}


def test_k3s_hosts_declared_rack_and_block_become_node_labels_at_join():
    from gpufleet.components.k3s.node_pool import server_node_settings

    spec = load_config(example_config("teams"))
    pool = spec.node_pools[0]
    host = pool.hosts[0].model_copy(update={"block": "b1"})
    assert tas.host_labels(host) == {"gpufleet.io/topology-block": "b1", "gpufleet.io/topology-rack": "r01"}
    labels, _ = server_node_settings(pool, host)
    assert labels["gpufleet.io/topology-rack"] == "r01" and labels["gpufleet.io/pool"] == "a100-train"


def test_levels_must_be_unique_and_unique_levels_pass():
    """Issue 56: `if dupes` -> `if not dupes` must fail a test both ways (a valid stack's own levels, a repeated one)."""
    config = example_config("teams-eks")
    config["gpufleet:nodePools"][0]["labels"] = {"example.com/rack": "r1"}
    config["gpufleet:addons"]["kueue"]["teams"][0]["queues"][0]["topology"]["preferred"] = HOST
    config["gpufleet:addons"]["kueue"]["topology"]["pools"][0]["levels"] = ["example.com/rack", HOST]
    assert _topology_problems(config) == []
    config["gpufleet:addons"]["kueue"]["topology"]["pools"][0]["levels"] = ["example.com/rack", "example.com/rack", HOST]
    assert _topology_problems(config) == [
        "stack 'test': gpufleet:addons.kueue.topology.pools[0].levels: levels must be unique (Kueue's Topology CRD) "
        "(got 'example.com/rack')"]
