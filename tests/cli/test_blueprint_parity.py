"""Parity with the public GPU blueprints teams copy from (issue 20), as a tested property.

Each blueprint is expressed as a gpufleet stack (stacks/Pulumi.p5-efa.yaml, stacks/Pulumi.ai-on-eks.yaml,
examples/blueprints/Pulumi.a3-mega.yaml); these tests plan it and pin every GPU-relevant setting the upstream file
sets to what gpufleet registers, citing the upstream file and lines at a fixed tag/commit. Where gpufleet
deliberately differs, the test says so and why.

Upstream, read with the `fetch` tool at:
- GoogleCloudPlatform/cluster-toolkit tag v1.95.0 = commit 079cf8349a96cfd433cb89945bc467af21818424 (CT)
- terraform-aws-modules/terraform-aws-eks tag v21.19.0 = commit bef29c4d9523523e57fe898643fde2895106b339 (TAE)
- awslabs/ai-on-eks commit 41a979ee7614a59e5337768b1bddec76ad6653e0 (no tags; AOE)
"""

from __future__ import annotations

import base64
import ipaddress
import json
import subprocess
import sys

import pytest

from gpufleet.base import labels as L
from gpufleet.base import versions
from gpufleet.app.plan.engine import plan
from gpufleet.app.plan.stackfile import read_stack_file
from tests.helpers import ROOT, by_type, one, planned

NODE_POOL = "gcp:container/nodePool:NodePool"
SUBNET = "gcp:compute/subnetwork:Subnetwork"
NETWORK = "gcp:compute/network:Network"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
A3_MEGA_STACK = ROOT / "examples" / "blueprints" / "Pulumi.a3-mega.yaml"


@pytest.fixture(scope="module")
def a3():
    return plan(read_stack_file("a3-mega", A3_MEGA_STACK))


@pytest.fixture(scope="module")
def p5():
    return planned("p5-efa", policies=True)


@pytest.fixture(scope="module")
def aoe():
    return planned("ai-on-eks", policies=True)


def user_data(p, name: str) -> str:
    return base64.b64decode(one(p, LAUNCH_TEMPLATE, name).inputs["userData"]).decode()


# ---- cluster-toolkit examples/gke-a3-megagpu + modules/compute/gke-node-pool (CT v1.95.0) -------------------------


def test_a3_mega_pool_shape_and_reservation(a3):
    pool = one(a3, NODE_POOL, "gke-a3-mega-pool-a3-megagpu-pool").inputs
    cfg = pool["nodeConfig"]
    # gke-a3-megagpu.yaml line 132 (machine_type), lines 53 and 135-137 (nvidia-h100-mega-80gb x 8).
    assert cfg["machineType"] == "a3-megagpu-8g"
    assert [(a["type"], a["count"]) for a in cfg["guestAccelerators"]] == [("nvidia-h100-mega-80gb", 8)]
    # Lines 138-141: SPECIFIC_RESERVATION on the named reservation; line 134: the one zone.
    assert cfg["reservationAffinity"]["consumeReservationType"] == "SPECIFIC_RESERVATION"
    assert cfg["reservationAffinity"]["values"] == ["a3-mega-reservation"]
    assert pool["nodeLocations"] == ["us-central1-c"]


def test_a3_mega_fixed_size_pool_without_autoscaling(a3):
    """Line 133 static_node_count; gke-node-pool main.tf line 110 (node_count) and lines 113-122 (no autoscaling
    block when static). gpufleet: gke.autoscaling false -> node_count, no autoscaling, node_count not ignored; like
    the module (main.tf lines 309-316), the local SSD configs are ignored after creation."""
    pool = one(a3, NODE_POOL, "gke-a3-mega-pool-a3-megagpu-pool")
    assert pool.inputs["nodeCount"] == 2
    assert "autoscaling" not in pool.inputs and "initialNodeCount" not in pool.inputs
    assert pool.ignore_changes == ["nodeConfig.ephemeralStorageLocalSsdConfig", "nodeConfig.localNvmeSsdBlockConfig"]


def test_a3_mega_upgrades_fit_the_reservation(a3):
    """gke-node-pool main.tf lines 22-28 and 133-137: SURGE with max_surge 0, max_unavailable 1 (a pool that fills
    its reservation gets no surge node); variables.tf lines 188-192: auto_upgrade default false; gke-cluster
    variables.tf lines 82-86: release_channel default UNSPECIFIED (GKE forces auto-upgrade inside a channel)."""
    pool = one(a3, NODE_POOL, "gke-a3-mega-pool-a3-megagpu-pool").inputs
    assert pool["upgradeSettings"] == {"strategy": "SURGE", "maxSurge": 0, "maxUnavailable": 1}
    assert pool["management"] == {"autoRepair": True, "autoUpgrade": False}
    cluster = one(a3, "gcp:container/cluster:Cluster").inputs
    assert cluster["releaseChannel"] == {"channel": "UNSPECIFIED"}
    # gke-a3-megagpu.yaml line 54 version_prefix "1.32.".
    assert cluster["minMasterVersion"] == "1.32"


def test_a3_mega_maintenance_exclusion_is_ours(a3):
    """Deliberate difference: the blueprint sets no maintenance exclusion (gke-cluster main.tf lines 278-289 support
    them); the example stack adds one to show how a run on reserved capacity holds upgrades back."""
    policy = one(a3, "gcp:container/cluster:Cluster").inputs["maintenancePolicy"]
    assert policy["maintenanceExclusions"] == [{
        "exclusionName": "training-run", "startTime": "2026-12-01T00:00:00Z", "endTime": "2027-01-15T00:00:00Z",
        "exclusionOptions": {"scope": "NO_MINOR_OR_NODE_UPGRADES"},
    }]


def test_a3_mega_local_ssds_taint_gvnic_sysctls(a3):
    cfg = one(a3, NODE_POOL, "gke-a3-mega-pool-a3-megagpu-pool").inputs["nodeConfig"]
    # disk_definitions.tf line 26: a3-megagpu-8g gives its 16 local SSDs to ephemeral storage.
    assert cfg["ephemeralStorageLocalSsdConfig"] == {"localSsdCount": 16}
    assert "localNvmeSsdBlockConfig" not in cfg
    # main.tf lines 45-49: the GPU taint nvidia.com/gpu=present:NO_SCHEDULE.
    assert cfg["taints"] == [{"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}]
    # main.tf lines 232-234: gVNIC on COS; variables.tf lines 528-531: the TCP buffer sysctls.
    assert cfg["gvnic"] == {"enabled": True} and cfg["imageType"] == "COS_CONTAINERD"
    assert cfg["linuxNodeConfig"]["sysctls"] == {
        "net.ipv4.tcp_rmem": "4096 87380 16777216", "net.ipv4.tcp_wmem": "4096 16384 16777216",
    }


def test_a3_mega_gpudirect_networks(a3):
    """gke-a3-megagpu.yaml lines 99-106: 8 GPU networks from 192.168.0.0/16, /20 subnets ("upto 4k nodes"), MTU 8244."""
    pool = one(a3, NODE_POOL, "gke-a3-mega-pool-a3-megagpu-pool").inputs
    assert len(pool["networkConfig"]["additionalNodeNetworkConfigs"]) == 8
    subnets = [r.inputs["ipCidrRange"] for r in by_type(a3, SUBNET) if "gpudirect" in r.name]
    nets = [ipaddress.ip_network(c) for c in subnets]
    assert len(nets) == 8 and all(n.prefixlen == 20 and n.subnet_of(ipaddress.ip_network("192.168.0.0/16")) for n in nets)
    assert {r.inputs["mtu"] for r in by_type(a3, NETWORK) if "gpudirect" in r.name} == {8244}


def test_a3_mega_cluster_network_and_storage(a3):
    cluster = one(a3, "gcp:container/cluster:Cluster").inputs
    # Line 112: public endpoint limited by authorized networks (lines 117-119).
    assert cluster["privateClusterConfig"]["enablePrivateEndpoint"] is False
    assert cluster["masterAuthorizedNetworksConfig"]["cidrBlocks"] == [
        {"cidrBlock": "203.0.113.0/24", "displayName": "kubectl-access-network"}
    ]
    # Line 115: Cloud Storage FUSE CSI.
    assert cluster["addonsConfig"]["gcsFuseCsiDriverConfig"] == {"enabled": True}
    ranges = {
        s["rangeName"]: s["ipCidrRange"]
        for r in by_type(a3, SUBNET) if "gpudirect" not in r.name for s in r.inputs.get("secondaryIpRanges", [])
    }
    # Lines 66-72: pods 10.4.0.0/14, services 10.0.32.0/20.
    assert sorted(ranges.values()) == ["10.0.32.0/20", "10.4.0.0/14"]


def test_a3_mega_kueue_flavor_tolerates_gkes_taint(a3):
    """kueue-configuration.yaml.tftpl lines 34-37 tolerate nvidia.com/gpu with Exists. gpufleet tolerates the exact
    taint GKE sets (nvidia.com/gpu=present:NoSchedule): both admit a GPU-less launcher pod; gpufleet's value is
    the one the node pool really carries (it used to say "true" and left such pods Pending, issue 20)."""
    flavor = one(a3, "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor")
    assert {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"} in flavor.inputs["spec"]["tolerations"]


def test_a3_mega_plans_with_the_scale_to_zero_verdict():
    """Deliberate difference: gpufleet's policy pack makes a GPU pool that cannot scale to zero a mandatory finding,
    and a static reservation pool is one; GKE node pools have no place for a visible exemption. So the stack lives in
    examples/blueprints and plans with exit 1 and exactly that finding."""
    run = subprocess.run(
        [sys.executable, "-m", "gpufleet.app.cli", "plan", "a3-mega", "--config", str(A3_MEGA_STACK), "--format", "json"],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )
    assert run.returncode == 1, run.stderr
    violations = json.loads(run.stdout)["violations"]
    assert [(v["policy"], v["level"]) for v in violations] == [("gpu-pool-scale-to-zero", "mandatory")]


# ---- terraform-aws-eks README p5 example and tests/eks-managed-node-group p4d group (TAE v21.19.0) ---------------


def test_p5_node_group_ami_size_and_update(p5):
    ng = one(p5, NODE_GROUP, "p5-efa-pool-p5-ng").inputs
    # README.md lines 347-348: AL2023 NVIDIA AMI, p5.48xlarge; lines 373-375: 2 to 10 nodes, desired 2.
    assert ng["amiType"] == "AL2023_x86_64_NVIDIA" and ng["instanceTypes"] == ["p5.48xlarge"]
    assert ng["scalingConfig"] == {"minSize": 2, "maxSize": 10, "desiredSize": 2}
    # modules/eks-managed-node-group/variables.tf lines 563-572: update_config max_unavailable_percentage 33.
    assert ng["updateConfig"] == {"maxUnavailablePercentage": 33}


def test_p5_every_efa_interface_efa_only_after_card_0(p5):
    """README.md lines 350-352 ("all 32 EFA interfaces"); module main.tf lines 57-64: card 0 device 0 "efa", cards
    1.. device 1 "efa-only" (docs/UPGRADE-21.0.md line 18: enable_efa_only defaults to true)."""
    nics = one(p5, LAUNCH_TEMPLATE, "p5-efa-pool-p5-lt").inputs["networkInterfaces"]
    assert len(nics) == 32
    assert [(n["networkCardIndex"], n["deviceIndex"], n["interfaceType"]) for n in nics] == [(0, 0, "efa")] + [
        (i, 1, "efa-only") for i in range(1, 32)
    ]


def test_p5_and_p4d_raid0_instance_store_through_nodeadm(p5):
    """README.md lines 354-369 (p5) and tests/eks-managed-node-group/main.tf lines 331-346 (p4d): a cloudinit part of
    type application/node.eks.aws with NodeConfig spec.instance.localStorage.strategy RAID0."""
    for pool in ("p5", "p4d"):
        text = user_data(p5, f"p5-efa-pool-{pool}-lt")
        assert "Content-Type: multipart/mixed" in text and "Content-Type: application/node.eks.aws" in text
        assert "kind: NodeConfig" in text and "strategy: RAID0" in text


def test_p4d_efa_only_override_placement_and_taint(p5):
    """tests/eks-managed-node-group/main.tf lines 320-369: p4d.24xlarge, 0 to 1 nodes, enable_efa_only with
    efa_indices [0] (EFA on card 0, EFA-only on cards 1-3), placement group, taint nvidia.com/gpu=true:NO_SCHEDULE.
    The catalog's p4d default is EFA with ENA on every card; the pool's efaOnly: true overrides it."""
    lt = one(p5, LAUNCH_TEMPLATE, "p5-efa-pool-p4d-lt").inputs
    assert [n["interfaceType"] for n in lt["networkInterfaces"]] == ["efa", "efa-only", "efa-only", "efa-only"]
    assert "groupName" in lt["placement"]
    ng = one(p5, NODE_GROUP, "p5-efa-pool-p4d-ng").inputs
    assert ng["scalingConfig"] == {"minSize": 0, "maxSize": 1, "desiredSize": 0}
    assert {"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"} in ng["taints"]
    # Deliberate difference: upstream labels nodes vpc.amazonaws.com/efa.present and nvidia.com/gpu.present by hand
    # (lines 356-359); gpufleet selects EFA nodes by its own gpufleet.io/efa label (its EFA device plugin and jobs
    # select on it) and nvidia.com/gpu.present is the GPU Operator's node-feature-discovery label on real nodes.
    assert ng["labels"][L.EFA_LABEL] == "true"


def test_p5_imds_hop_limit_one(p5):
    """docs/UPGRADE-21.0.md line 15: IMDS hop limit 1 by default (gpufleet: the same, pods use IRSA)."""
    lt = one(p5, LAUNCH_TEMPLATE, "p5-efa-pool-p5-lt").inputs
    assert lt["metadataOptions"]["httpPutResponseHopLimit"] == 1 and lt["metadataOptions"]["httpTokens"] == "required"


# ---- awslabs/ai-on-eks infra/base/terraform (AOE 41a979ee) ---------------------------------------------------------


def test_ai_on_eks_version_and_vpc_with_secondary_range(aoe):
    # variables.tf lines 13-17: EKS 1.32, past EKS standard support since 2026-03-23 (kubernetes.yaml): the stack runs
    # gpufleet's default minor instead (issue 32). Lines 19-32: VPC 10.1.0.0/21 with secondary 100.64.0.0/16.
    assert one(aoe, "aws:eks/cluster:Cluster").inputs["version"] == versions.KUBERNETES_DEFAULT
    assert one(aoe, "aws:ec2/vpc:Vpc").inputs["cidrBlock"] == "10.1.0.0/21"
    assoc = one(aoe, "aws:ec2/vpcIpv4CidrBlockAssociation:VpcIpv4CidrBlockAssociation")
    assert assoc.inputs["cidrBlock"] == "100.64.0.0/16"
    # vpc.tf lines 11-13: one /17 of the secondary range per zone for nodes and pods; eks.tf lines 17-20 and 98-102:
    # the cluster and node groups use only those ("100.") subnets.
    nodes = {r.name: r.inputs["cidrBlock"] for r in by_type(aoe, "aws:ec2/subnet:Subnet") if "-nodes-" in r.name}
    assert sorted(nodes.values()) == ["100.64.0.0/17", "100.64.128.0/17"]


def test_ai_on_eks_bottlerocket_gpu_pools_with_raid0(aoe):
    """addons.tf lines 365 and 419 (amiFamily Bottlerocket), 372 and 426 (instanceStorePolicy RAID0): Karpenter turns
    RAID0 into a Bottlerocket bootstrap command running `apiclient ephemeral-storage init` and `bind`; gpufleet puts
    the same command into the managed node group's launch template (EKS merges Bottlerocket TOML user data)."""
    for pool in ("g6-inference", "g5-inference"):
        ng = one(aoe, NODE_GROUP, f"ai-stack-pool-{pool}-ng").inputs
        assert ng["amiType"] == "BOTTLEROCKET_x86_64_NVIDIA"
        text = user_data(aoe, f"ai-stack-pool-{pool}-lt")
        assert '["apiclient", "ephemeral-storage", "init"]' in text
        assert '"--dirs", "/var/lib/containerd", "/var/lib/kubelet", "/var/log/pods"' in text


def test_ai_on_eks_instance_families_and_sizes(aoe):
    """addons.tf lines 391-396 / 453-458: g6 and g5, sizes 2xlarge..48xlarge in one Karpenter NodePool. Deliberate
    difference: a gpufleet pool has one GPU shape (its autoscaler templates and Kueue quotas count GPUs per node), so
    the single-GPU sizes form the pool; the 4- and 8-GPU sizes (12x/24x/48x) would be pools of their own."""
    assert one(aoe, NODE_GROUP, "ai-stack-pool-g6-inference-ng").inputs["instanceTypes"] == [
        "g6.2xlarge", "g6.4xlarge", "g6.8xlarge", "g6.16xlarge"]
    assert one(aoe, NODE_GROUP, "ai-stack-pool-g5-inference-ng").inputs["instanceTypes"] == [
        "g5.2xlarge", "g5.4xlarge", "g5.8xlarge", "g5.16xlarge"]


def test_ai_on_eks_gpu_taint(aoe):
    """addons.tf lines 386-389 / 448-451 taint nvidia.com/gpu with the literal value "Exists". Deliberate
    difference: gpufleet's value is "true" on every platform but GKE; tolerations with operator Exists (what
    ai-on-eks's workloads use) match both."""
    ng = one(aoe, NODE_GROUP, "ai-stack-pool-g6-inference-ng").inputs
    assert ng["taints"][0] == {"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}


def test_ai_on_eks_no_second_device_plugin_on_bottlerocket(aoe):
    """addons.tf lines 277-304 install the NVIDIA device plugin on nodes labelled accelerator: nvidia, and the g5
    Bottlerocket pool carries that label (line 446): those nodes run Bottlerocket's own plugin and a second one.
    gpufleet keeps the GPU Operator's device plugin off Bottlerocket nodes (node label) and, with every pool on
    Bottlerocket, off entirely (tests/upstream/test_bottlerocket_device_plugin.py renders the chart)."""
    for pool in ("g6-inference", "g5-inference"):
        labels = one(aoe, NODE_GROUP, f"ai-stack-pool-{pool}-ng").inputs["labels"]
        assert labels[L.GPU_OPERATOR_DEVICE_PLUGIN_DEPLOY_LABEL] == "false"
    values = one(aoe, "kubernetes:helm.sh/v3:Release", "ai-stack-gpu-operator-release").inputs["values"]
    assert values["devicePlugin"]["enabled"] is False


def test_ai_on_eks_fsx_linked_to_s3(aoe):
    """fsx-for-lustre.tf lines 9-22: PERSISTENT_2, SSD, 500 MB/s/TiB, 2400 GiB; lines 25-40: a data repository
    association of the bucket under /data with auto import and export of NEW, CHANGED, DELETED."""
    fs = one(aoe, "aws:fsx/lustreFileSystem:LustreFileSystem").inputs
    assert (fs["deploymentType"], fs["storageType"], fs["perUnitStorageThroughput"], fs["storageCapacity"]) == (
        "PERSISTENT_2", "SSD", 500, 2400)
    dra = one(aoe, "aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation").inputs
    events = ["NEW", "CHANGED", "DELETED"]
    assert dra["dataRepositoryPath"] == "s3://ai-stack-fsx-data" and dra["fileSystemPath"] == "/data"
    assert dra["s3"] == {"autoImportPolicy": {"events": events}, "autoExportPolicy": {"events": events}}
