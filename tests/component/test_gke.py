"""Component tests (layer 2) and Kubernetes-object checks (layer 3): the GKE platform under Pulumi's mocks.

Three plans, one each per module: the prod-gke example (TCPX H100 pool, time-shared spot L4 pool, Filestore),
an RDMA/MIG variant and a GPU Operator variant.
"""

import copy

import pytest
import yaml

from gpufleet.base import catalog, versions
from gpufleet.components.gpu_stack.operator import DRIVER_UPGRADE_POLICY
from tests.helm_values import missing_paths
from gpufleet.app.plan.mocks import autoname
from tests.helpers import by_type, example_config, one, parent_of, plan_config, planned
from tests.k8s_validate import validate_strict

CLUSTER = "gcp:container/cluster:Cluster"
NODE_POOL = "gcp:container/nodePool:NodePool"
NETWORK = "gcp:compute/network:Network"
SUBNET = "gcp:compute/subnetwork:Subnetwork"
SC = "kubernetes:storage.k8s.io/v1:StorageClass"
RELEASE = "kubernetes:helm.sh/v3:Release"


@pytest.fixture(scope="module")
def prod():
    return planned("prod-gke", policies=True)


@pytest.fixture(scope="module")
def variant():
    """Zonal cluster with a private endpoint, an RDMA (A3 Ultra) pool, a MIG + time-shared A100 pool, an MPS
    T4 pool with a specific reservation, existing network, GCS FUSE."""
    config = example_config("prod-gke")
    config["gpufleet:cluster"]["name"] = "variant"
    gke = config["gpufleet:cluster"]["gke"]
    gke.update(zone="us-central1-b", privateEndpoint=True, workloadIdentity=True,
               storage={"gcsFuse": True, "defaultDiskType": "hyperdisk-balanced"},
               systemPool={"machineType": "c3-standard-4"},  # attaches Hyperdisk (issue 14: e2 cannot)
               network={"existing": {"network": "shared-vpc", "subnetwork": "gke-subnet",
                                     "podsRangeName": "gke-pods", "servicesRangeName": "gke-svc"}})
    config["gpufleet:nodePools"] = [
        {"name": "h200", "machineType": "a3-ultragpu-8g", "rdma": True, "maxNodes": 2, "gke": {"zones": ["us-central1-b"]}},
        # A2 High (A100 40GB): A2 Ultra is not offered in us-central1-b (gpufleet/base/catalog/gcp_zones.yaml).
        {"name": "a100-mig", "machineType": "a2-highgpu-1g", "maxNodes": 2,
         "gke": {"gpuPartitionSize": "1g.5gb", "gpuSharing": {"strategy": "time-sharing", "maxSharedClientsPerGpu": 2}}},
        {"name": "t4-mps", "machineType": "n1-standard-8", "acceleratorCount": 2, "maxNodes": 2,
         "gke": {"gpuSharing": {"strategy": "mps", "maxSharedClientsPerGpu": 4}, "locationPolicy": "BALANCED",
                 "reservation": {"type": "specific", "name": "t4-res"}}},
    ]
    return plan_config(config, stack="variant")


@pytest.fixture(scope="module")
def operator():
    config = example_config("prod-gke")
    config["gpufleet:cluster"]["name"] = "op"
    config["gpufleet:cluster"]["gke"]["gpuStack"] = "operator"
    del config["gpufleet:nodePools"][0]["gke"]["gpuDriverVersion"]
    del config["gpufleet:nodePools"][1]["gke"]["gpuDriverVersion"]  # l4-infer runs LATEST (issue 49)
    del config["gpufleet:nodePools"][0]["rdma"]  # GPUDirect's gVNIC needs COS nodes; the operator stack runs Ubuntu
    config["gpufleet:gpuOperator"] = {"driver": {"source": "operator"}}
    return plan_config(config, stack="op")


def test_children_types_names_and_parents(prod):
    root = one(prod, "gpufleet:index:GpuCluster", "prod-gke")
    for type_, name in [
        ("gpufleet:gke:GkeNetwork", "prod-gke-network"),
        ("gpufleet:gke:GkeCluster", "prod-gke-gke"),
        ("gpufleet:gke:GkeNodePool", "prod-gke-pool-h100-train"),
        ("gpufleet:gke:GkeNodePool", "prod-gke-pool-l4-infer"),
        ("gpufleet:gke:GkeGpuDirectNetwork", "prod-gke-pool-h100-train-gpudirect"),
        ("gpufleet:gke:GkeStorage", "prod-gke-storage"),
    ]:
        assert parent_of(prod, one(prod, type_, name)).urn == root.urn, name
    network = one(prod, "gpufleet:gke:GkeNetwork")
    for type_, name in [(NETWORK, "prod-gke-network-vpc"), (SUBNET, "prod-gke-network-subnet"),
                        ("gcp:compute/router:Router", "prod-gke-network-router"),
                        ("gcp:compute/routerNat:RouterNat", "prod-gke-network-nat")]:
        assert one(prod, type_, name).parent == network.urn
    control = one(prod, "gpufleet:gke:GkeCluster")
    for type_, name in [(CLUSTER, "prod-gke-gke-cluster"), (NODE_POOL, "prod-gke-gke-system-pool"),
                        ("pulumi:providers:kubernetes", "prod-gke-gke-k8s")]:
        assert one(prod, type_, name).parent == control.urn
    assert one(prod, NODE_POOL, "prod-gke-pool-l4-infer-pool").parent == one(prod, "gpufleet:gke:GkeNodePool", "prod-gke-pool-l4-infer").urn
    assert not any(r.type.startswith("aws:") or r.type.startswith("command:") for r in prod.resources)


def test_network_subnet_ranges_and_nat(prod):
    subnet = one(prod, SUBNET, "prod-gke-network-subnet").inputs
    assert subnet["ipCidrRange"] == "10.0.0.0/20" and subnet["privateIpGoogleAccess"] is True
    assert subnet["secondaryIpRanges"] == [
        {"rangeName": "pods", "ipCidrRange": "10.16.0.0/14"}, {"rangeName": "services", "ipCidrRange": "10.20.0.0/20"}]
    assert one(prod, NETWORK, "prod-gke-network-vpc").inputs["autoCreateSubnetworks"] is False
    nat = one(prod, "gcp:compute/routerNat:RouterNat").inputs
    assert nat["sourceSubnetworkIpRangesToNat"] == "ALL_SUBNETWORKS_ALL_IP_RANGES" and nat["router"] == autoname("gcp:compute/router:Router", "prod-gke-network-router")  # auto-named


def test_cluster_control_plane(prod):
    c = one(prod, CLUSTER).inputs
    assert c["name"] == "prod-gke" and c["location"] == "us-central1"  # regional
    assert c["removeDefaultNodePool"] is True
    assert c["datapathProvider"] == "ADVANCED_DATAPATH"
    assert c["enableMultiNetworking"] is True  # the TCPX pool attaches extra VPCs
    assert c["releaseChannel"] == {"channel": "REGULAR"} and c["minMasterVersion"] == "1.35"
    assert c["privateClusterConfig"] == {"enablePrivateNodes": True, "enablePrivateEndpoint": False, "masterIpv4CidrBlock": "172.16.0.0/28"}
    assert c["masterAuthorizedNetworksConfig"] == {"cidrBlocks": [{"cidrBlock": "203.0.113.0/24", "displayName": "office"}]}
    assert c["workloadIdentityConfig"] == {"workloadPool": "my-gpu-project.svc.id.goog"}
    assert c["maintenancePolicy"] == {"dailyMaintenanceWindow": {"startTime": "03:00"}}
    assert c["ipAllocationPolicy"] == {"clusterSecondaryRangeName": "pods", "servicesSecondaryRangeName": "services"}
    assert c["network"] == f"projects/my-gpu-project/global/networks/{autoname(NETWORK, 'prod-gke-network-vpc')}"
    assert c["addonsConfig"] == {
        "gcePersistentDiskCsiDriverConfig": {"enabled": True},
        "gcpFilestoreCsiDriverConfig": {"enabled": True},
        "gcsFuseCsiDriverConfig": {"enabled": False},
    }
    assert c["deletionProtection"] is True


def test_system_pool(prod):
    s = one(prod, NODE_POOL, "prod-gke-gke-system-pool").inputs
    assert s["name"] == "system" and s["cluster"] == "projects/my-gpu-project/locations/us-central1/clusters/prod-gke"
    assert s["autoscaling"] == {"totalMinNodeCount": 1.0, "totalMaxNodeCount": 3.0, "locationPolicy": "BALANCED"}
    assert "guestAccelerators" not in s["nodeConfig"] and "taints" not in s["nodeConfig"]


def test_gpu_pool_autoscaling_from_zero_and_location_policy(prod):
    for name in ("h100-train", "l4-infer"):
        a = one(prod, NODE_POOL, f"prod-gke-pool-{name}-pool").inputs["autoscaling"]
        assert a["totalMinNodeCount"] == 0.0 and a["locationPolicy"] == "ANY", name
        assert "nodeCount" not in one(prod, NODE_POOL, f"prod-gke-pool-{name}-pool").inputs  # the autoscaler owns it


def test_guest_accelerator_from_the_catalog(prod):
    h100 = one(prod, NODE_POOL, "prod-gke-pool-h100-train-pool").inputs["nodeConfig"]
    assert h100["machineType"] == "a3-highgpu-8g" and h100["spot"] is False
    assert h100["guestAccelerators"] == [
        {"type": "nvidia-h100-80gb", "count": 8.0, "gpuDriverInstallationConfig": {"gpuDriverVersion": "LATEST"}}]
    assert h100["imageType"] == "COS_CONTAINERD"


def test_spot_sharing_labels_and_taints(prod):
    l4 = one(prod, NODE_POOL, "prod-gke-pool-l4-infer-pool").inputs["nodeConfig"]
    assert l4["spot"] is True
    assert l4["guestAccelerators"] == [{
        "type": "nvidia-l4", "count": 1.0, "gpuDriverInstallationConfig": {"gpuDriverVersion": "LATEST"},
        "gpuSharingConfig": {"gpuSharingStrategy": "TIME_SHARING", "maxSharedClientsPerGpu": 4.0}}]
    assert l4["labels"] == {"gpufleet.io/pool": "l4-infer", "gpufleet.io/gpu": "true",
                            "gpufleet.io/capacity-type": "spot", "gpufleet.io/gpu-model": "L4"}
    # GKE's own GPU taint value, so the node does not get two nvidia.com/gpu taints.
    assert l4["taints"] == [{"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"},
                            {"key": "gpufleet.io/spot", "value": "true", "effect": "NO_SCHEDULE"}]
    assert l4["reservationAffinity"] == {"consumeReservationType": "NO_RESERVATION"}
    assert l4["workloadMetadataConfig"] == {"mode": "GKE_METADATA"}


def test_tcpx_additional_networks(prod):
    direct = one(prod, "gpufleet:gke:GkeGpuDirectNetwork")
    nets = [r for r in by_type(prod, NETWORK) if r.parent == direct.urn]
    subs = [r for r in by_type(prod, SUBNET) if r.parent == direct.urn]
    assert len(nets) == 4 and len(subs) == 4
    assert all(n.inputs["mtu"] == 8244.0 and "networkProfile" not in n.inputs for n in nets)
    # /20 each (default gpuDirectSubnetPrefix, cluster-toolkit's A3 Mega blueprint): room for 4,092 nodes.
    assert sorted(s.inputs["ipCidrRange"] for s in subs) == sorted(f"192.168.{16 * i}.0/20" for i in range(4))
    h100 = one(prod, NODE_POOL, "prod-gke-pool-h100-train-pool").inputs
    assert h100["networkConfig"]["additionalNodeNetworkConfigs"] == [
        {"network": autoname(NETWORK, f"prod-gke-pool-h100-train-gpudirect-net-{i}"), "subnetwork": autoname(SUBNET, f"prod-gke-pool-h100-train-gpudirect-sub-{i}")}
        for i in range(4)]
    assert h100["networkConfig"]["enablePrivateNodes"] is True
    assert h100["nodeConfig"]["gvnic"] == {"enabled": True}
    assert h100["nodeLocations"] == ["us-central1-a"]
    l4 = one(prod, NODE_POOL, "prod-gke-pool-l4-infer-pool").inputs
    assert "additionalNodeNetworkConfigs" not in l4["networkConfig"] and "gvnic" not in l4["nodeConfig"]


def test_kubeconfig_is_secret_and_uses_the_auth_plugin(prod):
    provider = one(prod, "pulumi:providers:kubernetes", "prod-gke-gke-k8s")
    assert provider.inputs["kubeconfig"] == "[secret]"
    cfg = yaml.safe_load(provider.revealed["kubeconfig"])
    assert cfg["clusters"][0]["cluster"]["server"] == "https://203.0.113.10"
    assert cfg["clusters"][0]["cluster"]["certificate-authority-data"] == "cGxhbi1wbGFjZWhvbGRlci1jYQ=="
    assert cfg["users"][0]["user"]["exec"]["command"] == "gke-gcloud-auth-plugin"
    assert cfg["users"][0]["user"]["exec"]["apiVersion"] == "client.authentication.k8s.io/v1beta1"
    assert prod.outputs["kubeconfig"] == "[secret]"


def test_no_gpu_operator_with_gkes_stack(prod):
    assert by_type(prod, RELEASE) == []


def test_storage_classes(prod):
    rwo = one(prod, SC, "prod-gke-storage-rwo").inputs
    assert rwo["provisioner"] == "pd.csi.storage.gke.io" and rwo["parameters"] == {"type": "pd-balanced"}
    assert rwo["metadata"]["annotations"] == {"storageclass.kubernetes.io/is-default-class": "true"}
    assert rwo["volumeBindingMode"] == "WaitForFirstConsumer"
    rwx = one(prod, SC, "prod-gke-storage-rwx").inputs
    assert rwx["provisioner"] == "filestore.csi.storage.gke.io"
    assert rwx["parameters"] == {"tier": "standard", "network": autoname(NETWORK, "prod-gke-network-vpc")}
    provider = one(prod, "pulumi:providers:kubernetes").urn
    assert all(r.provider.startswith(provider) for r in by_type(prod, SC))


def test_variant_zonal_private_endpoint_existing_network(variant):
    c = one(variant, CLUSTER).inputs
    assert c["location"] == "us-central1-b"
    assert c["privateClusterConfig"]["enablePrivateEndpoint"] is True
    assert c["masterAuthorizedNetworksConfig"]["cidrBlocks"] == [{"cidrBlock": "203.0.113.0/24", "displayName": "office"}]
    assert c["network"] == "shared-vpc" and c["subnetwork"] == "gke-subnet"
    assert c["ipAllocationPolicy"] == {"clusterSecondaryRangeName": "gke-pods", "servicesSecondaryRangeName": "gke-svc"}
    assert c["addonsConfig"]["gcsFuseCsiDriverConfig"] == {"enabled": True}
    assert by_type(variant, "gcp:compute/routerNat:RouterNat") == []  # existing network: no NAT of ours
    assert one(variant, SC, "variant-storage-rwo").inputs["parameters"] == {"type": "hyperdisk-balanced"}
    assert one(variant, NODE_POOL, "variant-pool-a100-mig-pool").inputs["location"] == "us-central1-b"


def test_variant_rdma_networks(variant):
    direct = one(variant, "gpufleet:gke:GkeGpuDirectNetwork", "variant-pool-h200-gpudirect")
    nets = {r.name: r.inputs for r in by_type(variant, NETWORK) if r.parent == direct.urn}
    assert set(nets) == {"variant-pool-h200-gpudirect-gvnic-net", "variant-pool-h200-gpudirect-rdma-net"}
    assert nets["variant-pool-h200-gpudirect-rdma-net"]["networkProfile"] == \
        "projects/my-gpu-project/global/networkProfiles/us-central1-b-vpc-roce"
    assert "networkProfile" not in nets["variant-pool-h200-gpudirect-gvnic-net"]
    configs = one(variant, NODE_POOL, "variant-pool-h200-pool").inputs["networkConfig"]["additionalNodeNetworkConfigs"]
    assert len(configs) == 9
    assert configs[0] == {"network": autoname(NETWORK, "variant-pool-h200-gpudirect-gvnic-net"), "subnetwork": autoname(SUBNET, "variant-pool-h200-gpudirect-gvnic-sub")}
    assert configs[1:] == [{"network": autoname(NETWORK, "variant-pool-h200-gpudirect-rdma-net"),
                            "subnetwork": autoname(SUBNET, f"variant-pool-h200-gpudirect-rdma-sub-{i}")}
                           for i in range(8)]
    accel = one(variant, NODE_POOL, "variant-pool-h200-pool").inputs["nodeConfig"]["guestAccelerators"][0]
    assert (accel["type"], accel["count"]) == ("nvidia-h200-141gb", 8.0)


def test_variant_partition_size_sharing_and_reservation(variant):
    mig = one(variant, NODE_POOL, "variant-pool-a100-mig-pool").inputs["nodeConfig"]["guestAccelerators"][0]
    assert mig["gpuPartitionSize"] == "1g.5gb"
    assert mig["gpuSharingConfig"] == {"gpuSharingStrategy": "TIME_SHARING", "maxSharedClientsPerGpu": 2.0}
    t4 = one(variant, NODE_POOL, "variant-pool-t4-mps-pool").inputs
    accel = t4["nodeConfig"]["guestAccelerators"][0]
    assert (accel["type"], accel["count"]) == ("nvidia-tesla-t4", 2.0)
    assert accel["gpuSharingConfig"] == {"gpuSharingStrategy": "MPS", "maxSharedClientsPerGpu": 4.0}
    assert "gpuPartitionSize" not in accel
    assert t4["autoscaling"]["locationPolicy"] == "BALANCED"
    assert t4["nodeConfig"]["reservationAffinity"] == {
        "consumeReservationType": "SPECIFIC_RESERVATION", "key": "compute.googleapis.com/reservation-name", "values": ["t4-res"]}


def test_operator_stack_disables_gke_driver_and_device_plugin(operator):
    for name in ("h100-train", "l4-infer"):
        node = one(operator, NODE_POOL, f"op-pool-{name}-pool").inputs["nodeConfig"]
        assert node["guestAccelerators"][0]["gpuDriverInstallationConfig"] == {"gpuDriverVersion": "INSTALLATION_DISABLED"}
        assert node["imageType"] == "UBUNTU_CONTAINERD"
        assert node["labels"]["gke-no-default-nvidia-gpu-device-plugin"] == "true"
    release = one(operator, RELEASE)
    assert release.inputs["version"] == versions.GPU_OPERATOR.version
    values = release.inputs["values"]
    assert values["driver"] == {"enabled": True, "version": catalog.operator_release(versions.GPU_OPERATOR.version).default_driver,
                                "upgradePolicy": DRIVER_UPGRADE_POLICY}
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in values["daemonsets"]["tolerations"]
    quota = one(operator, "kubernetes:core/v1:ResourceQuota").inputs
    assert quota["metadata"]["namespace"] == "gpu-operator"
    assert quota["spec"]["scopeSelector"]["matchExpressions"][0]["values"] == ["system-node-critical", "system-cluster-critical"]


# ---- layer 3: upstream formats ----------------------------------------------------------------------

def _k8s_object(r, api_version, kind):
    obj = {k: v for k, v in r.inputs.items() if k not in ("apiVersion", "kind")}
    return {"apiVersion": api_version, "kind": kind, **obj}


def test_kubernetes_objects_validate_strictly(prod, operator):
    objects = [_k8s_object(r, "storage.k8s.io/v1", "StorageClass") for r in by_type(prod, SC)]
    objects.append(_k8s_object(one(operator, "kubernetes:core/v1:ResourceQuota"), "v1", "ResourceQuota"))
    for obj in objects:
        validate_strict(obj, versions.KUBERNETES_DEFAULT)


def test_operator_values_key_paths_exist_upstream(operator, reference):
    upstream = reference / "gpu-operator" / f"values-{versions.GPU_OPERATOR.version}.yaml"
    assert missing_paths(one(operator, RELEASE).inputs["values"], upstream) == []


def test_gpudirect_pod_networks_and_pinned_nccl_plugin(prod):
    wiring = one(prod, "gpufleet:gke:GkeGpuDirectWiring", "prod-gke-gpudirect")
    params = [r for r in by_type(prod, "kubernetes:networking.gke.io/v1:GKENetworkParamSet") if r.parent == wiring.urn]
    assert sorted(r.inputs["metadata"]["name"] for r in params) == [f"h100-train-vpc-{i}" for i in range(4)]
    p0 = one(prod, "kubernetes:networking.gke.io/v1:GKENetworkParamSet", "prod-gke-gpudirect-h100-train-vpc-0-params").inputs
    assert p0["spec"] == {"vpc": autoname(NETWORK, "prod-gke-pool-h100-train-gpudirect-net-0"), "vpcSubnet": autoname(SUBNET, "prod-gke-pool-h100-train-gpudirect-sub-0"),
                          "deviceMode": "NetDevice"}
    n0 = one(prod, "kubernetes:networking.gke.io/v1:Network", "prod-gke-gpudirect-h100-train-vpc-0-network").inputs
    assert n0["spec"] == {"type": "Device", "parametersRef": {"group": "networking.gke.io", "kind": "GKENetworkParamSet",
                                                             "name": "h100-train-vpc-0"}}
    files = {r.name: r.inputs["file"] for r in by_type(prod, "kubernetes:yaml/v2:ConfigFile")}
    assert files == {f"prod-gke-gpudirect-tcpx-{role}": url for role, url in versions.GKE_GPUDIRECT_MANIFESTS["TCPX"].items()}
    assert all("/master/" not in url and "fee883360a660f71ba07478db95d5c1325322f77" in url for url in files.values())


def test_variant_rdma_pod_networks(variant):
    modes = {r.inputs["metadata"]["name"]: r.inputs["spec"]["deviceMode"]
             for r in by_type(variant, "kubernetes:networking.gke.io/v1:GKENetworkParamSet")}
    assert modes == {"h200-gvnic": "NetDevice", **{f"h200-rdma-{i}": "RDMA" for i in range(8)}}
    installers = by_type(variant, "kubernetes:yaml/v2:ConfigFile")
    assert [(r.name, r.inputs["file"]) for r in installers] == [(
        "variant-gpudirect-rdma-nccl-installer",
        "https://raw.githubusercontent.com/GoogleCloudPlatform/container-engine-accelerators/"
        "2c776f7e9656a2b6476f19938b738b4186000ce3/gpudirect-rdma/nccl-rdma-installer.yaml",
    )]
    assert by_type(variant, "gpufleet:gke:GkeGpuDirectWiring")[0].name == "variant-gpudirect"


# ---- real-cloud behaviour the mocks cannot show ------------------------------------------------------

FIREWALL = "gcp:compute/firewall:Firewall"
INTERNAL_ALLOWS = [{"protocol": "tcp", "ports": ["0-65535"]}, {"protocol": "udp", "ports": ["0-65535"]}, {"protocol": "icmp"}]


def test_tcpx_vpcs_allow_node_to_node_traffic(prod):
    """A new VPC denies all ingress: each TCPX VPC needs an allow rule from its subnet or NCCL's traffic on the
    extra NICs is dropped (GKE's TCPX guide and cluster-toolkit's multivpc module create one per VPC)."""
    direct = one(prod, "gpufleet:gke:GkeGpuDirectNetwork")
    rules = {r.name: r.inputs for r in by_type(prod, FIREWALL) if r.parent == direct.urn}
    assert sorted(rules) == [f"prod-gke-pool-h100-train-gpudirect-sub-{i}-internal" for i in range(4)]
    for i in range(4):
        rule = rules[f"prod-gke-pool-h100-train-gpudirect-sub-{i}-internal"]
        assert rule["network"] == f"projects/my-gpu-project/global/networks/{autoname(NETWORK, f'prod-gke-pool-h100-train-gpudirect-net-{i}')}"
        assert rule["direction"] == "INGRESS" and rule["sourceRanges"] == [f"192.168.{16 * i}.0/20"]
        assert rule["allows"] == INTERNAL_ALLOWS
    # Nothing else in the stack opens a firewall (the cluster VPC's rules are GKE's own).
    assert len(by_type(prod, FIREWALL)) == 4


def test_rdma_gvnic_vpc_allows_node_to_node_traffic_and_roce_vpc_gets_no_rule(variant):
    direct = one(variant, "gpufleet:gke:GkeGpuDirectNetwork", "variant-pool-h200-gpudirect")
    rules = [r for r in by_type(variant, FIREWALL) if r.parent == direct.urn]
    assert [r.name for r in rules] == ["variant-pool-h200-gpudirect-gvnic-sub-internal"]
    assert rules[0].inputs["network"] == f"projects/my-gpu-project/global/networks/{autoname(NETWORK, 'variant-pool-h200-gpudirect-gvnic-net')}"
    assert rules[0].inputs["sourceRanges"] == ["192.168.0.0/20"] and rules[0].inputs["allows"] == INTERNAL_ALLOWS


def test_system_pool_starts_with_nodes(prod):
    """Without initialNodeCount the provider creates the pool with 0 nodes, and GKE's autoscaler uses the
    minimum only to stop scale-down: system pods would wait. initialNodeCount replaces the pool when it
    changes and GKE rewrites it on resize, so it is ignored after creation."""
    system = one(prod, NODE_POOL, "prod-gke-gke-system-pool")
    assert system.inputs["initialNodeCount"] == 1.0 and "nodeCount" not in system.inputs
    assert system.ignore_changes == ["initialNodeCount"]
    # GPU pools still start empty (scale from zero).
    for name in ("h100-train", "l4-infer"):
        assert "initialNodeCount" not in one(prod, NODE_POOL, f"prod-gke-pool-{name}-pool").inputs


def test_boot_disk_type_follows_the_machine(prod, variant):
    """A3 Ultra (and A4) reject Persistent Disk boot disks: their pools boot from Hyperdisk Balanced; the rest
    keep pd-balanced (N1/A2 take no Hyperdisk)."""
    assert one(variant, NODE_POOL, "variant-pool-h200-pool").inputs["nodeConfig"]["diskType"] == "hyperdisk-balanced"
    for plan_, name in [(variant, "variant-pool-a100-mig-pool"), (variant, "variant-pool-t4-mps-pool"),
                        (prod, "prod-gke-pool-h100-train-pool"), (prod, "prod-gke-pool-l4-infer-pool")]:
        assert one(plan_, NODE_POOL, name).inputs["nodeConfig"]["diskType"] == "pd-balanced", name


@pytest.fixture(scope="module")
def two_gpudirect():
    """Two GPUDirect pools in one cluster: a TCPX pool and an RDMA pool."""
    config = example_config("prod-gke")
    config["gpufleet:cluster"]["name"] = "two"
    config["gpufleet:nodePools"] = [
        config["gpufleet:nodePools"][0],
        {"name": "h200", "machineType": "a3-ultragpu-8g", "rdma": True, "maxNodes": 2, "gke": {"zones": ["us-central1-b"]}},
    ]
    return plan_config(config, stack="two")  # h200 cannot attach the pd-balanced default class: a warning


def test_gpudirect_pools_get_disjoint_subnets(two_gpudirect):
    """GKE: the pod networks of one cluster must not overlap, so each GPUDirect pool takes the /20s after the
    previous pool's (the first pool starts at 192.168.0.0/20)."""
    ranges = {r.name: r.inputs["ipCidrRange"] for r in by_type(two_gpudirect, SUBNET) if "gpudirect" in r.name}
    assert [ranges[f"two-pool-h100-train-gpudirect-sub-{i}"] for i in range(4)] == [f"192.168.{16 * i}.0/20" for i in range(4)]
    assert ranges["two-pool-h200-gpudirect-gvnic-sub"] == "192.168.64.0/20"
    assert [ranges[f"two-pool-h200-gpudirect-rdma-sub-{i}"] for i in range(8)] == [f"192.168.{16 * i}.0/20" for i in range(5, 13)]
    assert len(set(ranges.values())) == len(ranges) == 13
