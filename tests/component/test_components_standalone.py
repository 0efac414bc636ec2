"""The parts without GpuCluster and without a stack file: a k3s and a GKE cluster composed in a plain Python
program from the public API, as a user would (EKS: tests/component/test_byo_program.py)."""

import dataclasses

import pulumi
import pytest

from gpufleet.base.catalog import gcp as gcp_catalog
from gpufleet.components.gke import GkeCluster, GkeClusterArgs, GkeNetwork, GkeNetworkArgs, GkeNodePool, GkeNodePoolArgs
from gpufleet.components.gpu_stack import GpuOperator, GpuOperatorArgs, GpuSharing, GpuSharingArgs, operator_settings
from gpufleet.components.k3s import K3sCluster, K3sClusterArgs, K3sNodePool, K3sNodePoolArgs
from gpufleet.components.workloads import JobSet, JobSetArgs
from gpufleet.base.node_labels import pool_taints
from gpufleet.base.spec import GkeSpec, GpuOperatorSpec, Host, K3sSpec, NodePoolSpec, SharingSpec
from gpufleet.testing import run as run_under_mocks


def find(regs, type_, name):
    found = [r for r in regs if r.type == type_ and r.name == name]
    assert len(found) == 1, f"expected one {type_} {name}, found {[r.name for r in regs if r.type == type_]}"
    return found[0]


@pytest.fixture(scope="module")
def k3s():
    pool = NodePoolSpec(
        name="l4", gpu="L4", gpus_per_node=1, hosts=[Host(name="gpu-1", address="192.0.2.31")],
        sharing=SharingSpec(mode="time-slicing", replicas=4),
    )

    def program():
        control_plane = K3sCluster(
            "lab-k3s",
            K3sClusterArgs(K3sSpec(servers=[Host(name="cp-1", address="192.0.2.10")]), "1.34", pulumi.Output.secret("test-key")),
        )
        gpus = K3sNodePool("lab-pool-l4", K3sNodePoolArgs(pool, control_plane.join))
        access = dataclasses.replace(control_plane.access, ready=[*control_plane.access.ready, gpus])
        operator = GpuOperator(
            "lab-gpu-operator", GpuOperatorArgs(GpuOperatorSpec(), pool_taints(pool), **operator_settings([pool])), access,
        )
        GpuSharing("lab-gpu-sharing", GpuSharingArgs([pool], operator.namespace.metadata["name"]), access)
        JobSet("lab-jobset", JobSetArgs(), access)

    return run_under_mocks(program, stack="lab").registrations


def test_k3s_parts_compose_on_one_cluster_access(k3s):
    pool = find(k3s, "gpufleet:k3s:K3sNodePool", "lab-pool-l4")
    agent = find(k3s, "command:remote:Command", "lab-pool-l4-agent-gpu-1")
    assert agent.parent == pool.urn and agent.revealed["connection"]["host"] == "192.0.2.31"
    assert "stdin" in agent.secret_paths  # the join token travels as a secret
    assert "nvidia.com/gpu=true:NoSchedule" in agent.revealed["stdin"]
    server = find(k3s, "command:remote:Command", "lab-k3s-server-cp-1")
    assert server.parent == find(k3s, "gpufleet:k3s:K3sCluster", "lab-k3s").urn
    provider = find(k3s, "pulumi:providers:kubernetes", "lab-k3s-k8s")
    release = find(k3s, "kubernetes:helm.sh/v3:Release", "lab-gpu-operator-release")
    assert release.provider.startswith(provider.urn)
    values = release.inputs["values"]
    assert values["devicePlugin"]["config"] == {"name": "gpufleet-device-plugin-config", "default": "gpufleet-default"}
    assert {e["name"] for e in values["toolkit"]["env"]} >= {"CONTAINERD_CONFIG", "CONTAINERD_SOCKET"}
    config_map = find(k3s, "kubernetes:core/v1:ConfigMap", "lab-gpu-sharing-device-plugin-config")
    assert config_map.parent == find(k3s, "gpufleet:addons:GpuSharing", "lab-gpu-sharing").urn
    assert "replicas: 4" in config_map.inputs["data"]["l4"]
    jobset = find(k3s, "kubernetes:helm.sh/v3:Release", "lab-jobset-release")
    assert jobset.parent == find(k3s, "gpufleet:addons:JobSet", "lab-jobset").urn
    # Add-ons wait for the hosts to have joined (access.ready).
    assert agent.urn in release.dependencies


@pytest.fixture(scope="module")
def gke():
    spec = GkeSpec(region="us-central1", deletion_protection=False)
    pool = NodePoolSpec(name="l4", machine_type="g2-standard-8", min_nodes=0, max_nodes=3, capacity="spot")

    def program():
        network = GkeNetwork("ml-network", GkeNetworkArgs(spec, "my-project"))
        cluster = GkeCluster("ml-gke", GkeClusterArgs(spec, "ml", "1.34", "my-project", network.ref))
        GkeNodePool(
            "ml-pool-l4",
            GkeNodePoolArgs(pool, gcp_catalog.machine(pool.machine_type), cluster.cluster.id, cluster.location, "my-project"),
        )

    return run_under_mocks(program, stack="ml").registrations


def test_gke_parts_compose_from_a_spec_and_the_catalog(gke):
    vpc = find(gke, "gcp:compute/network:Network", "ml-network-vpc")
    assert vpc.parent == find(gke, "gpufleet:gke:GkeNetwork", "ml-network").urn
    cluster = find(gke, "gcp:container/cluster:Cluster", "ml-gke-cluster")
    assert cluster.inputs["name"] == "ml" and cluster.inputs["project"] == "my-project"
    assert cluster.inputs["removeDefaultNodePool"] is True
    node_pool = find(gke, "gcp:container/nodePool:NodePool", "ml-pool-l4-pool")
    assert node_pool.parent == find(gke, "gpufleet:gke:GkeNodePool", "ml-pool-l4").urn
    assert node_pool.inputs["cluster"].endswith("/clusters/ml")
    assert node_pool.inputs["autoscaling"]["totalMinNodeCount"] == 0
    config = node_pool.inputs["nodeConfig"]
    assert config["spot"] is True and config["machineType"] == "g2-standard-8"
    assert config["guestAccelerators"][0]["type"] == "nvidia-l4" and config["guestAccelerators"][0]["count"] == 1
    assert {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"} in config["taints"]
