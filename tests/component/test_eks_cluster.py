"""Component tests (layer 2): EksNetwork and EksCluster of the EKS example stack under mocks."""

import json

import pytest
import yaml

from gpufleet.app.plan.mocks import PLAN_OIDC_ISSUER
from tests.eks_plan import prod_eks
from gpufleet.testing import mocked_id
from tests.helpers import by_type, example_config, one, parent_of, plan_config

CLUSTER = "aws:eks/cluster:Cluster"


@pytest.fixture(scope="module")
def p():
    return prod_eks()[0]


def test_components_and_parents(p):
    root = one(p, "gpufleet:index:GpuCluster", "prod-gpu")
    for type_, name in [
        ("gpufleet:eks:EksNetwork", "prod-gpu-network"),
        ("gpufleet:eks:EksCluster", "prod-gpu-eks"),
        ("gpufleet:eks:EksNodeGroup", "prod-gpu-pool-system"),
        ("gpufleet:eks:EksNodeGroup", "prod-gpu-pool-h100-train"),
        ("gpufleet:eks:EksNodeGroup", "prod-gpu-pool-l4-infer"),
        ("gpufleet:eks:EksEfaFabric", "prod-gpu-pool-h100-train-efa"),
        ("gpufleet:eks:ClusterAutoscaler", "prod-gpu-autoscaler"),
        ("gpufleet:eks:EfaDevicePlugin", "prod-gpu-efa-device-plugin"),
        ("gpufleet:eks:EbsStorage", "prod-gpu-ebs"),
        ("gpufleet:eks:FsxLustreStorage", "prod-gpu-fsx"),
    ]:
        assert one(p, type_, name).parent == root.urn, name
    cluster = one(p, CLUSTER)
    assert cluster.name == "prod-gpu-eks-cluster"
    assert parent_of(p, cluster).name == "prod-gpu-eks"


def test_new_vpc_subnets_per_zone_with_tags_and_nat(p):
    net = one(p, "gpufleet:eks:EksNetwork")
    vpc = one(p, "aws:ec2/vpc:Vpc")
    assert vpc.parent == net.urn and vpc.inputs["cidrBlock"] == "10.0.0.0/16"
    assert vpc.inputs["enableDnsHostnames"] is True
    subnets = {r.name: r.inputs for r in by_type(p, "aws:ec2/subnet:Subnet")}
    for zone in ("us-east-1a", "us-east-1b", "us-east-1c"):
        private = subnets[f"prod-gpu-network-private-{zone}"]
        public = subnets[f"prod-gpu-network-public-{zone}"]
        assert private["availabilityZone"] == public["availabilityZone"] == zone
        assert private["tags"]["kubernetes.io/role/internal-elb"] == "1"
        assert public["tags"]["kubernetes.io/role/elb"] == "1"
        assert private["tags"]["kubernetes.io/cluster/prod-gpu"] == "shared"
    assert subnets["prod-gpu-network-private-us-east-1a"]["cidrBlock"] == "10.0.0.0/19"
    assert subnets["prod-gpu-network-public-us-east-1a"]["cidrBlock"] == "10.0.224.0/22"
    assert len(by_type(p, "aws:ec2/natGateway:NatGateway")) == 3  # one per zone by default
    routes = {r.name: r.inputs["routes"] for r in by_type(p, "aws:ec2/routeTable:RouteTable")}
    assert routes["prod-gpu-network-private-us-east-1b"][0]["natGatewayId"] == mocked_id(one(p, "aws:ec2/natGateway:NatGateway", "prod-gpu-network-nat-us-east-1b"))


def test_control_plane_version_kms_logs_and_endpoint(p):
    c = one(p, CLUSTER).inputs
    assert c["name"] == "prod-gpu" and c["version"] == "1.35"
    key = one(p, "aws:kms/key:Key")
    assert key.inputs["enableKeyRotation"] is True
    assert c["encryptionConfig"] == {
        "resources": ["secrets"],
        "provider": {"keyArn": f"arn:aws:kms:us-east-1:123456789012:key/{mocked_id(key)}"},  # a key id is a UUID
    }
    assert c["accessConfig"] == {"authenticationMode": "API", "bootstrapClusterCreatorAdminPermissions": True}
    assert c["vpcConfig"]["endpointPrivateAccess"] is True
    assert c["vpcConfig"]["endpointPublicAccess"] is True
    assert c["vpcConfig"]["publicAccessCidrs"] == ["203.0.113.0/24"]
    assert len(c["vpcConfig"]["subnetIds"]) == 3
    assert c["enabledClusterLogTypes"] == ["api", "audit", "authenticator"]
    logs = one(p, "aws:cloudwatch/logGroup:LogGroup").inputs
    assert logs["name"] == "/aws/eks/prod-gpu/cluster" and logs["retentionInDays"] == 90


def test_endpoint_private_by_default_and_existing_kms_key():
    cfg = example_config("prod-eks")
    eks = cfg["gpufleet:cluster"]["eks"]
    del eks["endpoint"]
    eks["kmsKeyArn"] = "arn:aws:kms:us-east-1:123456789012:key/1111-2222"
    eks["network"] = {
        "vpcId": "vpc-0abc12345678",
        "subnets": [
            {"id": "subnet-0aaa1111", "availabilityZone": "us-east-1a"},
            {"id": "subnet-0bbb2222", "availabilityZone": "us-east-1b"},
        ],
    }
    del eks["storage"]
    p = plan_config(cfg, policies=False)
    c = one(p, CLUSTER).inputs
    assert c["vpcConfig"]["endpointPublicAccess"] is False
    assert "publicAccessCidrs" not in c["vpcConfig"]
    assert c["vpcConfig"]["subnetIds"] == ["subnet-0aaa1111", "subnet-0bbb2222"]
    assert c["encryptionConfig"]["provider"]["keyArn"] == "arn:aws:kms:us-east-1:123456789012:key/1111-2222"
    assert not by_type(p, "aws:kms/key:Key") and not by_type(p, "aws:ec2/vpc:Vpc")
    h100 = one(p, "aws:eks/nodeGroup:NodeGroup", "prod-gpu-pool-h100-train-ng").inputs
    assert h100["subnetIds"] == ["subnet-0aaa1111"]  # EFA pool: its zone only


def test_access_entries_and_policies(p):
    entries = {r.inputs["principalArn"]: r for r in by_type(p, "aws:eks/accessEntry:AccessEntry")}
    assert set(entries) == {"arn:aws:iam::123456789012:role/platform-admins", "arn:aws:iam::123456789012:role/ml-engineers"}
    assert all(r.inputs["type"] == "STANDARD" and r.inputs["clusterName"] == "prod-gpu" for r in entries.values())
    policies = {r.inputs["principalArn"]: r.inputs for r in by_type(p, "aws:eks/accessPolicyAssociation:AccessPolicyAssociation")}
    assert policies["arn:aws:iam::123456789012:role/platform-admins"]["policyArn"] == "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"
    assert policies["arn:aws:iam::123456789012:role/ml-engineers"]["policyArn"] == "arn:aws:eks::aws:cluster-access-policy/AmazonEKSViewPolicy"
    assert all(v["accessScope"] == {"type": "cluster"} for v in policies.values())
    assert not [r for r in p.resources if "aws-auth" in json.dumps(r.inputs)]


def test_kubernetes_provider_waits_for_access_policies(p):
    """An access entry without its policy association grants no Kubernetes permissions; when the identity
    running `pulumi up` gets in through an entry (bootstrapCreatorAdmin: false), every add-on must wait for
    the association, not only the entry."""
    provider = one(p, "pulumi:providers:kubernetes")
    associations = by_type(p, "aws:eks/accessPolicyAssociation:AccessPolicyAssociation")
    entries = by_type(p, "aws:eks/accessEntry:AccessEntry")
    assert len(associations) == len(entries) == 2
    for r in (*associations, *entries):
        assert r.urn in provider.dependencies, r.name


def test_oidc_provider_and_roles(p):
    oidc = one(p, "aws:iam/openIdConnectProvider:OpenIdConnectProvider")
    assert oidc.inputs["url"] == PLAN_OIDC_ISSUER and oidc.inputs["clientIdLists"] == ["sts.amazonaws.com"]
    role = one(p, "aws:iam/role:Role", "prod-gpu-eks-role")
    assert json.loads(role.inputs["assumeRolePolicy"])["Statement"][0]["Principal"] == {"Service": "eks.amazonaws.com"}
    node_policies = {r.inputs["policyArn"] for r in by_type(p, "aws:iam/rolePolicyAttachment:RolePolicyAttachment") if r.name.startswith("prod-gpu-eks-node-role")}
    assert node_policies == {
        "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
        "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryPullOnly",
        "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy",
    }


def test_kubeconfig_is_secret_and_uses_get_token(p):
    provider = one(p, "pulumi:providers:kubernetes")
    assert provider.inputs["kubeconfig"] == "[secret]"
    assert parent_of(p, provider).name == "prod-gpu-eks"
    cfg = yaml.safe_load(provider.revealed["kubeconfig"])
    assert cfg["clusters"][0]["cluster"]["server"].startswith("https://")
    assert cfg["clusters"][0]["cluster"]["certificate-authority-data"]
    exec_ = cfg["users"][0]["user"]["exec"]
    assert exec_["command"] == "aws"
    assert exec_["args"] == ["eks", "get-token", "--cluster-name", "prod-gpu", "--region", "us-east-1", "--output", "json"]
    assert "token" not in cfg["users"][0]["user"]
    # Every Kubernetes object goes through this provider.
    for r in p.resources:
        if r.type.startswith("kubernetes:") and r.custom and r.type != "pulumi:providers:kubernetes":
            assert r.provider and "prod-gpu-eks-k8s" in r.provider, r.name
