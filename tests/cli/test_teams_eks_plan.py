"""CLI tests (layer 5): `gpufleet plan teams-eks` — two teams on EKS, a spot H100 training queue and an
on-demand L4 inference pool (issue 8's example). One plan for the module, through the CLI (`--output`).

stacks/Pulumi.teams-eks.yaml: pool h100-train (p5.48xlarge, spot, 0-2 nodes, EFA), pool l4-infer
(g6.xlarge/g6.2xlarge, on-demand, 1-6 nodes, exempt from scale-to-zero), team research (namespace
research, queue on h100-train, default quota) and team serving (namespace serving-prod, queue on
l4-infer, nominalQuota 6), JobSet and PriorityClasses on.
"""

from __future__ import annotations

import json

import pytest

from gpufleet.base import labels as L
from gpufleet.app.cli import main
from gpufleet.base.capacity import pool_capacity
from gpufleet.base.spec import load_spec
from tests.crd_validate import validate_cr
from tests.helpers import example_config

STACK = "teams-eks"
FLAVOR = "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor"
CQ = "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"
LQ = "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
SPOT_TOLERATION = {"key": L.SPOT_TAINT_KEY, "operator": "Equal", "value": "true", "effect": "NoSchedule"}
GPU_TOLERATION = {"key": L.GPU_TAINT_KEY, "operator": "Equal", "value": L.GPU_TAINT_VALUE, "effect": "NoSchedule"}
EKS_EFFECT = {"NO_SCHEDULE": "NoSchedule", "NO_EXECUTE": "NoExecute", "PREFER_NO_SCHEDULE": "PreferNoSchedule"}


@pytest.fixture(scope="module")
def planned(tmp_path_factory) -> tuple[int, dict]:
    out = tmp_path_factory.mktemp("teams-eks") / "plan.json"
    code = main(["plan", STACK, "--format", "json", "--output", str(out)])
    return code, json.loads(out.read_text())


@pytest.fixture(scope="module")
def result(planned) -> dict:
    return planned[1]


def _one(result: dict, type_: str, name: str) -> dict:
    found = [r for r in result["resources"] if r["type"] == type_ and r["name"] == name]
    assert len(found) == 1, f"expected one {type_} {name}, found {len(found)}"
    return found[0]["inputs"]


def _all(result: dict, type_: str) -> list[dict]:
    return [r for r in result["resources"] if r["type"] == type_]


def _pool(name: str):
    spec = load_spec(STACK, example_config(STACK), [])
    pool = next(p for p in spec.node_pools if p.name == name)
    return pool_capacity(pool, "eks")


def test_plans_with_exit_0_and_only_the_known_advisory(planned):
    code, result = planned
    assert code == 0
    # No quota warning, no version warning (EKS 1.35 is in standard support until 2027-03-27, past the 90-day window on
    # the tests' date). The catalog's own warning (issue 12) is expected: the AWS price estimates are dated 2025-11-15.
    # So is the pinned AMI release's age (issue 50): the newest release recorded, v20260714, is 143 days old then.
    assert sorted(w["path"] for w in result["warnings"]) == ["catalog", "gpufleet:nodePools"]
    (ami,) = [w for w in result["warnings"] if w["path"] == "gpufleet:nodePools"]
    assert ami["message"].startswith("EKS AL2023 AMI release 1.35.6-20260714 (v20260714, NVIDIA driver 580.159.03), run "
                                     "by the system pool, pool 'h100-train', pool 'l4-infer', is 143 days old on 2026-12-04")
    # p5.48xlarge is the catalog's only 8 x H100-80GB type, so diversification stays an advisory.
    # And no metrics pipeline (gpufleet:observability is off by default on EKS): gpu-observability on each GPU pool.
    found = sorted((v["policy"], v["level"], v["urn"].rsplit("::", 1)[-1]) for v in result["violations"])
    assert found == [
        ("gpu-observability", "advisory", "teams-eks-pool-h100-train-ng"),
        ("gpu-observability", "advisory", "teams-eks-pool-l4-infer-ng"),
        ("spot-pool-diversified", "advisory", "teams-eks-pool-h100-train-ng"),
    ]


def test_capacity_shows_the_spot_training_pool_and_the_on_demand_inference_pool(result):
    by_pool = {c["pool"]: c for c in result["capacity"]}
    assert set(by_pool) == {"h100-train", "l4-infer"}
    train, infer = by_pool["h100-train"], by_pool["l4-infer"]
    assert (train["capacityType"], train["gpu"], train["minNodes"], train["maxNodes"], train["maxGpus"]) == ("spot", "H100-80GB", 0, 2, 16)
    assert (infer["capacityType"], infer["gpu"], infer["minNodes"], infer["maxNodes"], infer["maxGpus"]) == ("on-demand", "L4", 1, 6, 6)


def test_spot_flavor_selects_spot_nodes_and_tolerates_the_spot_taint(result):
    flavor = _one(result, FLAVOR, "teams-eks-kueue-flavor-h100-train")
    assert flavor["metadata"]["name"] == "h100-train"
    assert flavor["spec"]["nodeLabels"] == {
        L.POOL_LABEL: "h100-train", L.GPU_MODEL_LABEL: "H100-80GB", L.CAPACITY_TYPE_LABEL: "spot",
    }
    assert flavor["spec"]["tolerations"] == [GPU_TOLERATION, SPOT_TOLERATION]
    on_demand = _one(result, FLAVOR, "teams-eks-kueue-flavor-l4-infer")
    assert on_demand["spec"]["nodeLabels"][L.CAPACITY_TYPE_LABEL] == "on-demand"
    assert on_demand["spec"]["tolerations"] == [GPU_TOLERATION], "no spot toleration on the on-demand pool"


def test_flavors_match_what_the_node_groups_really_carry(result):
    """A flavor Kueue cannot satisfy would leave admitted pods Pending: its labels and tolerations must be
    exactly what the EKS node group puts on the nodes (SPOT capacity, labels, taints)."""
    for pool, capacity_type in (("h100-train", "SPOT"), ("l4-infer", "ON_DEMAND")):
        ng = _one(result, NODE_GROUP, f"teams-eks-pool-{pool}-ng")
        flavor = _one(result, FLAVOR, f"teams-eks-kueue-flavor-{pool}")["spec"]
        assert ng["capacityType"] == capacity_type
        assert flavor["nodeLabels"].items() <= ng["labels"].items()
        taints = [{"key": t["key"], "operator": "Equal", "value": t["value"], "effect": EKS_EFFECT[t["effect"]]} for t in ng["taints"]]
        assert flavor["tolerations"] == taints


@pytest.mark.parametrize("team,pool", [("research", "h100-train"), ("serving", "l4-infer")])
def test_cluster_queue_quota_is_the_pools_max_size_gpus(result, team, pool):
    cq = _one(result, CQ, f"teams-eks-kueue-cq-{team}-{pool}")
    assert cq["metadata"]["name"] == f"{team}-{pool}"
    (group,) = cq["spec"]["resourceGroups"]
    (flavor,) = group["flavors"]
    assert flavor["name"] == pool
    quotas = {r["name"]: r["nominalQuota"] for r in flavor["resources"]}
    cap = _pool(pool)
    assert quotas[L.GPU_RESOURCE] == cap.max_gpus == {"h100-train": 16, "l4-infer": 6}[pool]
    assert cq["spec"]["cohortName"] == "gpufleet"


def test_efa_quota_covers_every_interface_at_max_size(result):
    """Multi-node jobs on p5 request all 32 EFA interfaces per node; the default quota must admit 2 nodes' worth."""
    cq = _one(result, CQ, "teams-eks-kueue-cq-research-h100-train")
    quotas = {r["name"]: r["nominalQuota"] for r in cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"]}
    assert quotas["vpc.amazonaws.com/efa"] == 64


def test_each_team_has_its_local_queue_in_its_own_namespace(result):
    queues = {(q["inputs"]["metadata"]["namespace"], q["inputs"]["metadata"]["name"]): q["inputs"]["spec"]["clusterQueue"] for q in _all(result, LQ)}
    assert queues == {("research", "h100-train"): "research-h100-train", ("serving-prod", "l4-infer"): "serving-l4-infer"}
    namespaces = {
        r["inputs"]["metadata"]["name"]: r["inputs"]["metadata"]["labels"].get(L.TEAM_LABEL)
        for r in _all(result, "kubernetes:core/v1:Namespace")
        if L.TEAM_LABEL in r["inputs"]["metadata"].get("labels", {})
    }
    assert namespaces == {"research": "research", "serving-prod": "serving"}
    for team, ns in (("research", "research"), ("serving", "serving-prod")):
        cq = _one(result, CQ, f"teams-eks-kueue-cq-{team}-{'h100-train' if team == 'research' else 'l4-infer'}")
        assert cq["spec"]["namespaceSelector"] == {"matchLabels": {"kubernetes.io/metadata.name": ns}}, "only the team's namespace may use its queue"


def test_jobset_and_priority_classes_are_on(result):
    types = {r["type"] for r in result["resources"]}
    assert {"gpufleet:addons:Kueue", "gpufleet:addons:JobSet", "gpufleet:addons:PriorityClasses"} <= types
    assert not {"gpufleet:addons:Volcano", "gpufleet:addons:Trainer", "gpufleet:addons:Keda"} & types
    classes = {r["inputs"]["metadata"]["name"]: r["inputs"]["value"] for r in _all(result, "kubernetes:scheduling.k8s.io/v1:PriorityClass")}
    assert classes == {"production-inference": 100000, "training": 10000, "batch-preemptible": 1000}


def test_kueue_objects_validate_against_the_upstream_crds(result):
    objects = [r for r in result["resources"] if r["type"] in (FLAVOR, CQ, LQ)]
    assert len(objects) == 6
    for r in objects:
        obj = json.loads(json.dumps(r["inputs"]), parse_float=lambda s: int(float(s)) if float(s).is_integer() else float(s))
        assert validate_cr(obj) == [], r["name"]


def test_explicit_gpu_quota_scales_the_efa_quota():
    from gpufleet.app.plan.engine import plan
    from tests.helpers import stack_file

    cfg = example_config(STACK)
    cfg["gpufleet:addons"]["kueue"]["teams"][0]["queues"][0]["nominalQuota"] = 16
    p = plan(stack_file(cfg, STACK), evaluate_policies=False)
    cq = next(r for r in p.resources if r.type == CQ and r.name == "teams-eks-kueue-cq-research-h100-train")
    quotas = {r["name"]: r["nominalQuota"] for r in cq.inputs["spec"]["resourceGroups"][0]["flavors"][0]["resources"]}
    assert quotas[L.GPU_RESOURCE] == 16
    assert quotas["vpc.amazonaws.com/efa"] == 64


def test_half_the_gpus_gets_half_the_efa_interfaces_and_limits_scale_too():
    from gpufleet.app.plan.engine import plan
    from tests.helpers import stack_file

    cfg = example_config(STACK)
    queue = cfg["gpufleet:addons"]["kueue"]["teams"][0]["queues"][0]
    queue.update({"nominalQuota": 8, "borrowingLimit": 4})
    p = plan(stack_file(cfg, STACK), evaluate_policies=False)
    cq = next(r for r in p.resources if r.type == CQ and r.name == "teams-eks-kueue-cq-research-h100-train")
    entries = {r["name"]: r for r in cq.inputs["spec"]["resourceGroups"][0]["flavors"][0]["resources"]}
    assert (entries[L.GPU_RESOURCE]["nominalQuota"], entries[L.GPU_RESOURCE]["borrowingLimit"]) == (8, 4)
    assert (entries["vpc.amazonaws.com/efa"]["nominalQuota"], entries["vpc.amazonaws.com/efa"]["borrowingLimit"]) == (32, 16)
