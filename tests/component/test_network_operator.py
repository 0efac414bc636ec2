"""Component tests (layer 2): NetworkOperator — chart, NicClusterPolicy, IP pools and networks per RDMA pool."""

import json

import pytest

from gpufleet.components.gpu_stack.network_operator import NetworkOperatorArgs, network, nic_cluster_policy, sriov_config
from gpufleet.base import versions
from gpufleet.base.spec import load_spec
from tests.helpers import by_type, example_config, one, parent_of, planned, stack_file

MELLANOX = "kubernetes:mellanox.com/v1alpha1"


@pytest.fixture(scope="module")
def lab():
    return planned("lab", policies=True)


def test_children_types_names_parents(lab):
    comp = one(lab, "gpufleet:addons:NetworkOperator", "lab-network-operator")
    assert parent_of(lab, comp).name == "lab"
    children = {r.name: r.type for r in lab.resources if r.parent == comp.urn}
    assert children == {
        "lab-network-operator-ns": "kubernetes:core/v1:Namespace",
        # The chart's CRDs, applied before the release from the pinned archive (docs/upgrades.md).
        "lab-network-operator-crds": "kubernetes:yaml/v2:ConfigGroup",
        "lab-network-operator-release": "kubernetes:helm.sh/v3:Release",
        "lab-network-operator-nic-cluster-policy": f"{MELLANOX}:NicClusterPolicy",
        "lab-network-operator-ippool-a100-rdma": "kubernetes:nv-ipam.nvidia.com/v1alpha1:IPPool",
        "lab-network-operator-network-a100-rdma": f"{MELLANOX}:MacvlanNetwork",
    }


def test_release_is_pinned(lab):
    r = one(lab, "kubernetes:helm.sh/v3:Release", "lab-network-operator-release")
    chart = versions.NETWORK_OPERATOR
    assert (r.inputs["chart"], r.inputs["version"], r.inputs["repositoryOpts"]) == (chart.name, chart.version, {"repo": chart.repo})
    assert r.inputs["namespace"] == "nvidia-network-operator"
    assert r.inputs["values"]["nfd"] == {"enabled": False, "deployNodeFeatureRules": False}
    # Multus and the CNI plugins go where k3s's containerd looks for them (docs.k3s.io/networking/multus-ipams).
    assert r.inputs["values"]["operator"] == {
        "cniBinDirectory": "/var/lib/rancher/k3s/data/cni",
        "cniNetworkDirectory": "/var/lib/rancher/k3s/agent/etc/cni/net.d",
    }


def test_nic_cluster_policy_rdma_resource_selectors_and_placement(lab):
    spec = one(lab, f"{MELLANOX}:NicClusterPolicy").inputs["spec"]
    assert one(lab, f"{MELLANOX}:NicClusterPolicy").inputs["metadata"] == {
        "name": "nic-cluster-policy", "annotations": {"pulumi.com/waitFor": "jsonpath={.status.state}=ready"},
    }
    config = json.loads(spec["rdmaSharedDevicePlugin"]["config"])
    assert config == {"configList": [{
        "resourceName": "rdma_a100_rdma", "rdmaHcaMax": 63,
        "selectors": {"vendors": ["15b3"], "deviceIDs": ["101b"], "ifNames": ["ens1f0np0"]},
    }]}
    tag = f"network-operator-{versions.NETWORK_OPERATOR.app_version}"
    for part in (spec["rdmaSharedDevicePlugin"], spec["secondaryNetwork"]["multus"], spec["secondaryNetwork"]["cniPlugins"], spec["nvIpam"]):
        assert part["version"] == tag and part["repository"] == "nvcr.io/nvidia/mellanox"
    term = spec["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]
    assert term == {"matchExpressions": [{"key": "gpufleet.io/rdma", "operator": "In", "values": ["true"]}]}
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in spec["tolerations"]
    assert "sriovDevicePlugin" not in spec


def test_ip_pool_and_macvlan_network(lab):
    pool = one(lab, "kubernetes:nv-ipam.nvidia.com/v1alpha1:IPPool").inputs
    assert pool["metadata"] == {"name": "rdma-a100-rdma", "namespace": "nvidia-network-operator"}
    assert pool["spec"]["subnet"] == "192.168.100.0/24" and pool["spec"]["perNodeBlockSize"] == 16
    sel = pool["spec"]["nodeSelector"]["nodeSelectorTerms"][0]["matchExpressions"]
    assert sel == [{"key": "gpufleet.io/pool", "operator": "In", "values": ["a100-rdma"]}]
    net = one(lab, f"{MELLANOX}:MacvlanNetwork").inputs
    assert net["metadata"] == {"name": "rdma-a100-rdma"}
    assert net["spec"]["master"] == "ens1f0np0" and net["spec"]["networkNamespace"] == "default"
    assert json.loads(net["spec"]["ipam"]) == {"type": "nv-ipam", "poolName": "rdma-a100-rdma"}


def _pools(**rdma_network):
    config = example_config("lab")
    config["gpufleet:nodePools"][2]["rdmaNetwork"].update(rdma_network)
    sf = stack_file(config)
    return [p for p in load_spec(sf.stack, sf.config, sf.secret_keys).node_pools if p.rdma]


def test_host_device_pool_uses_the_sriov_device_plugin():
    pools = _pools(network="host-device")
    policy = nic_cluster_policy(NetworkOperatorArgs(pools))
    assert "rdmaSharedDevicePlugin" not in policy["spec"]
    assert json.loads(policy["spec"]["sriovDevicePlugin"]["config"]) == sriov_config(pools) == {"resourceList": [{
        "resourcePrefix": "nvidia.com", "resourceName": "hostdev_a100_rdma",
        "selectors": {"vendors": ["15b3"], "isRdma": True, "devices": ["101b"], "pfNames": ["ens1f0np0"]},
    }]}
    net = network(pools[0])
    assert net["kind"] == "HostDeviceNetwork"
    assert net["spec"]["resourceName"] == "nvidia.com/hostdev_a100_rdma"


def test_no_rdma_pool_no_network_operator():
    p = planned("dev", policies=True)
    assert by_type(p, "gpufleet:addons:NetworkOperator") == []


def test_ip_pool_and_network_wait_for_what_creates_their_crds(lab):
    """Deploy order (issue 14): the IPPool CRD is applied by the operator when it reconciles the NicClusterPolicy
    (not by the chart), so the pool waits for the policy, which `pulumi up` holds until the operator reports it
    ready; the network waits for its pool (its ipam names it)."""
    release = one(lab, "kubernetes:helm.sh/v3:Release", "lab-network-operator-release")
    policy = one(lab, f"{MELLANOX}:NicClusterPolicy")
    pool = one(lab, "kubernetes:nv-ipam.nvidia.com/v1alpha1:IPPool")
    net = one(lab, f"{MELLANOX}:MacvlanNetwork")
    assert release.urn in policy.dependencies
    assert policy.inputs["metadata"]["annotations"]["pulumi.com/waitFor"] == "jsonpath={.status.state}=ready"
    assert {release.urn, policy.urn} <= set(pool.dependencies)
    assert {release.urn, policy.urn, pool.urn} <= set(net.dependencies)
    assert json.loads(net.inputs["spec"]["ipam"])["poolName"] == pool.inputs["metadata"]["name"]
