"""examples/byo-program: a user's own Pulumi program with gpufleet's EKS parts next to its own resources, planned
as `gpufleet plan --program examples/byo-program` plans it (gpufleet.testing.plan_directory: its own project name,
stack file and __main__.py, as `pulumi up` would run it)."""

import pytest
import yaml

from gpufleet import testing
from gpufleet.testing import mocked_id, mocked_output
from tests.component.test_standard_mocks import run_standard
from tests.helpers import ROOT

PROGRAM = ROOT / "examples" / "byo-program"


@pytest.fixture(scope="module")
def planned_program():
    return testing.plan_directory(PROGRAM, stack="example")


@pytest.fixture(scope="module")
def run(planned_program):
    config = yaml.safe_load((PROGRAM / "Pulumi.example.yaml").read_text())["config"]
    return planned_program.resources, config


def find(regs, type_, name):
    found = [r for r in regs if r.type == type_ and r.name == name]
    assert len(found) == 1, f"expected one {type_} {name}, found {[(r.type, r.name) for r in regs if r.type == type_]}"
    return found[0]


def at_root(r) -> bool:
    return r.parent is not None and "pulumi:pulumi:Stack" in r.parent


def test_users_own_bucket_beside_gpufleets_parts(run):
    regs, _ = run
    bucket = find(regs, "aws:s3/bucket:Bucket", "ml-checkpoints")
    block = find(regs, "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock", "ml-checkpoints")
    assert at_root(bucket) and at_root(block)
    assert block.inputs["bucket"] == mocked_id(bucket) and block.inputs["blockPublicPolicy"] is True
    # gpufleet's components sit at the root of the user's stack, beside the bucket; nothing else wraps them.
    assert {r.type for r in regs if at_root(r) and r.type.startswith("gpufleet:")} == {
        "gpufleet:eks:EksCluster", "gpufleet:eks:EksNodeGroup", "gpufleet:eks:ClusterAutoscaler", "gpufleet:addons:GpuOperator",
    }
    assert not [r for r in regs if r.type == "gpufleet:index:GpuCluster"]


def test_the_users_subnets_reach_the_cluster_and_every_node_group(run):
    regs, config = run
    subnets = [s["id"] for s in config["gpu-training:subnets"]]
    component = find(regs, "gpufleet:eks:EksCluster", "ml-eks")
    cluster = find(regs, "aws:eks/cluster:Cluster", "ml-eks-cluster")
    assert at_root(component) and cluster.parent == component.urn
    assert cluster.inputs["name"] == "ml" and cluster.inputs["version"] == "1.34"
    assert cluster.inputs["vpcConfig"]["subnetIds"] == subnets
    assert cluster.inputs["vpcConfig"]["endpointPublicAccess"] is False
    for pool in ("system", "l4"):
        group = find(regs, "gpufleet:eks:EksNodeGroup", f"ml-pool-{pool}")
        ng = find(regs, "aws:eks/nodeGroup:NodeGroup", f"ml-pool-{pool}-ng")
        assert at_root(group) and ng.parent == group.urn
        assert ng.inputs["subnetIds"] == subnets
        assert ng.inputs["clusterName"] == "ml"
        assert ng.inputs["nodeRoleArn"] == mocked_output(find(regs, "aws:iam/role:Role", "ml-eks-node-role"), "arn")


def test_gpu_pool_is_tainted_labelled_and_scales_from_zero(run):
    regs, _ = run
    ng = find(regs, "aws:eks/nodeGroup:NodeGroup", "ml-pool-l4-ng")
    assert ng.inputs["instanceTypes"] == ["g6.xlarge"] and ng.inputs["capacityType"] == "ON_DEMAND"
    assert ng.inputs["taints"] == [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}]
    assert ng.inputs["scalingConfig"]["minSize"] == 0 and ng.inputs["scalingConfig"]["maxSize"] == 2
    assert ng.inputs["labels"]["gpufleet.io/pool"] == "l4" and ng.inputs["labels"]["gpufleet.io/gpu-model"] == "L4"
    assert ng.inputs["labels"]["k8s.amazonaws.com/accelerator"] == "nvidia-l4"
    tags = ng.inputs["tags"]
    assert tags["k8s.io/cluster-autoscaler/node-template/resources/nvidia.com/gpu"] == "1"
    assert tags["k8s.io/cluster-autoscaler/node-template/taint/nvidia.com/gpu"] == "true:NoSchedule"
    system = find(regs, "aws:eks/nodeGroup:NodeGroup", "ml-pool-system-ng")
    assert "taints" not in system.inputs or system.inputs["taints"] == []
    assert system.inputs["scalingConfig"]["minSize"] == 2


def test_gpu_operator_on_the_clusters_provider_without_driver_or_toolkit(run):
    regs, _ = run
    operator = find(regs, "gpufleet:addons:GpuOperator", "ml-gpu-operator")
    release = find(regs, "kubernetes:helm.sh/v3:Release", "ml-gpu-operator-release")
    provider = find(regs, "pulumi:providers:kubernetes", "ml-eks-k8s")
    assert at_root(operator) and release.parent == operator.urn
    assert release.provider.startswith(provider.urn)
    assert release.inputs["values"]["driver"] == {"enabled": False}
    assert release.inputs["values"]["toolkit"] == {"enabled": False}
    assert release.inputs["values"]["daemonsets"]["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    # Add-ons wait for the system node group (access.ready), not for the GPU pool that may be at zero.
    # (a dependency on a component is one on its children)
    assert find(regs, "aws:eks/nodeGroup:NodeGroup", "ml-pool-system-ng").urn in release.dependencies
    assert find(regs, "aws:eks/nodeGroup:NodeGroup", "ml-pool-l4-ng").urn not in release.dependencies
    find(regs, "gpufleet:eks:ClusterAutoscaler", "ml-autoscaler")


def test_training_pods_reach_the_bucket_through_the_clusters_oidc(run):
    regs, _ = run
    role = find(regs, "aws:iam/role:Role", "ml-trainer")
    assert at_root(role)
    assert "system:serviceaccount:training:trainer" in role.inputs["assumeRolePolicy"]
    assert "oidc-provider/" in role.inputs["assumeRolePolicy"]
    policy = find(regs, "aws:iam/rolePolicy:RolePolicy", "ml-trainer-checkpoints")
    assert f":{mocked_id(find(regs, 'aws:s3/bucket:Bucket', 'ml-checkpoints'))}/*" in policy.inputs["policy"]
    sa = find(regs, "kubernetes:core/v1:ServiceAccount", "trainer")
    assert sa.inputs["metadata"]["annotations"]["eks.amazonaws.com/role-arn"] == mocked_output(role, "arn")
    assert sa.provider.startswith(find(regs, "pulumi:providers:kubernetes", "ml-eks-k8s").urn)


def test_the_policy_pack_finds_nothing_to_fault(planned_program):
    """gpufleet's rules judge any program by resource type: the user's program built from the parts passes them."""
    # Only the advisory that the program has GPU pools and no metrics pipeline (the parts used here install none).
    assert [(v.policy, v.level, v.urn.rsplit("::", 1)[-1]) for v in planned_program.violations] == [
        ("gpu-observability", "advisory", "ml-pool-l4-ng")]
    assert not planned_program.has_mandatory_violation


def test_its_own_project_stack_and_exports(planned_program):
    """The project's name and the stack name reach the URNs; keys without a namespace are the project's."""
    assert planned_program.stack == "example"
    assert {r.urn.split("::")[1] for r in planned_program.resources} == {"gpu-training"}
    assert set(planned_program.outputs) == {"kubeconfig", "checkpointBucket", "gpuNodeGroup"}


def test_without_a_gpucluster_the_cost_says_what_it_could_not_price(planned_program):
    """No GpuCluster, no spec to price from: one unpriced item says so, and the totals read "at least"."""
    cost = planned_program.cost.to_json()
    assert planned_program.spec is None and planned_program.capacity == []
    assert [(i["name"], i["unitHourly"]) for i in cost["items"]] == [("the program's cloud resources", None)]
    assert "builds no GpuCluster" in cost["items"][0]["source"]


def test_the_eks_parts_register_the_same_under_pulumis_standard_mocks(planned_program):
    """The EKS cluster (its CA and OIDC issuer unknown to those mocks), IRSA roles, the autoscaler and node groups
    (tests/component/test_standard_mocks.py)."""
    program, project, config, _ = testing.load_directory(PROGRAM, "example")
    mocks = run_standard(program, "example", config, project)
    assert sorted(mocks.created) == sorted((r.type, r.name) for r in planned_program.resources)
    assert ("aws:eks/cluster:Cluster", "ml-eks-cluster") in mocks.created
