"""Component tests (layer 2): k3s nodes get their labels and taints through the Kubernetes API too (a NodePatch per
GPU host), since k3s applies `node-label`/`node-taint` only when a node registers (docs.k3s.io/cli/agent)."""

from __future__ import annotations

from gpufleet.base.labels import GPU_TAINT_KEY
from tests.helpers import example_config, one, plan_config, planned

PATCH = "kubernetes:core/v1:NodePatch"
CMD = "command:remote:Command"
DEV_L4_LABELS = {"gpufleet.io/pool": "l4", "gpufleet.io/gpu": "true", "gpufleet.io/gpu-model": "L4",
                 "gpufleet.io/capacity-type": "on-demand"}


def test_each_gpu_agent_gets_a_node_patch_with_its_labels_and_taints_after_it_registers():
    p = planned("dev", policies=True)
    patches = sorted(r.name for r in p.resources if r.type == PATCH)
    assert patches == ["dev-pool-a100-node-gpu-a100-1", "dev-pool-l4-node-gpu-l4-1"]
    patch = one(p, PATCH, "dev-pool-l4-node-gpu-l4-1")
    assert patch.parent == one(p, "gpufleet:k3s:K3sNodePool", "dev-pool-l4").urn
    assert patch.provider.startswith(one(p, "pulumi:providers:kubernetes", "dev-k3s-k8s").urn)
    assert patch.inputs["metadata"] == {"name": "gpu-l4-1", "labels": DEV_L4_LABELS,
                                        "annotations": {"pulumi.com/patchForce": "true"}}
    assert patch.inputs["spec"] == {"taints": [{"key": GPU_TAINT_KEY, "value": "true", "effect": "NoSchedule"}]}
    assert one(p, CMD, "dev-pool-l4-agent-gpu-l4-1").urn in patch.dependencies


def test_a_server_that_is_also_a_gpu_host_gets_its_labels_but_keeps_its_registered_taints():
    config = example_config("dev")
    config["gpufleet:nodePools"][0]["hosts"] = [{"name": "cp-1", "address": "192.0.2.10"}]
    p = plan_config(config, stack="dev", policies=False)
    patch = one(p, PATCH, "dev-pool-l4-node-cp-1")
    assert patch.inputs["metadata"]["labels"] == DEV_L4_LABELS
    assert "spec" not in patch.inputs  # spec.taints is an atomic list: the server's (maybe CriticalAddonsOnly) stay
    assert one(p, CMD, "dev-k3s-server-cp-1").urn in patch.dependencies
    assert not [r for r in p.resources if r.type == CMD and r.name.endswith("agent-cp-1")]
