"""Unit tests (layer 1): node upgrades, sizing, local NVMe, placement and network sizing of GPU pools (issue 20):
each bad value reported exactly, each default what the docstring says."""

from __future__ import annotations

import copy

import pytest

from gpufleet.base.catalog import aws as aws_catalog
from gpufleet.base.catalog import gcp
from gpufleet.base.spec.platforms.eks import pool_efa_secondary, pool_local_storage
from gpufleet.base.spec.platforms.gke import initial_node_count, local_ssd, pool_sysctls
from tests.helpers import example_config
from tests.helpers import load_config as load
from tests.helpers import spec_problems as problems

GKE = example_config("prod-gke")
EKS = example_config("prod-eks")
S = "stack 'test': gpufleet:"


def gke_pool(**gke) -> dict:
    config = copy.deepcopy(GKE)
    config["gpufleet:nodePools"][0].setdefault("gke", {}).update(gke)
    return config


# ---- GKE -------------------------------------------------------------------------------------------------------


def test_gke_defaults_fit_reserved_capacity():
    spec = load(GKE)
    h100, l4 = spec.node_pools
    up = h100.gke.upgrade
    assert (up.strategy, up.max_surge, up.max_unavailable) == ("surge", 0, 1)
    assert h100.gke.auto_upgrade and h100.gke.autoscaling
    # a3-highgpu-8g comes with 16 local SSDs: ephemeral storage by default; the G2 pool has none bundled.
    assert local_ssd(h100) == ("ephemeral-storage", 16) and local_ssd(l4) == ("none", 0)
    assert gcp.bundled_local_ssds("a3-ultragpu-8g") == 32
    # NCCL TCP buffers on the GPUDirect pool only.
    assert pool_sysctls(h100)["net.ipv4.tcp_rmem"] == "4096 87380 16777216" and pool_sysctls(l4) == {}
    assert initial_node_count(h100, spec.cluster.gke) is None  # minNodes 0: starts empty


def test_auto_upgrade_off_needs_no_release_channel():
    assert problems(gke_pool(autoUpgrade=False)) == [
        f"{S}nodePools[0].gke.autoUpgrade: GKE keeps node auto-upgrade on in release channel REGULAR; set "
        "cluster.gke.releaseChannel: UNSPECIFIED to pin versions (got False)"
    ]
    config = gke_pool(autoUpgrade=False)
    config["gpufleet:cluster"]["gke"]["releaseChannel"] = "UNSPECIFIED"
    assert not load(config).node_pools[0].gke.auto_upgrade


def test_fixed_size_pool_needs_min_equal_max():
    config = gke_pool(autoscaling=False)
    config["gpufleet:nodePools"][0].update(minNodes=2, maxNodes=4)
    assert problems(config) == [
        f"{S}nodePools[0].maxNodes: a fixed-size pool (gke.autoscaling: false) has minNodes nodes; set maxNodes equal "
        "to minNodes (2) (got 4)"
    ]


def test_initial_nodes_spread_over_zones():
    config = gke_pool(zones=["us-central1-a", "us-central1-b"])
    config["gpufleet:nodePools"][0].update(minNodes=3, maxNodes=4, rdma=False)
    spec = load(config)
    assert initial_node_count(spec.node_pools[0], spec.cluster.gke) == 2  # per zone, rounded up


@pytest.mark.parametrize("min_nodes, per_zone", [(1, 1), (3, 1), (4, 2), (0, None)])
def test_regional_pool_without_zones_starts_at_its_minimum_over_gkes_three_zones(min_nodes, per_zone):
    """GKE counts initial nodes per zone and replicates a regional cluster's pools over three zones by default
    (regional-clusters docs): minNodes spread over three, rounded up, so the pool starts at least at its minimum."""
    config = copy.deepcopy(GKE)
    config["gpufleet:nodePools"][1].update(minNodes=min_nodes, exemptions={"gpu-pool-scale-to-zero": "warm-inference-node"})
    spec = load(config)
    assert spec.cluster.gke.zone is None and not spec.cluster.gke.node_zones  # regional, GKE picks the zones
    assert initial_node_count(spec.node_pools[1], spec.cluster.gke) == per_zone


def test_zonal_pool_starts_at_its_minimum_in_its_zone():
    config = copy.deepcopy(GKE)
    config["gpufleet:cluster"]["gke"]["zone"] = "us-central1-a"
    config["gpufleet:nodePools"][1].update(minNodes=2, exemptions={"gpu-pool-scale-to-zero": "warm-inference-node"})
    spec = load(config)
    assert initial_node_count(spec.node_pools[1], spec.cluster.gke) == 2


def test_upgrade_settings_are_checked():
    msgs = problems(gke_pool(upgrade={"maxSurge": 0, "maxUnavailable": 0}))
    assert len(msgs) == 1 and "gke.upgrade" in msgs[0] and "maxSurge + maxUnavailable must be at least 1" in msgs[0]
    msgs = problems(gke_pool(upgrade={"strategy": "blue-green", "maxSurge": 1}))
    assert len(msgs) == 1 and "maxSurge and maxUnavailable are surge settings" in msgs[0]


def test_compact_placement_where_supported_one_zone_no_blue_green():
    msgs = problems(gke_pool(placement="compact", zones=[], upgrade={"strategy": "blue-green"}))
    assert msgs == [
        f"{S}nodePools[0].gke.zones: compact placement needs exactly one zone (got [])",
        f"{S}nodePools[0].gke.upgrade.strategy: compact placement does not work with blue-green upgrades (use surge) "
        "(got 'blue-green')",
    ]
    config = copy.deepcopy(GKE)
    config["gpufleet:nodePools"] = [{"name": "h200", "machineType": "a3-ultragpu-8g", "rdma": True,
                                     "gke": {"zones": ["us-central1-b"], "placement": "compact"}}]
    assert problems(config) == [
        f"{S}nodePools[0].gke.placement: GKE compact placement is not available for a3-ultragpu-8g (got 'compact')"
    ]
    assert load(gke_pool(placement="compact")).node_pools[0].gke.placement == "compact"


def test_local_ssd_count_must_match_the_bundle():
    assert problems(gke_pool(localSsd={"mode": "raw-block", "count": 8})) == [
        f"{S}nodePools[0].gke.localSsd.count: a3-highgpu-8g comes with 16 local SSDs (allowed: 16) (got 8)"
    ]
    spec = load(gke_pool(localSsd={"mode": "raw-block"}))
    assert local_ssd(spec.node_pools[0]) == ("raw-block", 16)


def test_gpudirect_subnets_must_hold_max_nodes():
    config = gke_pool()
    config["gpufleet:cluster"]["gke"]["network"] = {"gpuDirectSubnetPrefix": 24}
    config["gpufleet:nodePools"][0]["maxNodes"] = 300
    assert problems(config) == [
        f"{S}nodePools[0].maxNodes: a /24 GPUDirect subnet holds 252 nodes (cluster.gke.network.gpuDirectSubnetPrefix); "
        "use a shorter prefix or fewer nodes (got 300)"
    ]
    config["gpufleet:cluster"]["gke"]["network"] = {}  # default /20: 4,092 nodes
    load(config)


def test_maintenance_exclusions():
    config = copy.deepcopy(GKE)
    config["gpufleet:cluster"]["gke"]["maintenanceExclusions"] = [
        {"name": "run", "startTime": "2026-12-01T00:00:00Z"},
    ]
    msgs = problems(config)
    assert len(msgs) == 1 and "maintenanceExclusions[0]" in msgs[0] and "exactly one of endTime or untilEndOfSupport" in msgs[0]
    config["gpufleet:cluster"]["gke"]["maintenanceExclusions"] = [
        {"name": "run", "startTime": "2026-12-01T00:00:00Z", "untilEndOfSupport": True},
    ]
    assert load(config).cluster.gke.maintenance_exclusions[0].scope == "NO_MINOR_OR_NODE_UPGRADES"


def test_eks_settings_are_refused_on_gke():
    config = copy.deepcopy(GKE)
    config["gpufleet:nodePools"][1].update(maxUnavailable=2, localStorage="raid0")
    assert problems(config) == [
        f"{S}nodePools[1].maxUnavailable: an EKS setting, not used on gke (see gke.upgrade)",
        f"{S}nodePools[1].localStorage: an EKS setting, not used on gke (see gke.localSsd)",
    ]


# ---- EKS -------------------------------------------------------------------------------------------------------


def test_eks_defaults_raid0_where_the_instance_store_is():
    spec = load(EKS)
    h100, l4 = spec.node_pools
    assert pool_local_storage(h100) == "raid0" and pool_local_storage(l4) == "raid0"
    # 8 x 3800 GB: DescribeInstanceTypes' TotalSizeInGB 30400 (Karpenter's instance-local-nvme), not the 3.84 TB label.
    assert aws_catalog.instance_store("p5.48xlarge") == aws_catalog.InstanceStore(8 * 3800, 8, 3800)
    # A size only Karpenter's generated data knows has its total (aws_gpu_types.yaml), so raid0 is its default too.
    assert aws_catalog.instance_store("g6e.2xlarge") == aws_catalog.InstanceStore(450)
    assert aws_catalog.instance_store("m7i.xlarge") is None
    assert h100.max_unavailable == 1
    assert pool_efa_secondary(h100) == "efa-only"  # the catalog's choice for p5


def test_eks_bad_values():
    config = copy.deepcopy(EKS)
    config["gpufleet:nodePools"][1].update(maxUnavailable="150%", efaOnly=True)
    config["gpufleet:nodePools"][1]["instanceTypes"] = ["m7i.xlarge"]
    msgs = problems(config)
    assert any("nodePools[1].maxUnavailable" in m and "'150%'" in m for m in msgs)


def test_eks_raid0_needs_an_instance_store_and_efa_only_needs_efa():
    config = copy.deepcopy(EKS)
    config["gpufleet:nodePools"][1].update(localStorage="raid0", efaOnly=True, instanceTypes=["g6.xlarge"])
    # g6.xlarge has an instance store: fine; efaOnly on a pool without rdma is not.
    assert problems(config) == [f"{S}nodePools[1].efaOnly: only used on EFA pools (rdma: true) (got True)"]
    config["gpufleet:cluster"]["eks"]["systemPool"] = {"instanceTypes": ["m7i.xlarge"]}
    config["gpufleet:nodePools"][1].pop("efaOnly")
    config["gpufleet:nodePools"][0].update(efaOnly=False)
    spec = load(config)
    assert pool_efa_secondary(spec.node_pools[0]) == "efa"


def test_eks_secondary_cidrs():
    config = copy.deepcopy(EKS)
    config["gpufleet:cluster"]["eks"]["network"]["secondaryCidrs"] = ["100.0.0.0/8"]
    msgs = problems(config)
    assert len(msgs) == 1 and "100.0.0.0/8: a VPC CIDR block must be /16 to /28" in msgs[0]


def test_fsx_shared_file_system():
    config = copy.deepcopy(EKS)
    config["gpufleet:cluster"]["eks"]["storage"]["fsxLustre"]["shared"] = {"storageCapacityGib": 3000}
    msgs = problems(config)
    assert len(msgs) == 1 and "1200 GiB or a multiple of 2400 GiB (got 3000)" in msgs[0]
    config["gpufleet:cluster"]["eks"]["storage"]["fsxLustre"] = {
        "deploymentType": "SCRATCH_2", "shared": {"dataRepositoryAssociations": [{"s3Path": "s3://bbb", "fileSystemPath": "/d"}]},
    }
    assert problems(config) == [
        f"{S}cluster.eks.storage.fsxLustre: shared needs deploymentType PERSISTENT_2 (data repository associations)"
    ]


def test_eks_settings_are_refused_on_k3s():
    config = example_config("dev")
    config["gpufleet:nodePools"][0].update(localStorage="raid0", efaOnly=False)
    assert problems(config) == [
        f"{S}nodePools[0].localStorage: an EKS setting, not used on k3s; remove it",
        f"{S}nodePools[0].efaOnly: an EKS setting, not used on k3s; remove it",
    ]


def test_fixed_size_pool_spreads_evenly_over_its_zones():
    config = gke_pool(autoscaling=False, zones=["us-central1-a", "us-central1-b"])
    config["gpufleet:nodePools"][0].update(minNodes=3, maxNodes=3, rdma=False)
    assert problems(config) == [
        f"{S}nodePools[0].minNodes: a fixed-size pool has the same nodes in each of its 2 zones: use a multiple of 2 (got 3)"
    ]
