"""Component tests (layer 2): what GKE node pools and EKS node groups register for upgrades, sizing, local NVMe,
placement and sysctls (issue 20), under Pulumi's mocks."""

from __future__ import annotations

import base64
import copy
import tomllib

import pytest
import yaml

from gpufleet.base.node_labels import node_taints
from gpufleet.base.spec import NodePoolSpec
from tests.eks_plan import prod_eks
from tests.helpers import example_config, one, plan_config, planned

NODE_POOL = "gcp:container/nodePool:NodePool"
LT = "aws:ec2/launchTemplate:LaunchTemplate"
NG = "aws:eks/nodeGroup:NodeGroup"


@pytest.fixture(scope="module")
def gke():
    return planned("prod-gke", policies=True)


@pytest.fixture(scope="module")
def gke_variant():
    """prod-gke with a fixed zone, an L4 pool starting with 2 nodes on blue-green upgrades, and an A2 pool with
    compact placement and raw-block local SSDs."""
    config = example_config("prod-gke")
    config["gpufleet:cluster"]["name"] = "lc"
    config["gpufleet:nodePools"][1].update(minNodes=2, maxNodes=4, capacity="on-demand")
    config["gpufleet:nodePools"][1]["gke"] = {"zones": ["us-central1-a"], "upgrade": {"strategy": "blue-green", "soakDuration": "600s"}}
    config["gpufleet:nodePools"].append({
        "name": "a100", "machineType": "a2-highgpu-8g", "maxNodes": 2,
        "gke": {"zones": ["us-central1-b"], "placement": "compact", "localSsd": {"mode": "raw-block", "count": 8}},
    })
    return plan_config(config, stack="lc", policies=False)


def test_gke_gpu_pool_defaults(gke):
    h100 = one(gke, NODE_POOL, "prod-gke-pool-h100-train-pool")
    assert h100.inputs["upgradeSettings"] == {"strategy": "SURGE", "maxSurge": 0, "maxUnavailable": 1}
    assert h100.inputs["management"] == {"autoRepair": True, "autoUpgrade": True}
    assert h100.inputs["nodeConfig"]["ephemeralStorageLocalSsdConfig"] == {"localSsdCount": 16}
    assert set(h100.inputs["nodeConfig"]["linuxNodeConfig"]["sysctls"]) == {"net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"}
    assert "initialNodeCount" not in h100.inputs and "placementPolicy" not in h100.inputs
    # GKE rewrites initialNodeCount on resize; SSD configs would replace a pool created before they were set
    # (cluster-toolkit ignores them too, gke-node-pool main.tf lines 309-316).
    assert h100.ignore_changes == [
        "initialNodeCount", "nodeConfig.ephemeralStorageLocalSsdConfig", "nodeConfig.localNvmeSsdBlockConfig"]
    l4 = one(gke, NODE_POOL, "prod-gke-pool-l4-infer-pool").inputs["nodeConfig"]
    assert "ephemeralStorageLocalSsdConfig" not in l4 and "linuxNodeConfig" not in l4


def test_gke_pool_with_min_nodes_starts_with_them_and_blue_green(gke_variant):
    l4 = one(gke_variant, NODE_POOL, "lc-pool-l4-infer-pool").inputs
    assert l4["initialNodeCount"] == 2 and l4["autoscaling"]["totalMinNodeCount"] == 2
    assert l4["upgradeSettings"] == {
        "strategy": "BLUE_GREEN",
        "blueGreenSettings": {"nodePoolSoakDuration": "600s", "standardRolloutPolicy": {"batchNodeCount": 1}},
    }


def test_gke_compact_placement_and_raw_block_ssds(gke_variant):
    a100 = one(gke_variant, NODE_POOL, "lc-pool-a100-pool").inputs
    assert a100["placementPolicy"] == {"type": "COMPACT"}
    assert a100["nodeConfig"]["localNvmeSsdBlockConfig"] == {"localSsdCount": 8}
    assert "ephemeralStorageLocalSsdConfig" not in a100["nodeConfig"]


def test_node_taints_per_platform():
    pool = NodePoolSpec(name="p", capacity="spot")
    assert [t["value"] for t in node_taints(pool, "gke")] == ["present", "true"]
    assert [t["value"] for t in node_taints(pool, "eks")] == ["true", "true"]


def _user_data(p, name):
    return base64.b64decode(one(p, LT, name).inputs["userData"]).decode()


def test_eks_gpu_groups_raid0_and_update_config():
    p, _ = prod_eks()
    text = _user_data(p, "prod-gpu-pool-h100-train-lt")
    # MIME multi-part with one application/node.eks.aws part holding a NodeConfig (what EKS merges for AL2023).
    head, _, rest = text.partition("\n\n")
    assert 'multipart/mixed; boundary="GPUFLEET"' in head
    part = rest.split("--GPUFLEET")[1].split("\n\n", 1)
    assert part[0].strip() == "Content-Type: application/node.eks.aws"
    node_config = yaml.safe_load(part[1])
    assert node_config == {"apiVersion": "node.eks.aws/v1alpha1", "kind": "NodeConfig",
                           "spec": {"instance": {"localStorage": {"strategy": "RAID0"}}}}
    assert text.rstrip().endswith("--GPUFLEET--")
    # The CPU system group has no instance store and no user data.
    assert "userData" not in one(p, LT, "prod-gpu-pool-system-lt").inputs
    assert one(p, NG, "prod-gpu-pool-h100-train-ng").inputs["updateConfig"] == {"maxUnavailable": 1}


def test_eks_bottlerocket_raid0_is_toml_and_percent_update():
    config = example_config("prod-eks")
    config["gpufleet:cluster"]["name"] = "br"
    pool = config["gpufleet:nodePools"][1]
    pool.update(ami="bottlerocket-nvidia", maxUnavailable="25%")
    config["gpufleet:workloads"]["cudaVersions"] = ["12.8"]
    p = plan_config(config, stack="br", policies=False)
    settings = tomllib.loads(_user_data(p, "br-pool-l4-infer-lt"))["settings"]
    command = settings["bootstrap-commands"]["000-mount-instance-storage"]
    assert command["commands"][0] == ["apiclient", "ephemeral-storage", "init"]
    assert command["commands"][1][:3] == ["apiclient", "ephemeral-storage", "bind"]
    assert command["essential"] is True and command["mode"] == "always"
    assert one(p, NG, "br-pool-l4-infer-ng").inputs["updateConfig"] == {"maxUnavailablePercentage": 25}
    # localStorage: none turns it off.
    config2 = copy.deepcopy(config)
    config2["gpufleet:nodePools"][1]["localStorage"] = "none"
    p2 = plan_config(config2, stack="br", policies=False)
    assert "userData" not in one(p2, LT, "br-pool-l4-infer-lt").inputs
