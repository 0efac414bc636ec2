"""Component tests (layer 2): EksNodeGroup and EksEfaFabric of the EKS example stack under mocks."""

import pytest

from gpufleet.base import versions
from tests.eks_plan import prod_eks, recorded
from gpufleet.app.plan.mocks import eks_cluster_security_group, node_group_asg
from gpufleet.testing import mocked, mocked_id, mocked_output
from tests.helpers import by_type, example_config, one, parent_of, plan_config

NG = "aws:eks/nodeGroup:NodeGroup"
LT = "aws:ec2/launchTemplate:LaunchTemplate"


@pytest.fixture(scope="module")
def p():
    return prod_eks()[0]


@pytest.fixture(scope="module")
def invokes():
    return prod_eks()[1].invokes


def test_node_groups_parents_and_scaling(p):
    for pool, lo, hi in [("system", 2, 4), ("h100-train", 0, 4), ("l4-infer", 1, 8)]:
        ng = one(p, NG, f"prod-gpu-pool-{pool}-ng")
        assert parent_of(p, ng).name == f"prod-gpu-pool-{pool}"
        assert ng.inputs["scalingConfig"] == {"minSize": lo, "maxSize": hi, "desiredSize": lo}
        assert ng.inputs["clusterName"] == "prod-gpu"
        assert ng.inputs["nodeRoleArn"] == mocked_output(one(p, "aws:iam/role:Role", "prod-gpu-eks-node-role"), "arn")
        # The autoscaler owns the desired size (pulumi/pulumi-eks#321).
        assert ng.ignore_changes == ["scalingConfig.desiredSize"]


def test_gpu_pool_capacity_instance_types_labels_and_taints(p):
    h100 = one(p, NG, "prod-gpu-pool-h100-train-ng").inputs
    assert h100["capacityType"] == "SPOT" and h100["instanceTypes"] == ["p5.48xlarge"]
    assert h100["labels"] == {
        "gpufleet.io/pool": "h100-train", "gpufleet.io/gpu": "true", "gpufleet.io/gpu-model": "H100-80GB",
        "gpufleet.io/capacity-type": "spot", "gpufleet.io/efa": "true", "gpufleet.io/rdma": "true",
        "k8s.amazonaws.com/accelerator": "nvidia-h100-80gb",
    }
    assert h100["taints"] == [
        {"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"},
        {"key": "gpufleet.io/spot", "value": "true", "effect": "NO_SCHEDULE"},
    ]
    l4 = one(p, NG, "prod-gpu-pool-l4-infer-ng").inputs
    assert l4["capacityType"] == "ON_DEMAND" and l4["instanceTypes"] == ["g6.xlarge", "g6.2xlarge"]
    assert l4["taints"] == [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}]
    assert len(l4["subnetIds"]) == 3  # non-EFA pools span every zone
    system = one(p, NG, "prod-gpu-pool-system-ng").inputs
    assert system["capacityType"] == "ON_DEMAND"
    assert system.get("taints", []) == []  # system pods land here without tolerations
    assert system["labels"] == {"gpufleet.io/pool": "system"}


def test_al2023_pools_run_the_pinned_release_never_an_id_nor_ssm(p, invokes):
    """Issue 50: AL2023 node groups (GPU and system) run gpufleet's pinned release of the cluster's minor, not SSM's
    `recommended` parameter, whose value moves with every AMI release."""
    for pool, ami_type in [("system", "AL2023_x86_64_STANDARD"), ("h100-train", "AL2023_x86_64_NVIDIA"), ("l4-infer", "AL2023_x86_64_NVIDIA")]:
        ng = one(p, NG, f"prod-gpu-pool-{pool}-ng").inputs
        assert ng["amiType"] == ami_type
        assert ng["releaseVersion"] == "1.35.6-20260714" == versions.EKS_AL2023_RELEASE_PINS["1.35"]
    for lt in by_type(p, LT):
        assert "imageId" not in lt.inputs, lt.name
    assert [args for tok, args in invokes if tok == "aws:ssm/getParameter:getParameter"] == []
    assert versions.eks_ami("bottlerocket-nvidia", "1.34") == (
        "BOTTLEROCKET_x86_64_NVIDIA", "/aws/service/bottlerocket/aws-k8s-1.34-nvidia/x86_64/latest/image_version",
    )


def test_a_pool_may_run_another_known_release_and_bottlerocket_reads_its_pinned_releases_parameter():
    """A Bottlerocket node group's releaseVersion ("1.N.P-<commit>") is the value of its pinned release's own SSM
    parameter (not `latest`'s), which does not move; a pool's amiRelease picks another release's parameter."""
    c = example_config("prod-eks")
    c["gpufleet:nodePools"][0]["amiRelease"] = "1.35.4-20260505"
    c["gpufleet:nodePools"][1]["ami"] = "bottlerocket-nvidia"
    c["gpufleet:nodePools"][2:] = [dict(c["gpufleet:nodePools"][1], name="l4-old", ami="bottlerocket-nvidia",
                                        amiRelease="1.57.0")]
    plan, monitor = recorded(lambda: plan_config(c, stack="prod-eks", policies=False))
    invokes = monitor.invokes
    assert one(plan, NG, "prod-gpu-pool-h100-train-ng").inputs["releaseVersion"] == "1.35.4-20260505"
    assert one(plan, NG, "prod-gpu-pool-system-ng").inputs["releaseVersion"] == "1.35.6-20260714"
    assert one(plan, NG, "prod-gpu-pool-l4-infer-ng").inputs["releaseVersion"] == (
        "the release in SSM /aws/service/bottlerocket/aws-k8s-1.35-nvidia/x86_64/1.65.0/image_version at deploy")
    assert sorted(a["name"] for tok, a in invokes if tok == "aws:ssm/getParameter:getParameter") == [
        "/aws/service/bottlerocket/aws-k8s-1.35-nvidia/x86_64/1.57.0/image_version",
        "/aws/service/bottlerocket/aws-k8s-1.35-nvidia/x86_64/1.65.0/image_version"]


def test_launch_templates_imdsv2_and_encrypted_gp3(p):
    for pool, size in [("system", 50), ("h100-train", 500), ("l4-infer", 200)]:
        lt = one(p, LT, f"prod-gpu-pool-{pool}-lt")
        assert parent_of(p, lt).name == f"prod-gpu-pool-{pool}"
        assert lt.inputs["metadataOptions"] == {"httpEndpoint": "enabled", "httpTokens": "required", "httpPutResponseHopLimit": 1}
        assert lt.inputs["blockDeviceMappings"] == [{
            "deviceName": "/dev/xvda",
            "ebs": {"volumeSize": size, "volumeType": "gp3", "encrypted": "true", "deleteOnTermination": "true"},
        }]
        ng = one(p, NG, f"prod-gpu-pool-{pool}-ng").inputs
        assert ng["launchTemplate"] == {"id": mocked_id(one(p, LT, f"prod-gpu-pool-{pool}-lt")), "version": "1"}


def test_efa_interfaces_placement_group_and_security_group(p):
    lt = one(p, LT, "prod-gpu-pool-h100-train-lt").inputs
    nics = lt["networkInterfaces"]
    assert len(nics) == 32  # p5.48xlarge: 32 network cards, one EFA each
    assert [n["networkCardIndex"] for n in nics] == list(range(32))
    assert [n["deviceIndex"] for n in nics] == [0] + [1] * 31
    # EC2 User Guide, "EFA configuration for P5 and P5e instances", use case 1: EFA with ENA on card 0 (the node's
    # IP), EFA-only on cards 1-31 (no IP each; 32 ENA interfaces invite source-IP and routing issues on the node).
    assert [n["interfaceType"] for n in nics] == ["efa"] + ["efa-only"] * 31
    sg = one(p, "aws:ec2/securityGroup:SecurityGroup", "prod-gpu-pool-h100-train-efa-sg")
    cluster_sg = eks_cluster_security_group(one(p, "aws:eks/cluster:Cluster").name)
    assert all(n["securityGroups"] == [cluster_sg, mocked_id(sg)] for n in nics)
    assert "vpcSecurityGroupIds" not in lt  # interfaces carry the groups
    pg = one(p, "aws:ec2/placementGroup:PlacementGroup")
    assert pg.inputs["strategy"] == "cluster"
    assert parent_of(p, pg).name == "prod-gpu-pool-h100-train-efa"
    assert lt["placement"] == {"groupName": mocked_output(pg, "name")}  # its auto-name
    assert sg.inputs["ingress"] == [{"protocol": "-1", "fromPort": 0, "toPort": 0, "self": True, "description": "EFA from members"}]
    assert {"protocol": "-1", "fromPort": 0, "toPort": 0, "self": True, "description": "EFA to members"} in sg.inputs["egress"]
    h100 = one(p, NG, "prod-gpu-pool-h100-train-ng").inputs
    assert h100["subnetIds"] == [mocked_id(one(p, "aws:ec2/subnet:Subnet", "prod-gpu-network-private-us-east-1a"))]  # one zone
    l4_lt = one(p, LT, "prod-gpu-pool-l4-infer-lt").inputs
    assert "networkInterfaces" not in l4_lt and "placement" not in l4_lt


def test_autoscaler_node_template_tags_for_scale_from_zero(p):
    tags = one(p, NG, "prod-gpu-pool-h100-train-ng").inputs["tags"]
    assert tags["k8s.io/cluster-autoscaler/enabled"] == "true"
    assert tags["k8s.io/cluster-autoscaler/prod-gpu"] == "owned"
    assert tags["k8s.io/cluster-autoscaler/node-template/resources/nvidia.com/gpu"] == "8"
    assert tags["k8s.io/cluster-autoscaler/node-template/resources/vpc.amazonaws.com/efa"] == "32"
    assert tags["k8s.io/cluster-autoscaler/node-template/label/gpufleet.io/gpu-model"] == "H100-80GB"
    assert tags["k8s.io/cluster-autoscaler/node-template/taint/nvidia.com/gpu"] == "true:NoSchedule"
    assert tags["k8s.io/cluster-autoscaler/node-template/taint/gpufleet.io/spot"] == "true:NoSchedule"
    l4 = one(p, NG, "prod-gpu-pool-l4-infer-ng").inputs["tags"]
    assert l4["k8s.io/cluster-autoscaler/node-template/resources/nvidia.com/gpu"] == "1"
    # Managed node groups do not copy tags to their ASG: each template tag is set on the ASG too.
    asg = {r.inputs["tag"]["key"]: r for r in by_type(p, "aws:autoscaling/tag:Tag") if r.name.startswith("prod-gpu-pool-h100-train-")}
    template = {k for k in tags if "/node-template/" in k}
    ng = one(p, NG, "prod-gpu-pool-h100-train-ng")
    asg_name = node_group_asg(ng.name, mocked(ng)[1]["nodeGroupName"])  # EKS names the group after the node group
    assert set(asg) == template
    for key, r in asg.items():
        assert r.inputs["autoscalingGroupName"] == asg_name
        assert r.inputs["tag"] == {"key": key, "value": tags[key], "propagateAtLaunch": False}
        assert parent_of(p, r).name == "prod-gpu-pool-h100-train"


def test_bottlerocket_pool_uses_its_ssm_path_and_data_volume():
    from gpufleet.app.plan.engine import register
    from tests.helpers import example_config, stack_file

    cfg = example_config("prod-eks")
    cfg["gpufleet:nodePools"][1]["ami"] = "bottlerocket-nvidia"
    cfg["gpufleet:workloads"]["cudaVersions"] = ["12.8"]
    _, monitor = register(stack_file(cfg))
    ng = next(r for r in monitor.registrations if r.name == "prod-gpu-pool-l4-infer-ng").inputs
    assert ng["amiType"] == "BOTTLEROCKET_x86_64_NVIDIA"
    lt = next(r for r in monitor.registrations if r.name == "prod-gpu-pool-l4-infer-lt").inputs
    assert lt["blockDeviceMappings"][0]["deviceName"] == "/dev/xvdb"
    assert ("aws:ssm/getParameter:getParameter", {"name": "/aws/service/bottlerocket/aws-k8s-1.35-nvidia/x86_64/1.65.0/image_version"}) in monitor.invokes


def test_gpu_pools_carry_the_autoscalers_aws_gpu_label(p):
    """cluster-autoscaler on AWS holds a node with `k8s.amazonaws.com/accelerator` (its GPULabel) but no
    allocatable nvidia.com/gpu as not ready yet; without the label a GPU node whose device plugin is still
    starting looks like a ready node that does not fit the pod, and the autoscaler adds another GPU node."""
    for pool, value in [("h100-train", "nvidia-h100-80gb"), ("l4-infer", "nvidia-l4")]:
        ng = one(p, NG, f"prod-gpu-pool-{pool}-ng").inputs
        assert ng["labels"]["k8s.amazonaws.com/accelerator"] == value
        # Mirrored as a node-template tag on the node group and its ASG, so a group at zero has it too.
        assert ng["tags"]["k8s.io/cluster-autoscaler/node-template/label/k8s.amazonaws.com/accelerator"] == value
        asg = [r for r in by_type(p, "aws:autoscaling/tag:Tag") if r.name.startswith(f"prod-gpu-pool-{pool}-asg-")]
        assert {"key": "k8s.io/cluster-autoscaler/node-template/label/k8s.amazonaws.com/accelerator",
                "value": value, "propagateAtLaunch": False} in [r.inputs["tag"] for r in asg]
    assert "k8s.amazonaws.com/accelerator" not in one(p, NG, "prod-gpu-pool-system-ng").inputs["labels"]


def test_efa_secondary_interface_type_follows_the_catalog():
    """Types without an efa_secondary fact keep EFA with ENA on every card (p4d: 4 cards)."""
    from gpufleet.components.eks.node_group import efa_interfaces
    from gpufleet.base.catalog import aws as aws_catalog

    p4d = aws_catalog.instance_type("p4d.24xlarge")
    assert p4d.efa_secondary == "efa"
    assert [n["interface_type"] for n in efa_interfaces(p4d.efa_interfaces, ["sg-1"], p4d.efa_secondary)] == ["efa"] * 4
    for name in ("p5.48xlarge", "p5e.48xlarge"):
        t = aws_catalog.instance_type(name)
        assert t.efa_secondary == "efa-only" and "efa_p5" in t.sources
    # p5en (issue 12): 16 cards, EFA with ENA on card 0, EFA-only on cards 1-15, like p5/p5e.
    p5en = aws_catalog.instance_type("p5en.48xlarge")
    assert "efa_p5en" in p5en.sources
    nics = efa_interfaces(p5en.efa_interfaces, ["sg-1"], p5en.efa_secondary)
    assert [n["interface_type"] for n in nics] == ["efa"] + ["efa-only"] * 15


def test_the_cloud_reports_the_pinned_release_back_so_a_second_up_changes_nothing(p):
    """The mocks answer as DescribeNodegroup does: the release asked for and the minor EKS derives from it. Before
    issue 50 the release came from SSM's moving `recommended` parameter, a new value at any `up` after an AMI release."""
    from gpufleet.app.review.diff import input_changes

    groups = [r for r in p.resources if r.type == NG]
    assert len(groups) == 3
    for ng in groups:
        assert mocked_output(ng, "releaseVersion") == ng.inputs["releaseVersion"] == "1.35.6-20260714"
        assert mocked_output(ng, "version") == "1.35"
        state = {**ng.inputs, "releaseVersion": mocked_output(ng, "releaseVersion")}
        assert input_changes(NG, state, ng.inputs) == []
