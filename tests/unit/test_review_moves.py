"""Kubernetes version moves the cloud refuses (gpufleet/app/review/moves.py), per rule and per platform, at the edges:
the last allowed move passes, the first refused one is named with what works instead and its source."""

from __future__ import annotations

import pytest

from gpufleet.app.review.moves import refused_from_deployed, refused_moves
from gpufleet.base import platforms
from gpufleet.base.platforms.contract.versions import minor

# One resource per part, as the plan JSON carries it (type token, inputs camelCase).
CP = {
    "eks": ("aws:eks/cluster:Cluster", "version"),
    "gke": ("gcp:container/cluster:Cluster", "minMasterVersion"),
    "aks": ("azure-native:containerservice:ManagedCluster", "kubernetesVersion"),
}
POOL = {
    "eks": ("aws:eks/nodeGroup:NodeGroup", "version"),
    "gke": ("gcp:container/nodePool:NodePool", "version"),
    "aks": ("azure-native:containerservice:AgentPool", "orchestratorVersion"),
}


def cloud_cp(platform: str, version: str) -> dict:
    t, key = CP[platform]
    return {"urn": f"urn:{platform}:cluster", "type": t, "name": "c-cluster", "inputs": {"name": "c", "resourceName": "c", key: version}}


def cloud_pool(platform: str, version: str) -> dict:
    t, key = POOL[platform]
    return {"urn": f"urn:{platform}:pool", "type": t, "name": "c-pool-gpu", "inputs": {"name": "gpu", "nodeGroupName": "gpu", "agentPoolName": "gpu",
                                                                                      key: version}}


def k3s_host(name: str, role: str, release: str) -> dict:
    script = f"curl -sfL https://get.k3s.io | INSTALL_K3S_VERSION='{release}' INSTALL_K3S_EXEC='{role}' sh -s -\n"
    return {"urn": f"urn:k3s:{name}", "type": "command:remote:Command", "name": name,
            "inputs": {"connection": "[secret]", "create": script}}


def moves(base: list[dict], head: list[dict]) -> list[tuple[str, str, str, str]]:
    return [(m.part, m.name, m.before, m.after) for m in refused_moves(base, head)]


def test_minor_reads_every_way_platforms_write_a_version():
    assert [minor(v) for v in ("1.35", "1.35.2-gke.1000", "v1.36.2+k3s1", "1.9", "latest", "", None, "v1")] == [
        (1, 35), (1, 35), (1, 36), (1, 9), None, None, None, None]


@pytest.mark.parametrize("platform", ["eks", "gke", "aks"])
def test_a_cloud_control_plane_moves_one_minor_up_and_never_down(platform):
    assert moves([cloud_cp(platform, "1.33")], [cloud_cp(platform, "1.34")]) == []  # the edge that works
    assert moves([cloud_cp(platform, "1.35")], [cloud_cp(platform, "1.35.4")]) == []  # a patch is no move
    two = refused_moves([cloud_cp(platform, "1.33")], [cloud_cp(platform, "1.35")])
    assert [(m.part, m.name, m.before, m.after) for m in two] == [("control plane", "c", "1.33", "1.35")]
    assert two[0].why == f"moves 2 minors at once; {platform} moves 1 at a time"
    assert two[0].instead.startswith('1.33 → 1.34 first: set cluster.kubernetesVersion: "1.34"')
    assert two[0].stack_key == "gpufleet:cluster.kubernetesVersion"
    down = refused_moves([cloud_cp(platform, "1.35")], [cloud_cp(platform, "1.34")])
    assert [(m.before, m.after, m.why) for m in down] == [("1.35", "1.34", f"is a downgrade, which {platform} refuses")]
    assert down[0].instead.startswith('keep cluster.kubernetesVersion: "1.35"; a lower minor needs a new cluster')


@pytest.mark.parametrize("platform, source", [
    ("eks", "docs.aws.amazon.com/eks/latest/userguide/update-cluster.html"),
    ("gke", "docs.cloud.google.com/kubernetes-engine/docs/how-to/upgrading-a-cluster"),
    ("aks", "learn.microsoft.com/azure/aks/supported-kubernetes-versions"),
    ("k3s", "docs.k3s.io/upgrades/roll-back"),
])
def test_every_downgrade_rule_names_its_source(platform, source):
    rules = [r for r in platforms.get(platform).versions.move_rules if r.kind == "no-downgrade"]
    assert len(rules) == 1 and source in rules[0].source


@pytest.mark.parametrize("platform, allowed", [("eks", 3), ("gke", 2), ("aks", 2), ("k3s", 3)])
def test_every_platform_declares_its_node_skew_with_a_source(platform, allowed):
    skew = [r for r in platforms.get(platform).versions.move_rules if r.kind == "skew"]
    assert [r.limit for r in skew] == [allowed]
    assert skew[0].source


@pytest.mark.parametrize("platform, allowed", [("eks", 3), ("gke", 2), ("aks", 2)])
def test_a_cloud_node_pool_stays_within_the_control_planes_skew(platform, allowed):
    cp = cloud_cp(platform, "1.36")
    edge = f"1.{36 - allowed}"
    assert moves([], [cp, cloud_pool(platform, edge)]) == []
    beyond = f"1.{35 - allowed}"
    found = refused_moves([], [cp, cloud_pool(platform, beyond)])
    assert [(m.part, m.name, m.before, m.after) for m in found] == [("node pool", "gpu", "1.36", beyond)]
    assert found[0].instead == f"move the pool to {edge} or later before the control plane goes to 1.36"
    newer = refused_moves([], [cloud_cp(platform, "1.35"), cloud_pool(platform, "1.36")])
    assert [m.why for m in newer] == ["puts the node pool at 1.36, newer than the control plane (1.35)"]
    assert newer[0].instead == "move the control plane to 1.36 first, then the pool in a later change"


def test_aks_upgrading_cluster_and_pools_together_one_minor_is_fine():
    base = [cloud_cp("aks", "1.34"), cloud_pool("aks", "1.34")]
    assert moves(base, [cloud_cp("aks", "1.35"), cloud_pool("aks", "1.35")]) == []


def test_k3s_servers_are_never_downgraded_and_move_one_minor_at_a_time():
    ok = [k3s_host("dev-k3s-server-cp-1", "server", "v1.35.4+k3s1"), k3s_host("dev-agent-gpu-1", "agent", "v1.35.4+k3s1")]
    up = [k3s_host("dev-k3s-server-cp-1", "server", "v1.36.2+k3s1"), k3s_host("dev-agent-gpu-1", "agent", "v1.36.2+k3s1")]
    assert moves(ok, up) == []
    down = refused_moves(up, ok)
    assert [(m.part, m.name, m.before, m.after) for m in down] == [("control plane", "dev-k3s-server-cp-1", "1.36", "1.35")]
    assert "restore the etcd snapshot or SQLite copy taken on the lower minor" in down[0].instead
    two = [k3s_host("dev-k3s-server-cp-1", "server", "v1.34.1+k3s1")]
    assert moves(two, [up[0]]) == [("control plane", "dev-k3s-server-cp-1", "1.34", "1.36")]
    # an agent is a node: downgrading only agents is within the skew, not a server move
    assert moves(up, [up[0], ok[1]]) == []


def test_k3s_agents_may_not_run_newer_than_the_servers():
    head = [k3s_host("s", "server", "v1.35.4+k3s1"), k3s_host("a", "agent", "v1.36.2+k3s1")]
    assert moves([], head) == [("node pool", "a", "1.35", "1.36")]


def test_the_deployed_version_is_judged_like_a_base_plan():
    head = [cloud_cp("eks", "1.35"), cloud_pool("eks", "1.35")]
    assert refused_from_deployed({"platform": "eks", "kubernetesVersion": "1.34"}, head) == []
    found = refused_from_deployed({"platform": "eks", "kubernetesVersion": "1.33"}, head)
    assert [(m.before, m.after) for m in found] == [("1.33", "1.35")]
    assert refused_from_deployed({"platform": "eks", "kubernetesVersion": "1.36"}, head)[0].why == (
        "is a downgrade, which eks refuses")
    assert refused_from_deployed({}, head) == []  # never deployed: nothing to judge
    assert refused_from_deployed({"platform": "gke", "kubernetesVersion": "1.30"}, head) == []  # another platform


def test_pools_that_follow_the_control_plane_are_not_judged():
    """gpufleet sets no EKS node group or GKE pool version: they follow the cluster (their AMI release or auto-upgrade)."""
    pool = cloud_pool("eks", "1.35")
    del pool["inputs"]["version"]
    assert moves([cloud_cp("eks", "1.34")], [cloud_cp("eks", "1.35"), pool]) == []
