"""Component tests (layer 2): K3sCluster and K3sNodePool under Pulumi's mocks."""

import yaml

from gpufleet.base import versions
from tests.helpers import by_type, one, parent_of, planned

CMD = "command:remote:Command"


def _config(r):
    return yaml.safe_load(r.revealed["stdin"])


def test_dev_children_types_names_and_parents():
    p = planned("dev", policies=True)
    cluster = one(p, "gpufleet:k3s:K3sCluster", "dev-k3s")
    assert parent_of(p, cluster).name == "dev"
    for name in ("dev-k3s-token", "dev-k3s-server-cp-1", "dev-k3s-agent-cpu-1", "dev-k3s-kubeconfig", "dev-k3s-k8s"):
        child = next(r for r in p.resources if r.name == name)
        assert child.parent == cluster.urn, name
    pool = one(p, "gpufleet:k3s:K3sNodePool", "dev-pool-l4")
    agent = one(p, CMD, "dev-pool-l4-agent-gpu-l4-1")
    assert agent.parent == pool.urn


def test_single_server_config_and_install_script():
    p = planned("dev", policies=True)
    server = one(p, CMD, "dev-k3s-server-cp-1")
    cfg = _config(server)
    assert cfg["node-name"] == "cp-1"
    assert cfg["tls-san"] == ["192.0.2.10"]
    assert cfg["disable"] == ["traefik"]
    assert cfg["token"] == "plan-placeholder-password"
    assert "cluster-init" not in cfg and "server" not in cfg
    release = versions.k3s_release("1.36")
    script = server.inputs["create"]
    assert f"INSTALL_K3S_VERSION='{release}'" in script
    assert f"INSTALL_K3S_EXEC='server'" in script
    assert versions.k3s_install_script_url("1.36") in script and "get.k3s.io" not in script
    assert server.inputs["update"] == script, "an update must re-run the idempotent script, not replace the node"
    assert "k3s-uninstall.sh" in server.inputs["delete"]


def test_token_ssh_key_and_kubeconfig_are_secret():
    p = planned("dev", policies=True)
    for r in by_type(p, CMD):
        assert r.inputs["connection"] == "[secret]", r.name  # carries the SSH private key
        if "stdin" in r.inputs:
            assert r.inputs["stdin"] == "[secret]", r.name  # carries the join token
    assert one(p, "random:index/randomPassword:RandomPassword").inputs["special"] is False
    assert one(p, "pulumi:providers:kubernetes").inputs["kubeconfig"] == "[secret]"
    assert p.outputs["kubeconfig"] == "[secret]"


def test_kubeconfig_points_at_the_api_address():
    p = planned("ha", policies=True)
    kubeconfig = one(p, "pulumi:providers:kubernetes").revealed["kubeconfig"]
    assert "https://198.51.100.5:6443" in kubeconfig and "127.0.0.1" not in kubeconfig


def test_ha_servers_embedded_etcd_and_join_order():
    p = planned("ha", policies=True)
    first = _config(one(p, CMD, "ha-k3s-server-cp-1"))
    second = _config(one(p, CMD, "ha-k3s-server-cp-2"))
    assert first["cluster-init"] is True and "server" not in first
    assert second["server"] == "https://198.51.100.11:6443" and "cluster-init" not in second
    assert first["node-taint"] == ["CriticalAddonsOnly=true:NoExecute"]
    assert first["tls-san"] == ["198.51.100.5", "k8s.example.com"]


def test_gpu_agents_join_with_labels_and_gpu_taint():
    p = planned("dev", policies=True)
    cfg = _config(one(p, CMD, "dev-pool-a100-agent-gpu-a100-1"))
    assert cfg["server"] == "https://192.0.2.10:6443"
    assert cfg["node-name"] == "gpu-a100-1"
    assert cfg["node-taint"] == ["nvidia.com/gpu=true:NoSchedule"]
    assert set(cfg["node-label"]) == {
        "gpufleet.io/pool=a100",
        "gpufleet.io/gpu=true",
        "gpufleet.io/gpu-model=A100-80GB",
        "gpufleet.io/capacity-type=on-demand",
    }
    assert "INSTALL_K3S_EXEC='agent'" in one(p, CMD, "dev-pool-a100-agent-gpu-a100-1").inputs["create"]
    cpu = _config(one(p, CMD, "dev-k3s-agent-cpu-1"))
    assert cpu["node-taint"] == [] and cpu["node-label"] == []
