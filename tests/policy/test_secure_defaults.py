import pytest

from gpufleet.policies import inputs as I
from tests.policy.fixtures import EKS_CLUSTER_IN, GKE_CLUSTER_IN, K3S_COMMAND_IN, LAUNCH_TEMPLATE_IN, DELETE, findings, messages, res, with_

P = "secure-defaults"


@pytest.mark.parametrize(
    "type_,base,path,value,failed",
    [
        (I.EKS_CLUSTER, EKS_CLUSTER_IN, "version", "1.33", False),
        (I.EKS_CLUSTER, EKS_CLUSTER_IN, "vpcConfig.publicAccessCidrs", ["0.0.0.0/0"], True),
        (I.EKS_CLUSTER, EKS_CLUSTER_IN, "vpcConfig.publicAccessCidrs", DELETE, True),  # AWS default: 0.0.0.0/0
        (I.EKS_CLUSTER, EKS_CLUSTER_IN, "vpcConfig.endpointPublicAccess", False, False),
        (I.EKS_CLUSTER, EKS_CLUSTER_IN, "encryptionConfig", DELETE, True),
        (I.EKS_CLUSTER, EKS_CLUSTER_IN, "encryptionConfig.resources", [], True),
        (I.GKE_CLUSTER, GKE_CLUSTER_IN, "masterAuthorizedNetworksConfig", DELETE, True),
        (I.GKE_CLUSTER, GKE_CLUSTER_IN, "masterAuthorizedNetworksConfig.cidrBlocks", [{"cidrBlock": "0.0.0.0/0"}], True),
        (I.GKE_CLUSTER, GKE_CLUSTER_IN, "privateClusterConfig", {"enablePrivateEndpoint": True}, False),
        (I.EC2_LAUNCH_TEMPLATE, LAUNCH_TEMPLATE_IN, "blockDeviceMappings.0.ebs.encrypted", "false", True),
        (I.EC2_LAUNCH_TEMPLATE, LAUNCH_TEMPLATE_IN, "metadataOptions.httpTokens", "optional", True),
        (I.EC2_LAUNCH_TEMPLATE, LAUNCH_TEMPLATE_IN, "metadataOptions", DELETE, True),
        (I.REMOTE_COMMAND, K3S_COMMAND_IN, "create", "curl -sfL https://get.k3s.io | K3S_TOKEN=abc sh -", True),
        (I.REMOTE_COMMAND, K3S_COMMAND_IN, "create", "k3s agent --token s3cr3t --server https://x:6443", True),
        (I.REMOTE_COMMAND, K3S_COMMAND_IN, "environment", {"K3S_TOKEN": "abc"}, True),
        (I.REMOTE_COMMAND, K3S_COMMAND_IN, "create", "echo '-----BEGIN OPENSSH PRIVATE KEY-----' > key", True),
    ],
)
def test_one_field(type_, base, path, value, failed):
    assert findings([res(type_, "r", base)], policy=P) == set()  # the valid base passes
    got = findings([res(type_, "r", with_(base, path, value))], policy=P)
    assert got == ({(P, "r", "mandatory")} if failed else set())


def test_eks_public_endpoint_message():
    (message,) = messages([res(I.EKS_CLUSTER, "r", with_(EKS_CLUSTER_IN, "vpcConfig.publicAccessCidrs", ["0.0.0.0/0"]))], P)
    assert message.endswith("public API endpoint open to 0.0.0.0/0: set vpcConfig.publicAccessCidrs to your networks, or endpointPublicAccess=false")


def test_gpufleet_k3s_plan_passes(dev_plan):
    assert [v for v in dev_plan.violations if v.policy == P] == []


def test_command_environment_findings_come_in_name_order():
    """A map's order does not survive the wire (the engine's Struct is a hash map): the findings on a
    command's environment are listed by variable name, whatever order the program wrote them in."""
    env = {"ZED": "K3S_TOKEN=abc", "ALPHA": "K3S_TOKEN=def", "K3S_TOKEN": "ghi"}
    found = messages([res(I.REMOTE_COMMAND, "r", with_(K3S_COMMAND_IN, "environment", env))], P)
    assert [m.splitlines()[-1].split(" contains ")[0] for m in found] == ["environment.ALPHA", "environment.K3S_TOKEN", "environment.ZED"]
