"""Component tests (layer 2): the workload layer (gpufleet:addons) under Pulumi's mocks.

stacks/Pulumi.teams.yaml: k3s, pool a100-train (2 hosts x 8 A100), pool l4-infer (2 hosts x 1 L4),
teams research (nominal 8, unlimited borrowing) and vision (namespace vision-ml, nominal 8, borrow 4).
"""

import pytest

from gpufleet.base import labels as L
from gpufleet.base import versions
from tests.helpers import by_type, example_config, one, parent_of, plan_config, planned

RELEASE = "kubernetes:helm.sh/v3:Release"
FLAVOR = "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor"
CQ = "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"
LQ = "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue"
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"}


@pytest.fixture(scope="module")
def teams():
    return planned("teams")


@pytest.fixture(scope="module")
def volcano():
    """teams (cluster name `teams`), with Volcano on the inference pool and the trainer's bundled JobSet."""
    cfg = example_config("teams")
    cfg["gpufleet:addons"]["volcano"] = {"enabled": True, "pools": ["l4-infer"]}
    cfg["gpufleet:addons"]["trainer"] = {"enabled": True}
    cfg["gpufleet:addons"]["jobset"] = {"enabled": False}
    return plan_config(cfg, stack="vol", policies=False)


def test_every_release_is_pinned_in_its_namespace_under_its_component(teams):
    expected = {
        "teams-kueue-release": (versions.KUEUE, "kueue-system", "gpufleet:addons:Kueue"),
        "teams-jobset-release": (versions.JOBSET, "jobset-system", "gpufleet:addons:JobSet"),
        "teams-trainer-release": (versions.KUBEFLOW_TRAINER, "kubeflow-system", "gpufleet:addons:Trainer"),
        "teams-keda-release": (versions.KEDA, "keda", "gpufleet:addons:Keda"),
    }
    releases = {r.name: r for r in by_type(teams, RELEASE) if r.name in expected}
    assert set(releases) == set(expected)
    for name, (chart, namespace, component) in expected.items():
        r = releases[name]
        assert r.inputs["version"] == chart.version, name
        assert r.inputs["namespace"] == namespace, name
        assert r.inputs["name"] == chart.name, name
        if chart.archive:
            # the archive at a URL that does not move, never the project's index (versions.HelmChart.archive)
            assert r.inputs["chart"] == chart.archive and "repositoryOpts" not in r.inputs
        elif chart.repo.startswith("oci://"):
            assert r.inputs["chart"] == f"{chart.repo}/{chart.name}" and "repositoryOpts" not in r.inputs
        else:
            assert r.inputs["chart"] == chart.name and r.inputs["repositoryOpts"]["repo"] == chart.repo
        parent = parent_of(teams, r)
        assert parent.type == component and parent.name == name.removesuffix("-release")
        assert parent_of(teams, parent).name == "teams", "add-ons are children of the cluster component"
        ns = one(teams, "kubernetes:core/v1:Namespace", name.replace("-release", "-ns"))
        assert ns.inputs["metadata"]["name"] == namespace and ns.parent == parent.urn
    assert not [r for r in teams.resources if "volcano" in r.name], "Volcano is off unless enabled"


def test_trainer_uses_the_jobset_addon_not_its_bundled_copy(teams, volcano):
    off = {"defaultEnabled": False}  # runtimes are gpufleet resources, not the chart's kubectl hook
    assert one(teams, RELEASE, "teams-trainer-release").inputs["values"] == {"jobset": {"install": False}, "runtimes": off}
    assert one(volcano, RELEASE, "teams-trainer-release").inputs["values"] == {"jobset": {"install": True}, "runtimes": off}


def test_trainer_runtimes_are_children_created_after_the_release(teams):
    """Deploy order (issue 14): each upstream ClusterTrainingRuntime is a child of the Trainer component and
    waits for the trainer release (which installs the ClusterTrainingRuntime CRD)."""
    comp = one(teams, "gpufleet:addons:Trainer", "teams-trainer")
    release = one(teams, RELEASE, "teams-trainer-release")
    found = {r.name: r for r in teams.resources if r.type == "kubernetes:trainer.kubeflow.org/v1alpha1:ClusterTrainingRuntime"}
    assert set(found) == {f"teams-trainer-runtime-{n}" for n in (
        "torch-distributed", "deepspeed-distributed", "mlx-distributed", "jax-distributed", "xgboost-distributed")}
    for r in found.values():
        assert r.parent == comp.urn
        assert release.urn in r.dependencies
        assert r.inputs["metadata"]["labels"]["trainer.kubeflow.org/webhook-validation"] == "disabled"
    torch = found["teams-trainer-runtime-torch-distributed"].inputs
    assert torch["spec"]["mlPolicy"] == {"numNodes": 1, "torch": {}}


def test_flavors_carry_the_pool_labels_and_taints(teams):
    flavor = one(teams, FLAVOR, "teams-kueue-flavor-a100-train")
    assert flavor.inputs["metadata"]["name"] == "a100-train"
    assert flavor.inputs["spec"]["nodeLabels"] == {
        L.POOL_LABEL: "a100-train", L.GPU_MODEL_LABEL: "A100-80GB", L.CAPACITY_TYPE_LABEL: "on-demand",
    }
    assert flavor.inputs["spec"]["tolerations"] == [GPU_TOLERATION]
    assert [r.name for r in by_type(teams, FLAVOR)] == ["teams-kueue-flavor-a100-train"], "only pools with queues"


def test_cluster_queues_quota_cohort_and_preemption(teams):
    research = one(teams, CQ, "teams-kueue-cq-research-a100-train").inputs
    vision = one(teams, CQ, "teams-kueue-cq-vision-a100-train").inputs
    assert research["metadata"]["name"] == "research-a100-train"
    for cq, ns in ((research, "research"), (vision, "vision-ml")):
        spec = cq["spec"]
        assert spec["cohortName"] == "gpufleet"
        assert spec["preemption"] == {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any"}
        assert spec["namespaceSelector"] == {"matchLabels": {"kubernetes.io/metadata.name": ns}}
        (group,) = spec["resourceGroups"]
        assert group["coveredResources"] == ["cpu", "memory", "nvidia.com/gpu"]
        (flavor,) = group["flavors"]
        assert flavor["name"] == "a100-train"
    gpu = {q: next(r for r in cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"] if r["name"] == "nvidia.com/gpu")
           for q, cq in (("research", research), ("vision", vision))}
    assert gpu["research"] == {"name": "nvidia.com/gpu", "nominalQuota": 8}  # unlimited borrowing: no limit set
    assert gpu["vision"] == {"name": "nvidia.com/gpu", "nominalQuota": 8, "borrowingLimit": 4}


def test_default_quota_is_what_the_pool_advertises_at_max_size():
    cfg = example_config("teams")
    cfg["gpufleet:addons"]["kueue"]["teams"] = [{"name": "solo", "queues": [{"pool": "a100-train"}, {"pool": "l4-infer"}]}]
    p = plan_config(cfg, stack="solo", policies=False)
    quotas = {}
    for r in by_type(p, CQ):
        flavor = r.inputs["spec"]["resourceGroups"][0]["flavors"][0]
        quotas[flavor["name"]] = next(x["nominalQuota"] for x in flavor["resources"] if x["name"] == "nvidia.com/gpu")
    cap = {c.pool: c.max_nodes * c.advertised[L.GPU_RESOURCE] for c in p.capacity}
    assert quotas == cap == {"a100-train": 16, "l4-infer": 2}
    quota = one(p, "kubernetes:core/v1:ResourceQuota", "teams-kueue-team-solo-gpu-quota")
    assert quota.inputs["spec"]["hard"] == {"requests.nvidia.com/gpu": "18"}
    assert one(p, "kubernetes:core/v1:LimitRange").inputs["spec"]["limits"] == [{"type": "Container", "max": {"nvidia.com/gpu": "8"}}]


def test_local_queue_per_team_namespace_points_at_its_cluster_queue(teams):
    lqs = {r.name: r.inputs for r in by_type(teams, LQ)}
    assert lqs == {
        "teams-kueue-lq-research-a100-train": {
            "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
            "metadata": {"name": "a100-train", "namespace": "research"}, "spec": {"clusterQueue": "research-a100-train"},
        },
        "teams-kueue-lq-vision-a100-train": {
            "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
            # The team's jobs must share a rack (stacks/Pulumi.teams.yaml): the annotation they copy (docs/topology.md).
            "metadata": {"name": "a100-train", "namespace": "vision-ml",
                         "annotations": {"gpufleet.io/podset-required-topology": "gpufleet.io/topology-rack"}},
            "spec": {"clusterQueue": "vision-a100-train"},
        },
    }


def test_team_namespaces_quota_and_limits(teams):
    for team, ns, quota in (("research", "research", 16), ("vision", "vision-ml", 12)):
        comp = one(teams, "gpufleet:addons:TeamNamespace", f"teams-kueue-team-{team}")
        assert parent_of(teams, comp).type == "gpufleet:addons:Kueue"
        namespace = one(teams, "kubernetes:core/v1:Namespace", f"teams-kueue-team-{team}-ns")
        assert namespace.inputs["metadata"] == {"name": ns, "labels": {L.TEAM_LABEL: team}}
        rq = one(teams, "kubernetes:core/v1:ResourceQuota", f"teams-kueue-team-{team}-gpu-quota")
        # nominal + borrowing limit, capped by the pool (research borrows without limit: the whole pool).
        assert rq.inputs["spec"] == {"hard": {"requests.nvidia.com/gpu": str(quota)}}
        assert rq.inputs["metadata"] == {"name": "gpu-quota", "namespace": ns} and rq.parent == comp.urn
        lr = one(teams, "kubernetes:core/v1:LimitRange", f"teams-kueue-team-{team}-gpu-limits")
        assert lr.inputs["spec"] == {"limits": [{"type": "Container", "max": {"nvidia.com/gpu": "8"}}]}


def test_priority_classes_order(teams):
    pcs = {r.inputs["metadata"]["name"]: r for r in by_type(teams, "kubernetes:scheduling.k8s.io/v1:PriorityClass")}
    assert list(sorted(pcs, key=lambda n: -pcs[n].inputs["value"])) == ["production-inference", "training", "batch-preemptible"]
    assert pcs["batch-preemptible"].inputs["preemptionPolicy"] == "Never"
    assert pcs["training"].inputs["preemptionPolicy"] == "PreemptLowerPriority"
    assert all(r.inputs["globalDefault"] is False for r in pcs.values())
    assert parent_of(teams, pcs["training"]).type == "gpufleet:addons:PriorityClasses"


def test_volcano_queue_per_claimed_pool(volcano):
    release = one(volcano, RELEASE, "teams-volcano-release")
    assert (release.inputs["chart"], release.inputs["version"]) == (versions.VOLCANO.archive, versions.VOLCANO.version)
    queue = one(volcano, "kubernetes:scheduling.volcano.sh/v1beta1:Queue")
    assert queue.name == "teams-volcano-queue-l4-infer"
    assert queue.inputs["spec"] == {"weight": 1, "reclaimable": True, "capability": {"nvidia.com/gpu": "2"}}
    assert parent_of(volcano, queue).type == "gpufleet:addons:Volcano"
    assert "teams-jobset-release" not in {r.name for r in by_type(volcano, RELEASE)}


def test_nothing_is_installed_by_default():
    p = planned("dev")
    types = {r.type for r in p.resources}
    assert not [t for t in types if t.startswith("gpufleet:addons:") and t != "gpufleet:addons:GpuOperator"]
    assert {r.name for r in by_type(p, RELEASE)} == {"dev-gpu-operator-release"}
