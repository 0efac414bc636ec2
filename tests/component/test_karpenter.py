"""Component tests (layer 2): Karpenter on EKS (stacks/Pulumi.karpenter-eks.yaml) under mocks: the controller,
its interruption queue, and a NodePool + EC2NodeClass per GPU pool instead of managed node groups."""

import json

import pytest

from gpufleet.base import versions
from gpufleet.base.spec import SpecError, load_spec
from gpufleet.testing import mocked_id, mocked_output
from tests.helpers import by_type, example_config, one, parent_of, stack_file
from tests.karpenter_plan import karpenter_eks

NG = "aws:eks/nodeGroup:NodeGroup"
RELEASE = "kubernetes:helm.sh/v3:Release"
NODEPOOL = "kubernetes:karpenter.sh/v1:NodePool"
NODECLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
CB = "cr-0123456789abcdef0"


@pytest.fixture(scope="module")
def p():
    return karpenter_eks()


def test_no_node_groups_for_gpu_pools_and_no_cluster_autoscaler(p):
    assert [r.name for r in by_type(p, NG)] == ["karpenter-gpu-pool-system-ng"]
    charts = sorted(r.inputs["chart"] for r in by_type(p, RELEASE))
    assert "cluster-autoscaler" not in charts and "oci://public.ecr.aws/karpenter/karpenter" in charts


def test_controller_release_on_the_system_pool(p):
    rel = one(p, RELEASE, "karpenter-gpu-karpenter-release")
    assert parent_of(p, rel).type == "gpufleet:eks:Karpenter"
    assert rel.inputs["version"] == versions.KARPENTER.version and rel.inputs["namespace"] == "kube-system"
    values = rel.inputs["values"]
    assert values["settings"] == {"clusterName": "karpenter-gpu", "interruptionQueue": "karpenter-gpu-karpenter",
                                  "featureGates": {"reservedCapacity": True}}
    assert values["nodeSelector"] == {"gpufleet.io/pool": "system"}
    assert values["serviceAccount"] == {"name": "karpenter"}  # Pod Identity: no IRSA annotation


def test_interruption_queue_and_rules(p):
    q = one(p, "aws:sqs/queue:Queue", "karpenter-gpu-karpenter-queue").inputs
    assert q["name"] == "karpenter-gpu-karpenter" and q["messageRetentionSeconds"] == 300 and q["sqsManagedSseEnabled"] is True
    policy = json.loads(one(p, "aws:sqs/queuePolicy:QueuePolicy", "karpenter-gpu-karpenter-queue-policy").inputs["policy"])
    assert policy["Statement"][0]["Principal"] == {"Service": ["events.amazonaws.com", "sqs.amazonaws.com"]}
    assert policy["Statement"][1]["Effect"] == "Deny"
    patterns = {r.name.removeprefix("karpenter-gpu-karpenter-"): json.loads(r.inputs["eventPattern"])
                for r in by_type(p, "aws:cloudwatch/eventRule:EventRule")}
    assert patterns == {
        "scheduled-change": {"source": ["aws.health"], "detail-type": ["AWS Health Event"]},
        "spot-interruption": {"source": ["aws.ec2"], "detail-type": ["EC2 Spot Instance Interruption Warning"]},
        "rebalance": {"source": ["aws.ec2"], "detail-type": ["EC2 Instance Rebalance Recommendation"]},
        "instance-state-change": {"source": ["aws.ec2"], "detail-type": ["EC2 Instance State-change Notification"]},
        "capacity-reservation-interruption": {"source": ["aws.ec2"], "detail-type": ["EC2 Capacity Reservation Instance Interruption Warning"]},
    }
    targets = by_type(p, "aws:cloudwatch/eventTarget:EventTarget")
    assert len(targets) == 5 and {t.inputs["targetId"] for t in targets} == {"KarpenterInterruptionQueueTarget"}


def test_pod_identity_role_and_policy(p):
    assoc = one(p, "aws:eks/podIdentityAssociation:PodIdentityAssociation").inputs
    assert assoc["namespace"] == "kube-system" and assoc["serviceAccount"] == "karpenter"
    trust = json.loads(one(p, "aws:iam/role:Role", "karpenter-gpu-karpenter-role").inputs["assumeRolePolicy"])
    assert trust["Statement"][0]["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    policy = json.loads(one(p, "aws:iam/rolePolicy:RolePolicy", "karpenter-gpu-karpenter-role-policy").inputs["policy"])
    sids = {s["Sid"] for s in policy["Statement"]}
    assert {"AllowInterruptionQueueActions", "AllowPassingInstanceRole", "AllowScopedDeletion"} <= sids
    assert one(p, "aws:eks/addon:Addon", "karpenter-gpu-karpenter-pod-identity-agent").inputs["addonName"] == "eks-pod-identity-agent"


def test_spot_nodepool_diversified_with_gpu_limit_and_disruption(p):
    np_ = one(p, NODEPOOL, "karpenter-gpu-pool-l4-spot-nodepool")
    assert parent_of(p, np_).type == "gpufleet:eks:KarpenterNodePool"
    spec = np_.inputs["spec"]
    assert spec["template"]["spec"]["requirements"] == [
        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["g6.xlarge", "g6.2xlarge", "g6.4xlarge", "gr6.4xlarge"]},
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]},
    ]
    assert spec["limits"] == {"nvidia.com/gpu": 8}
    assert spec["disruption"] == {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "30m", "budgets": [{"nodes": "1"}]}
    assert spec["template"]["spec"]["taints"] == [
        {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"},
        {"key": "gpufleet.io/spot", "value": "true", "effect": "NoSchedule"},
    ]
    assert spec["template"]["metadata"]["labels"]["gpufleet.io/capacity-type"] == "spot"
    assert spec["template"]["spec"]["nodeClassRef"] == {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "l4-spot"}


def test_capacity_block_nodepool_and_nodeclass(p):
    spec = one(p, NODEPOOL, "karpenter-gpu-pool-h100-block-nodepool").inputs["spec"]
    reqs = {r["key"]: r["values"] for r in spec["template"]["spec"]["requirements"]}
    assert reqs == {"node.kubernetes.io/instance-type": ["p5.48xlarge"], "karpenter.sh/capacity-type": ["reserved"],
                    "topology.kubernetes.io/zone": ["us-east-1b"]}
    assert spec["limits"] == {"nvidia.com/gpu": 16}
    nc = one(p, NODECLASS, "karpenter-gpu-pool-h100-block-nodeclass").inputs["spec"]
    # The pinned release of the cluster's minor (issue 50), in the CRD's pinned form "al2023@vYYYYMMDD"
    assert nc["amiSelectorTerms"] == [{"alias": "al2023@v20260714"}]
    assert versions.EKS_AL2023_RELEASE_PINS["1.35"].endswith("-20260714")
    assert nc["capacityReservationSelectorTerms"] == [{"id": CB}]
    assert nc["placementGroupSelector"] == {"name": mocked_output(one(p, "aws:ec2/placementGroup:PlacementGroup"), "name")}
    assert nc["role"] == mocked_output(one(p, "aws:iam/role:Role", "karpenter-gpu-eks-node-role"), "name")  # the cluster's node role (its EC2_LINUX access entry exists)
    assert len(nc["networkInterfaces"]) == 32 and nc["networkInterfaces"][0] == {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"}
    assert {i["interfaceType"] for i in nc["networkInterfaces"][1:]} == {"efa-only"}
    assert nc["blockDeviceMappings"] == [{"deviceName": "/dev/xvda", "ebs": {
        "volumeSize": "500Gi", "volumeType": "gp3", "encrypted": True, "deleteOnTermination": True}}]
    assert nc["metadataOptions"] == {"httpEndpoint": "enabled", "httpTokens": "required", "httpPutResponseHopLimit": 1}
    assert nc["subnetSelectorTerms"] == [{"id": mocked_id(one(p, "aws:ec2/subnet:Subnet", "karpenter-gpu-network-private-us-east-1b"))}]
    assert len(nc["securityGroupSelectorTerms"]) == 2  # the cluster's and the EFA group


def test_bottlerocket_nodeclass_selects_the_pinned_release(p):
    """Bottlerocket pools are pinned too (issue 50): `bottlerocket@v1.N.P`, never `latest`."""
    nc = one(p, NODECLASS, "karpenter-gpu-pool-l4-burst-nodeclass").inputs["spec"]
    assert nc["amiSelectorTerms"] == [{"alias": "bottlerocket@v1.65.0"}]
    assert versions.BOTTLEROCKET_RELEASE_PINS["1.35"] == "1.65.0"


def _problems(config) -> list[str]:
    sf = stack_file(config)
    with pytest.raises(SpecError) as exc:
        load_spec(sf.stack, sf.config, sf.secret_keys)
    return [str(x) for x in exc.value.problems]


def test_karpenter_spot_without_the_interruption_queue():
    c = example_config("karpenter-eks")
    c["gpufleet:cluster"]["eks"]["autoscaler"]["interruptionQueue"] = False
    assert _problems(c) == [
        "stack 'test': gpufleet:cluster.eks.autoscaler.interruptionQueue: pool 'l4-spot' is spot: Karpenter needs its "
        "interruption queue to drain nodes before EC2 reclaims them (spot interruption, capacity reservation end); set "
        "interruptionQueue: true (got False)",
        "stack 'test': gpufleet:cluster.eks.autoscaler.interruptionQueue: pool 'h100-block' is reserved: Karpenter needs "
        "its interruption queue to drain nodes before EC2 reclaims them (spot interruption, capacity reservation end); set "
        "interruptionQueue: true (got False)",
    ]


def test_karpenter_settings_and_shorthand():
    c = example_config("prod-eks")
    c["gpufleet:cluster"]["eks"]["autoscaler"] = "karpenter"
    c["gpufleet:nodePools"][1]["minNodes"] = 0
    sf = stack_file(c)
    assert load_spec(sf.stack, sf.config, sf.secret_keys).cluster.eks.autoscaler.kind == "karpenter"
    c["gpufleet:nodePools"][1]["minNodes"] = 1
    assert _problems(c) == [
        "stack 'test': gpufleet:nodePools[1].minNodes: a Karpenter NodePool has no minimum size: nodes exist only while "
        "pods need them (allowed with karpenter: 0) (got 1)",
    ]
    c = example_config("prod-eks")
    c["gpufleet:cluster"]["eks"]["autoscaler"] = {"consolidateAfter": "1h"}
    assert _problems(c) == ["stack 'test': gpufleet:cluster.eks.autoscaler.consolidateAfter: only used with kind: karpenter"]


def test_cluster_autoscaler_settings_are_refused_with_karpenter():
    c = example_config("karpenter-eks")
    c["gpufleet:cluster"]["eks"]["autoscaler"]["expander"] = "price"
    assert _problems(c) == [
        "stack 'test': gpufleet:cluster.eks.autoscaler.expander: only used with kind: cluster-autoscaler (Karpenter "
        "consolidates with consolidateAfter and disruptionBudget)",
    ]
    c["gpufleet:cluster"]["eks"]["autoscaler"] = "karpentr"
    assert _problems(c) == [
        "stack 'test': gpufleet:cluster.eks.autoscaler.kind: Input should be 'cluster-autoscaler' or 'karpenter' (got 'karpentr')",
    ]


def test_a_taint_without_a_value_leaves_value_out_of_the_nodepool():
    # The NodePool CRD's taint value pattern (karpenter.sh_nodepools.yaml of the pinned release) refuses "".
    from gpufleet.components.eks.karpenter_pool import karpenter_taint

    assert karpenter_taint({"key": "dedicated", "value": "", "effect": "NoSchedule"}) == {
        "key": "dedicated", "effect": "NoSchedule"}
    assert karpenter_taint({"key": "k", "value": "v", "effect": "NoSchedule"})["value"] == "v"
