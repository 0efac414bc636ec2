"""Component tests (layer 2): the AKS platform under Pulumi's mocks.

Two plans, one each per module: the aks-train example (private cluster with Entra ID and workload identity, an ND H100
v5 InfiniBand pool, a Spot A100 pool, Azure Files; the GPU Operator installs the driver) and a variant where AKS
installs the driver (gpuDriver: aks) on a Spot NCads H100 pool, Premium tier with long-term support, Blob storage and
a policy exemption.
"""

import base64
import json

import pytest
import yaml

from gpufleet.base import labels as L
from gpufleet.base import versions
from gpufleet.app.plan.mocks import AZURE_CALLS, PLACEHOLDER_CA
from gpufleet.components.aks.cluster import cluster_ca, kubeconfig
from gpufleet.testing import mocked_id
from tests.helpers import by_type, example_config, one, parent_of, plan_config, planned

CLUSTER = "azure-native:containerservice:ManagedCluster"
POOL = "azure-native:containerservice:AgentPool"
SUBNET = "azure-native:network:Subnet"
RELEASE = "kubernetes:helm.sh/v3:Release"
SC = "kubernetes:storage.k8s.io/v1:StorageClass"
NIC_POLICY = "kubernetes:mellanox.com/v1alpha1:NicClusterPolicy"


@pytest.fixture(scope="module")
def train():
    return planned("aks-train", policies=True)


@pytest.fixture(scope="module")
def aks_driver():
    c = example_config("aks-train")
    c["gpufleet:cluster"].update(name="aksdrv", kubernetesVersion="1.33")
    c["gpufleet:cluster"]["aks"].update(gpuDriver="aks", tier="Premium", supportPlan="AKSLongTermSupport",
                                        storage={"blob": True, "files": True})
    c["gpufleet:nodePools"] = [{"name": "h100nvl", "vmSize": "Standard_NC40ads_H100_v5", "capacity": "spot", "maxNodes": 2,
                                "minNodes": 1, "aks": {"spotMaxPrice": 4.5, "zones": ["2"]},
                                "exemptions": {"gpu-pool-scale-to-zero": "always-on inference endpoint"}}]
    c["gpufleet:gpuOperator"] = {"driver": {"source": "preinstalled"}}
    return plan_config(c, stack="aksdrv")


def test_example_plans_clean(train):
    assert train.violations == []


def test_private_cluster_with_entra_id_and_workload_identity(train):
    cluster = one(train, CLUSTER)
    i = cluster.inputs
    assert (cluster.name, parent_of(train, cluster).name) == ("aks-train-aks-cluster", "aks-train-aks")
    assert (i["resourceName"], i["location"], i["kubernetesVersion"], i["sku"], i["supportPlan"]) == (
        "aks-train", "eastus", "1.35", {"name": "Base", "tier": "Standard"}, "KubernetesOfficial")
    assert i["apiServerAccessProfile"] == {"enablePrivateCluster": True} and i["disableLocalAccounts"] is True
    assert i["aadProfile"] == {"managed": True, "enableAzureRBAC": True,
                               "adminGroupObjectIDs": ["00000000-0000-0000-0000-000000000000"]}
    assert (i["oidcIssuerProfile"], i["securityProfile"]) == ({"enabled": True}, {"workloadIdentity": {"enabled": True}})
    assert (i["enableRBAC"], i["networkProfile"]["networkPluginMode"]) == (True, "overlay")
    assert i["storageProfile"] == {"diskCSIDriver": {"enabled": True}, "fileCSIDriver": {"enabled": True},
                                   "blobCSIDriver": {"enabled": False}, "snapshotController": {"enabled": True}}
    assert i["autoUpgradeProfile"] == {"upgradeChannel": "patch", "nodeOSUpgradeChannel": "NodeImage"}
    (system,) = i["agentPoolProfiles"]
    assert (system["name"], system["mode"], system["nodeTaints"], system["enableAutoScaling"], system["minCount"],
            system["availabilityZones"]) == ("system", "System", ["CriticalAddonsOnly=true:NoSchedule"], True, 1,
                                             ["1", "2", "3"])
    # The cluster holds every Kubernetes object: protected; the autoscaler owns the system pool's size.
    assert cluster.protect and cluster.ignore_changes == ["agentPoolProfiles[0].count"]
    # The node subnet is in the created network, and the cluster's identity may manage it (Network Contributor's
    # role definition in the subnet's subscription).
    subnet = one(train, SUBNET)
    assert system["vnetSubnetID"] == mocked_id(subnet)
    role = one(train, "azure-native:authorization:RoleAssignment")
    assert (role.inputs["scope"], role.inputs["roleDefinitionId"], role.inputs["principalType"]) == (
        mocked_id(subnet), "/subscriptions/00000000-0000-4000-8000-000000000000/providers/Microsoft.Authorization/"
        "roleDefinitions/4d97b98b-1d4f-4787-a291-c67834d212e7", "ServicePrincipal")


def test_kubeconfig_uses_kubelogin_against_the_private_endpoint():
    doc = yaml.safe_load(kubeconfig("c", "https://c-1.privatelink.eastus.azmk8s.io:443", "Q0E="))
    assert doc["clusters"][0]["cluster"]["server"] == "https://c-1.privatelink.eastus.azmk8s.io:443"
    user = doc["users"][0]["user"]["exec"]
    assert (user["command"], user["args"]) == (
        "kubelogin", ["get-token", "--login", "azurecli", "--server-id", "6dae42f8-4368-4678-94ff-3960e28e3630"])


def test_the_cluster_ca_comes_from_the_user_kubeconfig_aks_hands_out():
    """ManagedCluster has no CA output: the kubeconfig's CA is read from listClusterUserCredential's base64 kubeconfig,
    which the plan's mocks answer with the stand-in CA."""
    answer = AZURE_CALLS["azure-native:containerservice:listManagedClusterUserCredentials"]({"resourceName": "c"})
    assert cluster_ca(answer["kubeconfigs"][0]["value"]) == PLACEHOLDER_CA
    doc = {"clusters": [{"name": "c", "cluster": {"certificate-authority-data": "Q0E=", "server": "https://x"}}]}
    assert cluster_ca(base64.b64encode(yaml.safe_dump(doc).encode()).decode()) == "Q0E="
    assert cluster_ca("") == ""


def test_gpu_pools_scale_to_zero_with_labels_taints_and_one_driver(train):
    pools = {r.inputs["agentPoolName"]: r for r in by_type(train, POOL)}
    h100, spot = pools["h100ib"], pools["a100spot"]
    assert (h100.name, parent_of(train, h100).name) == ("aks-train-pool-h100ib-pool", "aks-train-pool-h100ib")
    for p in (h100, spot):
        assert (p.inputs["enableAutoScaling"], p.inputs["minCount"], p.inputs["mode"]) == (True, 0, "User")
        # the GPU Operator installs the driver (cluster.aks.gpuDriver default)
        assert p.inputs["gpuProfile"] == {"driver": "None"}
        assert (p.inputs["resourceName"], p.inputs["resourceGroupName"]) == ("aks-train", "aks-train-rg")
        assert p.ignore_changes == ["count"]
        assert "nvidia.com/gpu=true:NoSchedule" in p.inputs["nodeTaints"]
    assert (h100.inputs["vmSize"], h100.inputs["scaleSetPriority"], h100.inputs["availabilityZones"]) == (
        "Standard_ND96isr_H100_v5", "Regular", ["1"])
    assert h100.inputs["nodeLabels"][L.RDMA_NODE_LABEL] == "true"
    assert (spot.inputs["scaleSetPriority"], spot.inputs["scaleSetEvictionPolicy"], spot.inputs["spotMaxPrice"]) == (
        "Spot", "Delete", -1)
    assert spot.inputs["nodeTaints"] == ["nvidia.com/gpu=true:NoSchedule", "gpufleet.io/spot=true:NoSchedule",
                                         "kubernetes.azure.com/scalesetpriority=spot:NoSchedule"]
    wanted = {L.POOL_LABEL: "a100spot", L.CAPACITY_TYPE_LABEL: "spot", L.GPU_MODEL_LABEL: "A100-80GB", L.AKS_SPOT_KEY: "spot"}
    assert {k: spot.inputs["nodeLabels"].get(k) for k in wanted} == wanted
    assert "upgradeSettings" not in spot.inputs  # no surge nodes for Spot pools


def test_gpu_operator_installs_driver_with_gpudirect_over_the_doca_driver(train):
    op = next(r for r in by_type(train, RELEASE) if "gpu-operator" in r.inputs["chart"])
    values = op.inputs["values"]
    assert values["driver"]["enabled"] is True and values["toolkit"] == {"enabled": True}
    # The Network Operator's DOCA driver container provides MOFED on AKS (no host MOFED).
    assert values["driver"]["rdma"] == {"enabled": True, "useHostMofed": False}
    tolerated = {(t["key"], t["effect"]) for t in values["daemonsets"]["tolerations"]}
    assert {("nvidia.com/gpu", "NoSchedule"), ("kubernetes.azure.com/scalesetpriority", "NoSchedule")} <= tolerated


def test_network_operator_drives_infiniband_without_a_secondary_network(train):
    policy = one(train, NIC_POLICY)
    spec = policy.inputs["spec"]
    assert spec["ofedDriver"] == {"image": "doca-driver", "repository": "nvcr.io/nvidia/mellanox",
                                  "version": versions.NETWORK_OPERATOR_DOCA_DRIVER}
    assert "secondaryNetwork" not in spec and "nvIpam" not in spec
    config = json.loads(spec["rdmaSharedDevicePlugin"]["config"])
    assert config == {"configList": [{"resourceName": "rdma_h100ib", "rdmaHcaMax": 63,
                                      "selectors": {"vendors": ["15b3"], "linkTypes": ["infiniband"]}}]}
    assert by_type(train, "kubernetes:nv-ipam.nvidia.com/v1alpha1:IPPool") == []
    assert parent_of(train, policy).name == "aks-train-network-operator"


def test_storage_classes_on_the_built_in_csi_drivers(train):
    classes = {r.inputs["metadata"]["name"]: r.inputs for r in by_type(train, SC)}
    assert classes["gpufleet-rwo"]["provisioner"] == "disk.csi.azure.com"
    assert classes["gpufleet-rwo"]["parameters"] == {"skuName": "Premium_LRS"}
    assert (classes["gpufleet-rwx"]["provisioner"], classes["gpufleet-rwx"]["reclaimPolicy"]) == ("file.csi.azure.com", "Retain")
    assert classes["gpufleet-rwx"]["parameters"] == {"skuName": "Premium_LRS", "protocol": "nfs"}


def test_cost_has_the_tier_fee_and_gpu_vm_prices_from_the_snapshot(train):
    items = {i.kind: i for i in train.cost.items if i.kind == "control-plane"}
    assert items["control-plane"].unit_hourly == pytest.approx(0.10)
    gpu = [i for i in train.cost.items if i.kind == "gpu-nodes"]
    assert len(gpu) == 2 and all(i.unit_hourly is not None and i.origin == "snapshot" for i in gpu)
    assert train.cost.at_least  # the system pool, disks and the load balancer are not priced


def test_aks_installs_the_driver_and_the_operator_leaves_it_and_the_toolkit_alone(aks_driver):
    pool = one(aks_driver, POOL)
    assert pool.inputs["gpuProfile"] == {"driver": "Install"}
    assert (pool.inputs["scaleSetPriority"], pool.inputs["spotMaxPrice"], pool.inputs["availabilityZones"]) == (
        "Spot", 4.5, ["2"])
    # The exemption travels as a node label (Azure tag names may not hold '/'); the policy pack honours it.
    assert pool.inputs["nodeLabels"][L.exempt_key("gpu-pool-scale-to-zero")] == "always-on-inference-endpoint"
    op = next(r for r in by_type(aks_driver, RELEASE) if "gpu-operator" in r.inputs["chart"])
    assert op.inputs["values"]["driver"] == {"enabled": False}
    assert op.inputs["values"]["toolkit"] == {"enabled": False}
    cluster = one(aks_driver, CLUSTER)
    assert (cluster.inputs["sku"]["tier"], cluster.inputs["supportPlan"], cluster.inputs["kubernetesVersion"]) == (
        "Premium", "AKSLongTermSupport", "1.33")
    assert cluster.inputs["storageProfile"]["blobCSIDriver"] == {"enabled": True}
    assert {r.inputs["metadata"]["name"] for r in by_type(aks_driver, SC)} == {"gpufleet-rwo", "gpufleet-rwx", "gpufleet-blob"}
    assert by_type(aks_driver, NIC_POLICY) == []
    assert [v.policy for v in aks_driver.violations if v.level == "mandatory"] == []
    fee = next(i for i in aks_driver.cost.items if i.kind == "control-plane")
    assert fee.unit_hourly == pytest.approx(0.60)


def test_mocks_give_arm_ids_the_pools_refer_to(train):
    """Cloud-shaped ids (gpufleet/app/plan/mocks.py): the agent pools sit below the cluster's ARM id, the cluster
    names its resource group; the ids have ARM's shape."""
    import re

    cluster = one(train, CLUSTER)
    cluster_id = mocked_id(cluster)
    assert re.fullmatch(r"/subscriptions/[0-9a-f-]{36}/resourceGroups/aks-train-rg/providers/Microsoft\.ContainerService/"
                        r"managedClusters/aks-train", cluster_id)
    assert {mocked_id(p) for p in by_type(train, POOL)} == {f"{cluster_id}/agentPools/h100ib", f"{cluster_id}/agentPools/a100spot"}
    assert cluster.inputs["resourceGroupName"] == "aks-train-rg"
    assert mocked_id(one(train, SUBNET)).endswith("/virtualNetworks/aks-train-vnet/subnets/nodes")
