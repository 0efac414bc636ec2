"""`gpufleet diff` logic: plan pairs with one change each, with exact expectations for every section."""

from __future__ import annotations

import pytest

from gpufleet.app.review import review_plans
from gpufleet.base import versions
from tests.review_plans import DEV_CHANGES, dev_plan, eks_plan

A100_AGENT = "urn:pulumi:dev::gpufleet::gpufleet:index:GpuCluster$gpufleet:k3s:K3sNodePool$command:remote:Command::"


@pytest.fixture(scope="module")
def dev():
    """The dev example planned once, and once per change (7 plans)."""
    base = dev_plan()
    return base, {k: review_plans(base, dev_plan(m)) for k, m in DEV_CHANGES.items()}


def judged(review):
    """Verdicts besides the advisory that the dev stack has no metrics pipeline (gpu-observability: "existing" on
    both sides of every change here, since gpufleet:observability is opt-in on k3s)."""
    return [v for v in review.verdicts if not (v.policy == "gpu-observability" and v.status == "existing")]


def ops(review):
    return sorted((c.op, c.type, c.name) for c in review.changes)


def pools(review):
    return {p.pool: (p.status, p.changed_fields) for p in review.capacity}


def changed_versions(review):
    return {v.component: (v.before, v.after) for v in review.versions if v.changed}


def cost(review):
    c = review.cost
    return (c.min_before, c.min_after, c.min_delta, c.max_before, c.max_after, c.max_delta)


def test_identical_plans_have_nothing_to_review(dev):
    base, _ = dev
    review = review_plans(base, base)
    assert review.changes == [] and judged(review) == [] and not review.disruptive
    assert pools(review) == {"l4": ("unchanged", []), "a100": ("unchanged", [])}
    assert cost(review) == (15.35, 15.35, 0.0, 15.35, 15.35, 0.0)
    assert changed_versions(review) == {}
    assert {v.component: v.after for v in review.versions} == {
        "GPU Operator chart": (versions.GPU_OPERATOR.version,), "GPU driver": ("595.91.07",),
        "k3s": (versions.k3s_release("1.36"),), "Kubernetes (k3s)": ("1.36",),
    }


def test_resize_a_pool(dev):
    review = dev[1]["resize"]
    assert ops(review) == [("create", "command:remote:Command", "dev-pool-a100-agent-gpu-a100-2"),
                           ("create", "kubernetes:core/v1:NodePatch", "dev-pool-a100-node-gpu-a100-2")]
    assert {c.group for c in review.changes} == {"dev › dev-pool-a100"}
    assert review.disruptive == []
    assert pools(review) == {"l4": ("unchanged", []), "a100": ("changed", ["minNodes", "maxNodes", "minGpus", "maxGpus"])}
    a100 = next(p for p in review.capacity if p.pool == "a100")
    assert (a100.before["maxGpus"], a100.after["maxGpus"]) == (8, 16)
    assert cost(review) == (15.35, 29.85, 14.5, 15.35, 29.85, 14.5)
    assert changed_versions(review) == {}
    assert judged(review) == [] and not review.has_mandatory


def test_change_the_gpu_operator_version(dev):
    review = dev[1]["operator"]
    # ../shared/reference/charts has no v26.3.3 archive: its CRDs cannot be applied from here (docs/upgrades.md), so
    # the release installs its crds/ itself and the (retained) CRD group leaves the plan; the review says why.
    assert ops(review) == [("delete", "kubernetes:yaml/v2:ConfigGroup", "dev-gpu-operator-crds"),
                           ("update", "kubernetes:helm.sh/v3:Release", "dev-gpu-operator-release")]
    change = review.changes[1]
    assert [(i.path, i.before, i.after, i.forces) for i in change.inputs] == [
        ("skipCrds", True, None, None),
        ("values.driver.version", "595.91.07", "580.126.20", None),
        ("version", "v26.7.0", "v26.3.3", None),
    ]
    assert review.crds == [] and review.crd_notes == [
        "dev-gpu-operator-release (gpu-operator v26.7.0 -> v26.3.3): CRDs not compared: the plan holds no CRDs of chart "
        "gpu-operator v26.3.3: its archive was not on the machine that planned it (run `gpufleet charts fetch`, or set "
        "GPUFLEET_CHARTS_DIR to a directory of the pinned chart archives)"]
    assert change.group == "dev › dev-gpu-operator" and not change.disruptive
    # Issue 51: the driver change is reviewed as the rollout it starts (review/disruption.py).
    assert review.disruption == [
        "GPU driver 595.91.07 -> 580.126.20 (operator-managed): every NVIDIA GPU node reloads its driver: 2-2 nodes in "
        "pools l4 (1-1), a100 (1-1)",
        "pace: 1 node(s) at a time, at most 1 unavailable (driver.upgradePolicy)",
        "per node: cordon; wait 24 h for pods matching jobset.sigs.k8s.io/jobset-name to finish; then every pod using a "
        "GPU is deleted (pods without a controller too, emptyDir data lost), within 15 min; no drain of other pods; "
        "driver reloaded; uncordon",
    ]
    assert changed_versions(review) == {
        "GPU Operator chart": (("v26.7.0",), ("v26.3.3",)),
        "GPU driver": (("595.91.07",), ("580.126.20",)),
    }
    assert review.alignment == []  # the release's default driver is on a supported branch
    assert pools(review) == {"l4": ("unchanged", []), "a100": ("unchanged", [])}
    assert cost(review) == (15.35, 15.35, 0.0, 15.35, 15.35, 0.0)


def test_change_a_k3s_pools_gpu_shows_in_capacity_not_as_a_replacement(dev):
    # k3s node labels travel in the agent's secret config (stdin): its digest names the change, and the node's
    # NodePatch carries the new label to the registered node (tests/unit/test_review_hidden.py)
    review = dev[1]["gpu"]
    assert ops(review) == [("update", "command:remote:Command", "dev-pool-l4-agent-gpu-l4-1"),
                           ("update", "kubernetes:core/v1:NodePatch", "dev-pool-l4-node-gpu-l4-1")]
    assert review.disruptive == []
    assert pools(review) == {"l4": ("changed", ["gpu"]), "a100": ("unchanged", [])}
    l4 = next(p for p in review.capacity if p.pool == "l4")
    assert (l4.before["gpu"], l4.after["gpu"]) == ("L4", "L40S")


def test_add_a_pool(dev):
    review = dev[1]["add"]
    assert ops(review) == [
        ("create", "command:remote:Command", "dev-pool-h100-agent-gpu-h100-1"),
        ("create", "gpufleet:k3s:K3sNodePool", "dev-pool-h100"),
        ("create", "kubernetes:core/v1:NodePatch", "dev-pool-h100-node-gpu-h100-1"),
    ]
    assert {c.name: c.group for c in review.changes} == {
        "dev-pool-h100": "dev", "dev-pool-h100-agent-gpu-h100-1": "dev › dev-pool-h100",
        "dev-pool-h100-node-gpu-h100-1": "dev › dev-pool-h100",
    }
    assert review.disruptive == []
    assert pools(review) == {"l4": ("unchanged", []), "a100": ("unchanged", []), "h100": ("added", [])}
    assert cost(review) == (15.35, 39.35, 24.0, 15.35, 39.35, 24.0)


def test_remove_a_pool_is_disruptive(dev):
    review = dev[1]["remove"]
    assert ops(review) == [
        ("delete", "command:remote:Command", "dev-pool-l4-agent-gpu-l4-1"),
        ("delete", "gpufleet:k3s:K3sNodePool", "dev-pool-l4"),
        ("delete", "kubernetes:core/v1:NodePatch", "dev-pool-l4-node-gpu-l4-1"),
    ]
    assert [(c.op, c.name, c.kind) for c in review.disruptive] == [
        ("delete", "dev-pool-l4-agent-gpu-l4-1", "host install (k3s server/agent)"),
    ]
    assert pools(review) == {"a100": ("unchanged", []), "l4": ("removed", [])}
    assert cost(review) == (15.35, 14.5, -0.85, 15.35, 14.5, -0.85)


def test_a_mandatory_violation_in_the_head_blocks_and_breaks_alignment(dev):
    review = dev[1]["violation"]
    assert [(v.policy, v.level, v.status, v.resource) for v in judged(review)] == [
        ("gpu-operator-version-support", "mandatory", "new", "dev-gpu-operator-release"),
    ]
    assert review.has_mandatory
    assert judged(review)[0].finding == (
        "driver 570.86.15 (branch 570) is not supported by GPU Operator v26.7.0 (supported branches: 610, 595, 580, 535)"
    )
    assert "gpufleet.io/exempt-gpu-operator-version-support" in judged(review)[0].fix
    assert [v.policy for v in review.alignment] == ["gpu-operator-version-support"]
    assert changed_versions(review) == {"GPU driver": (("595.91.07",), ("570.86.15",))}


def test_a_violation_fixed_by_the_change_is_resolved_and_does_not_block(dev):
    base = dev_plan(DEV_CHANGES["violation"])
    review = review_plans(base, dev[0])
    assert [(v.policy, v.status) for v in judged(review)] == [("gpu-operator-version-support", "resolved")]
    assert not review.has_mandatory and review.alignment == []


def test_switch_on_demand_to_spot_replaces_an_eks_node_group():
    review = review_plans(eks_plan(), eks_plan(capacity_type="SPOT", price=39.33))
    assert ops(review) == [("replace", "aws:eks/nodeGroup:NodeGroup", "prod-pool-h100-nodegroup")]
    change = review.changes[0]
    assert change.replace_reasons == ["capacityType"]
    assert [(i.path, i.before, i.after, i.forces) for i in change.inputs] == [
        ("capacityType", "ON_DEMAND", "SPOT", "capacityType"),
    ]
    assert "internal/service/eks/node_group.go" in change.inputs[0].source
    assert [c.name for c in review.disruptive] == ["prod-pool-h100-nodegroup"]
    assert pools(review) == {"h100": ("changed", ["capacityType", "pricePerNodeHour"])}
    assert cost(review) == (0.0, 0.0, 0.0, 393.28, 157.32, -235.96)


def test_change_instance_type_replaces_an_eks_node_group():
    review = review_plans(eks_plan(), eks_plan(instance_type="p4d.24xlarge", gpu="A100-40GB", price=32.77))
    change = review.changes[0]
    assert (change.op, change.replace_reasons, change.group) == ("replace", ["instanceTypes[0]"], "prod › prod-pool-h100")
    assert [(i.path, i.before, i.after) for i in change.inputs] == [("instanceTypes[0]", "p5.48xlarge", "p4d.24xlarge")]
    assert pools(review) == {"h100": ("changed", ["gpu", "pricePerNodeHour"])}


def test_resize_an_eks_node_group_updates_in_place():
    review = review_plans(eks_plan(), eks_plan(max_nodes=8))
    change = review.changes[0]
    assert (change.op, change.disruptive) == ("update", False)
    assert [(i.path, i.before, i.after, i.forces) for i in change.inputs] == [("scalingConfig.maxSize", 4.0, 8.0, None)]
    assert pools(review) == {"h100": ("changed", ["maxNodes", "maxGpus"])}
    assert cost(review) == (0.0, 0.0, 0.0, 393.28, 786.56, 393.28)


def test_plans_of_different_stacks_say_so():
    review = review_plans(eks_plan(), {**eks_plan(), "stack": "other"})
    assert review.notes and "URNs differ" in review.notes[0]
