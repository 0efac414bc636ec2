"""Component tests (layer 2): GpuSharing ConfigMaps, the GPU Operator values they need, and node labels."""

import pytest
import yaml

from tests.helpers import by_type, dig, example_config, one, parent_of, plan_config, planned

CM = "kubernetes:core/v1:ConfigMap"
RELEASE = "kubernetes:helm.sh/v3:Release"
CMD = "command:remote:Command"


@pytest.fixture(scope="module")
def lab():
    return planned("lab", policies=True)


@pytest.fixture(scope="module")
def custom():
    """MPS on the L4 pool and an explicit MIG map (single strategy) on the H100 pool; no RDMA."""
    config = example_config("lab")
    pools = config["gpufleet:nodePools"]
    pools[0]["sharing"] = {"mode": "mps", "replicas": 8, "renameByDefault": True}
    pools[1]["sharing"] = {"mode": "mig", "profiles": {"3g.40gb": 2}, "strategy": "single"}
    del pools[2]
    del config["gpufleet:cluster"]["name"]  # resources take the stack's name
    return plan_config(config, stack="custom", policies=False)


def _agent_labels(p, name):
    cfg = yaml.safe_load(one(p, CMD, name).revealed["stdin"])
    return dict(label.split("=", 1) for label in cfg["node-label"])


def _operator_values(p, stack):
    return one(p, RELEASE, f"{stack}-gpu-operator-release").inputs["values"]


def sharing_config_maps(p):
    """The plan's ConfigMaps other than node-problem-detector's (gpufleet:k3s:NodeHealth, every k3s stack)."""
    return [r for r in by_type(p, CM) if "gpufleet:k3s:NodeHealth" not in r.urn]


def test_device_plugin_config_map_names_parent_and_entries(lab):
    comp = one(lab, "gpufleet:addons:GpuSharing", "lab-gpu-sharing")
    assert parent_of(lab, comp).name == "lab"
    cm = one(lab, CM, "lab-gpu-sharing-device-plugin-config")
    assert cm.parent == comp.urn
    assert cm.inputs["metadata"] == {"name": "gpufleet-device-plugin-config", "namespace": "gpu-operator"}
    data = {k: yaml.safe_load(v) for k, v in cm.inputs["data"].items()}
    assert data == {
        "gpufleet-default": {"version": "v1", "flags": {"migStrategy": "none"}},
        "l4-shared": {
            "version": "v1",
            "flags": {"migStrategy": "none"},
            "sharing": {"timeSlicing": {
                "renameByDefault": False,
                "failRequestsGreaterThanOne": True,
                "resources": [{"name": "nvidia.com/gpu", "replicas": 4}],
            }},
        },
        "h100-mig": {"version": "v1", "flags": {"migStrategy": "mixed"}},
    }
    # Upstream layouts only: the MIG manager's own layouts serve, no custom mig-parted ConfigMap.
    assert [r.name for r in sharing_config_maps(lab)] == ["lab-gpu-sharing-device-plugin-config"]


def test_gpu_operator_values_point_at_the_sharing_config(lab):
    values = _operator_values(lab, "lab")
    assert dig(values, "devicePlugin.config") == {"name": "gpufleet-device-plugin-config", "default": "gpufleet-default"}
    assert dig(values, "mig.strategy") == "mixed"
    assert values["migManager"] == {"enabled": True}
    assert dig(values, "driver.rdma") == {"enabled": True, "useHostMofed": True}


def test_pool_nodes_carry_their_entry_and_layout(lab):
    l4 = _agent_labels(lab, "lab-pool-l4-shared-agent-l4-1")
    assert l4["nvidia.com/device-plugin.config"] == "l4-shared" and "nvidia.com/mig.config" not in l4
    h100 = _agent_labels(lab, "lab-pool-h100-mig-agent-h100-mig-1")
    assert h100["nvidia.com/device-plugin.config"] == "h100-mig"
    assert h100["nvidia.com/mig.config"] == "all-1g.10gb"
    rdma = _agent_labels(lab, "lab-pool-a100-rdma-agent-a100-rdma-1")
    assert "nvidia.com/device-plugin.config" not in rdma  # not shared: the default entry applies
    assert rdma["gpufleet.io/rdma"] == "true"


def test_existing_nodes_get_their_selectors_patched(lab):
    # k3s applies node-label only at registration: a later sharing change reaches nodes through NodePatch.
    comp = one(lab, "gpufleet:addons:GpuSharing")
    # The pools' own NodePatches (labels and taints of each k3s host, docs/review.md) are the pools'; these are sharing's.
    patches = {r.name: r for r in by_type(lab, "kubernetes:core/v1:NodePatch") if r.parent == comp.urn}
    assert set(patches) == {"lab-gpu-sharing-labels-l4-1", "lab-gpu-sharing-labels-l4-2", "lab-gpu-sharing-labels-h100-mig-1"}
    meta = patches["lab-gpu-sharing-labels-h100-mig-1"].inputs["metadata"]
    assert meta == {
        "name": "h100-mig-1",
        "labels": {"nvidia.com/device-plugin.config": "h100-mig", "nvidia.com/mig.config": "all-1g.10gb"},
        "annotations": {"pulumi.com/patchForce": "true"},
    }


def test_mps_entry_and_custom_mig_parted_config(custom):
    data = {k: yaml.safe_load(v) for k, v in one(custom, CM, "custom-gpu-sharing-device-plugin-config").inputs["data"].items()}
    assert data["l4-shared"] == {
        "version": "v1",
        "flags": {"migStrategy": "none"},
        "sharing": {"mps": {"renameByDefault": True, "resources": [{"name": "nvidia.com/gpu", "replicas": 8}]}},
    }
    assert data["h100-mig"]["flags"] == {"migStrategy": "single"}
    mig = one(custom, CM, "custom-gpu-sharing-mig-parted-config")
    assert mig.parent == one(custom, "gpufleet:addons:GpuSharing").urn
    assert mig.inputs["metadata"] == {"name": "gpufleet-mig-parted-config", "namespace": "gpu-operator"}
    assert yaml.safe_load(mig.inputs["data"]["config.yaml"]) == {
        "version": "v1",
        "mig-configs": {
            "all-disabled": [{"devices": "all", "mig-enabled": False}],
            "gpufleet-h100-mig": [{"devices": "all", "mig-enabled": True, "mig-devices": {"3g.40gb": 2}}],
        },
    }
    values = _operator_values(custom, "custom")
    assert values["migManager"] == {"enabled": True, "config": {"name": "gpufleet-mig-parted-config", "default": "all-disabled"}}
    assert dig(values, "mig.strategy") == "single"
    assert "rdma" not in values["driver"]
    assert _agent_labels(custom, "custom-pool-h100-mig-agent-h100-mig-1")["nvidia.com/mig.config"] == "gpufleet-h100-mig"


def test_no_sharing_no_config_map():
    p = planned("dev", policies=True)
    assert by_type(p, "gpufleet:addons:GpuSharing") == [] and sharing_config_maps(p) == []
    values = _operator_values(p, "dev")
    assert "config" not in values["devicePlugin"] and "mig" not in values and "rdma" not in values["driver"]


def test_capacity_shows_what_each_pool_advertises(lab):
    rows = {c.pool: c for c in lab.capacity}
    assert rows["l4-shared"].advertised == {"nvidia.com/gpu": 16}
    assert rows["l4-shared"].sharing == "4 GPUs x 4 replicas = 16 nvidia.com/gpu (time-slicing)"
    assert rows["h100-mig"].advertised == {"nvidia.com/mig-1g.10gb": 56}
    assert rows["a100-rdma"].advertised == {"nvidia.com/gpu": 8} and not rows["a100-rdma"].shared
