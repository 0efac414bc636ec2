"""Component tests (layer 2): the EKS add-ons (autoscaler, EFA device plugin, EBS, FSx) and the GPU
Operator's EKS values, under mocks."""

import json

import pytest

from gpufleet.base import versions
from gpufleet.base.versions import chart_name_of
from gpufleet.app.plan.mocks import PLAN_OIDC_ISSUER, eks_cluster_security_group
from tests.eks_plan import prod_eks
from gpufleet.testing import mocked_id, mocked_output
from tests.helpers import by_type, one, parent_of

RELEASE = "kubernetes:helm.sh/v3:Release"
HOST = PLAN_OIDC_ISSUER.removeprefix("https://")


@pytest.fixture(scope="module")
def p():
    return prod_eks()[0]


def _trust(p, role_name):
    stmt = json.loads(one(p, "aws:iam/role:Role", role_name).inputs["assumeRolePolicy"])["Statement"]
    assert len(stmt) == 1
    return stmt[0]


def test_autoscaler_release_on_system_pool(p):
    r = one(p, RELEASE, "prod-gpu-autoscaler-release")
    assert parent_of(p, r).name == "prod-gpu-autoscaler"
    chart = versions.CLUSTER_AUTOSCALER
    assert (r.inputs["chart"], r.inputs["version"]) == (chart.archive, chart.version) and "repositoryOpts" not in r.inputs
    assert r.inputs["namespace"] == "kube-system"
    v = r.inputs["values"]
    assert v["cloudProvider"] == "aws" and v["awsRegion"] == "us-east-1"
    assert v["autoDiscovery"] == {"clusterName": "prod-gpu"}
    assert v["image"]["tag"] == versions.CLUSTER_AUTOSCALER_IMAGES["1.35"]
    assert v["nodeSelector"] == {"gpufleet.io/pool": "system"}
    assert "tolerations" not in v  # never on GPU or spot nodes
    assert v["rbac"]["serviceAccount"] == {
        "name": "cluster-autoscaler",
        "annotations": {"eks.amazonaws.com/role-arn": mocked_output(one(p, "aws:iam/role:Role", "prod-gpu-autoscaler-role"), "arn")},
    }
    assert v["extraArgs"]["scale-down-unneeded-time"] == "10m"
    assert v["extraArgs"]["scale-down-utilization-threshold"] == 0.5
    assert v["extraArgs"]["expander"] == "least-waste"


def test_autoscaler_iam_scoped_to_the_cluster(p):
    trust = _trust(p, "prod-gpu-autoscaler-role")
    assert trust["Action"] == "sts:AssumeRoleWithWebIdentity"
    assert trust["Principal"] == {"Federated": f"arn:aws:iam::123456789012:oidc-provider/{HOST}"}
    assert trust["Condition"] == {"StringEquals": {
        f"{HOST}:sub": "system:serviceaccount:kube-system:cluster-autoscaler", f"{HOST}:aud": "sts.amazonaws.com",
    }}
    doc = json.loads(one(p, "aws:iam/rolePolicy:RolePolicy", "prod-gpu-autoscaler-role-policy").inputs["policy"])
    by_sid = {s["Sid"]: s for s in doc["Statement"]}
    assert set(by_sid) == {"Describe", "ResizeOwnedGroups", "ReadNodeGroups"}
    assert all(a.split(":")[1].startswith(("Describe", "Get")) for a in by_sid["Describe"]["Action"])
    resize = by_sid["ResizeOwnedGroups"]
    assert resize["Action"] == ["autoscaling:SetDesiredCapacity", "autoscaling:TerminateInstanceInAutoScalingGroup"]
    assert resize["Condition"] == {"StringEquals": {"aws:ResourceTag/k8s.io/cluster-autoscaler/prod-gpu": "owned"}}
    assert by_sid["ReadNodeGroups"]["Resource"] == "arn:aws:eks:us-east-1:123456789012:nodegroup/prod-gpu/*"


def test_efa_device_plugin_on_efa_nodes(p):
    r = one(p, RELEASE, "prod-gpu-efa-device-plugin-release")
    chart = versions.EFA_DEVICE_PLUGIN
    assert (r.inputs["chart"], r.inputs["version"]) == (chart.archive, chart.version) and "repositoryOpts" not in r.inputs
    assert chart_name_of(r.inputs["chart"], r.inputs["version"]) == "aws-efa-k8s-device-plugin"
    assert r.inputs["values"] == {
        "nodeSelector": {"gpufleet.io/efa": "true"},
        "tolerations": [
            {"key": "gpufleet.io/spot", "operator": "Exists", "effect": "NoSchedule"},
            {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
        ],
    }


def test_ebs_addon_and_default_gp3_class(p):
    addon = one(p, "aws:eks/addon:Addon", "prod-gpu-ebs-addon").inputs
    assert addon["addonName"] == "aws-ebs-csi-driver" and addon["clusterName"] == "prod-gpu"
    assert addon["serviceAccountRoleArn"] == mocked_output(one(p, "aws:iam/role:Role", "prod-gpu-ebs-role"), "arn")
    assert addon["addonVersion"] == "EKS's default for Kubernetes 1.35 at deploy"  # resolved for the cluster version
    assert _trust(p, "prod-gpu-ebs-role")["Condition"]["StringEquals"][f"{HOST}:sub"] == "system:serviceaccount:kube-system:ebs-csi-controller-sa"
    attach = one(p, "aws:iam/rolePolicyAttachment:RolePolicyAttachment", "prod-gpu-ebs-role-AmazonEBSCSIDriverPolicy")
    assert attach.inputs["policyArn"] == "arn:aws:iam::aws:policy/service-role/AmazonEBSCSIDriverPolicy"
    sc = one(p, "kubernetes:storage.k8s.io/v1:StorageClass", "prod-gpu-ebs-sc").inputs
    assert sc["metadata"]["annotations"] == {"storageclass.kubernetes.io/is-default-class": "true"}
    assert sc["provisioner"] == "ebs.csi.aws.com"
    assert sc["parameters"] == {"type": "gp3", "encrypted": "true"}
    assert sc["volumeBindingMode"] == "WaitForFirstConsumer"


def test_fsx_lustre_addon_security_group_and_class(p):
    addon = one(p, "aws:eks/addon:Addon", "prod-gpu-fsx-addon").inputs
    assert addon["addonName"] == "aws-fsx-csi-driver"
    assert _trust(p, "prod-gpu-fsx-role")["Condition"]["StringEquals"][f"{HOST}:sub"] == "system:serviceaccount:kube-system:fsx-csi-controller-sa"
    sg = one(p, "aws:ec2/securityGroup:SecurityGroup", "prod-gpu-fsx-sg").inputs
    ports = {(r["fromPort"], r["toPort"]) for r in sg["ingress"]}
    assert ports == {(988, 988), (1018, 1023)}
    assert all(r["protocol"] == "tcp" for r in sg["ingress"])
    sc = one(p, "kubernetes:storage.k8s.io/v1:StorageClass", "prod-gpu-fsx-sc").inputs
    assert sc["metadata"]["name"] == "fsx-lustre" and sc["provisioner"] == "fsx.csi.aws.com"
    assert sc["parameters"] == {
        "subnetId": mocked_id(one(p, "aws:ec2/subnet:Subnet", "prod-gpu-network-private-us-east-1a")),  # the EFA pool's zone
        "securityGroupIds": mocked_id(one(p, "aws:ec2/securityGroup:SecurityGroup", "prod-gpu-fsx-sg")),
        "deploymentType": "PERSISTENT_2",
        "perUnitStorageThroughput": "500",
    }
    assert sc["reclaimPolicy"] == "Retain" and sc["mountOptions"] == ["flock"]


def test_nodes_admit_lustre_from_the_file_servers(p):
    """FSx for Lustre User Guide, "Lustre client VPC security group rules": the clients' security groups need
    inbound TCP 988 and 1018-1023 from the file systems' group. Every node carries the EKS cluster security
    group, which by default only admits itself, so without these rules servers cannot reach their clients."""
    rules = [r for r in by_type(p, "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule") if r.name.startswith("prod-gpu-fsx-client-")]
    got = {(r.inputs["fromPort"], r.inputs["toPort"]): r.inputs for r in rules}
    assert set(got) == {(988, 988), (1018, 1023)}
    for r in rules:
        assert r.inputs["securityGroupId"] == eks_cluster_security_group(one(p, "aws:eks/cluster:Cluster").name)  # the cluster security group
        assert r.inputs["referencedSecurityGroupId"] == mocked_id(one(p, "aws:ec2/securityGroup:SecurityGroup", "prod-gpu-fsx-sg"))
        assert r.inputs["ipProtocol"] == "tcp"
        assert parent_of(p, r).name == "prod-gpu-fsx"


def test_gpu_operator_skips_driver_and_toolkit_on_eks(p):
    values = one(p, RELEASE, "prod-gpu-gpu-operator-release").inputs["values"]
    assert values["driver"] == {"enabled": False}
    assert values["toolkit"] == {"enabled": False}
    assert values["devicePlugin"] == {"enabled": True}
    keys = {t["key"] for t in values["daemonsets"]["tolerations"]}
    assert keys == {"nvidia.com/gpu", "gpufleet.io/spot"}


def test_addons_wait_for_the_system_pool_not_gpu_pools(p):
    system_ng = one(p, "aws:eks/nodeGroup:NodeGroup", "prod-gpu-pool-system-ng").urn
    gpu_ngs = {r.urn for r in by_type(p, "aws:eks/nodeGroup:NodeGroup") if r.urn != system_ng}
    waiting = [*by_type(p, RELEASE), *by_type(p, "aws:eks/addon:Addon")]
    assert len(waiting) == 6  # incl. the node monitoring agent add-on (gpufleet:observability.nodeHealth)
    for r in waiting:
        assert system_ng in r.dependencies, r.name
        assert not gpu_ngs & set(r.dependencies), r.name  # GPU pools may sit at zero
        if r.type == RELEASE:
            assert "prod-gpu-eks-k8s" in (r.provider or ""), r.name
