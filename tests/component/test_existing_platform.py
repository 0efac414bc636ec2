"""The existing-cluster platform (issue 40): its spec checks, what it registers on the cluster, and its cost."""

from __future__ import annotations

import copy
import json
import subprocess
import sys

import pytest

from gpufleet.base.catalog import gpu_clouds
from tests.helpers import ROOT, SECRET, by_type, example_config, one, plan_config, spec_problems

STACK = "existing-coreweave"


def config(**pool_changes) -> dict:
    cfg = copy.deepcopy(example_config(STACK))
    cfg["gpufleet:nodePools"][0].update(pool_changes)
    return cfg


@pytest.fixture(scope="module")
def plan():
    return plan_config(example_config(STACK), STACK)


def test_the_cluster_is_a_provider_on_the_secret_kubeconfig_and_nothing_in_a_cloud(plan):
    cluster = one(plan, "gpufleet:existing:ExistingCluster")
    provider = one(plan, "pulumi:providers:kubernetes")
    assert provider.name == "cw-prod-cluster-k8s" and provider.parent == cluster.urn
    assert not [r for r in plan.resources if r.type.startswith(("aws:", "gcp:", "command:", "random:", "gpufleet:k3s:"))]
    for module in ("pulumi_aws", "pulumi_gcp", "pulumi_command"):
        assert module not in sys.modules or not any(r.type.startswith(module.split("_")[1]) for r in plan.resources)


def test_named_nodes_get_gpufleets_pool_labels_and_sharing_selectors(plan):
    patches = {r.name: r.inputs["metadata"] for r in by_type(plan, "kubernetes:core/v1:NodePatch")}
    assert set(patches) == {f"cw-prod-pool-h100-train-labels-g8h100-node-{i}" for i in (1, 2)} | {
        f"cw-prod-pool-l40s-infer-labels-g8l40s-node-{i}" for i in (1, 2)}
    h100 = patches["cw-prod-pool-h100-train-labels-g8h100-node-1"]
    assert h100["name"] == "g8h100-node-1"
    assert h100["labels"] == {"gpufleet.io/pool": "h100-train", "gpufleet.io/gpu": "true",
                              "gpufleet.io/capacity-type": "on-demand", "gpufleet.io/gpu-model": "H100-80GB"}
    l40s = patches["cw-prod-pool-l40s-infer-labels-g8l40s-node-2"]["labels"]
    assert l40s["nvidia.com/device-plugin.config"] == "l40s-infer"  # the time-slicing entry the device plugin reads


def test_the_gpu_operator_leaves_the_preinstalled_driver_alone(plan):
    values = one(plan, "kubernetes:helm.sh/v3:Release", "cw-prod-gpu-operator-release").inputs["values"]
    assert values["driver"]["enabled"] is False


def test_capacity_and_cost_come_from_the_catalog_offering_with_its_source(plan):
    caps = {c.pool: c for c in plan.capacity}
    assert (caps["h100-train"].gpu, caps["h100-train"].gpus_per_node) == ("H100-80GB", 8)
    assert caps["l40s-infer"].advertised == {"nvidia.com/gpu": 32}  # 8 L40S x 4 time-slicing replicas
    items = {i.name: i for i in plan.cost.items}
    h100 = items["GPU pool h100-train (H100-80GB)"]
    assert h100.unit_hourly == 49.24 and (h100.hourly_min, h100.hourly_max) == (98.48, 98.48)
    assert "https://www.coreweave.com/pricing" in h100.source and "read 2026-09-20" in h100.source
    overhead = items["cluster beyond its GPU pools (existing.overheadPerHour)"]
    assert overhead.unit_hourly == 6.42


def test_a_contract_price_per_gpu_hour_overrides_the_list_price():
    cfg = config()
    cfg["gpufleet:nodePools"][0]["existing"] = {**cfg["gpufleet:nodePools"][0]["existing"], "pricePerGpuHour": 2.5}
    items = {i.name: i for i in plan_config(cfg, STACK, policies=False).cost.items}
    h100 = items["GPU pool h100-train (H100-80GB)"]
    assert h100.unit_hourly == 20.0 and "pricePerGpuHour 2.5 declared in the stack" in h100.source


def test_a_pool_without_offering_or_price_is_unpriced_not_free():
    cfg = config(gpu="H100-80GB", gpusPerNode=8)
    cfg["gpufleet:nodePools"][0]["existing"] = {"nodeSelector": {"node.kubernetes.io/instance-type": "x"}}
    cost = plan_config(cfg, STACK, policies=False).cost
    assert "h100-train" in cost.unpriced_pools


def test_an_inline_kubeconfig_is_refused_naming_the_key_and_never_echoed():
    cfg = {**example_config(STACK), "gpufleet:kubeconfig": "apiVersion: v1\nusers: [{user: {token: s3cr3t}}]"}
    problems = spec_problems(cfg, STACK)
    assert problems == [
        "stack 'existing-coreweave': gpufleet:kubeconfig: must be a secret, not inline in the stack file (it holds the "
        "cluster's credentials): `pulumi config rm gpufleet:kubeconfig`, then `pulumi config set --secret "
        "gpufleet:kubeconfig < kubeconfig`"]
    assert "s3cr3t" not in "".join(problems)


def test_a_missing_kubeconfig_is_refused():
    cfg = {k: v for k, v in example_config(STACK).items() if k != "gpufleet:kubeconfig"}
    assert spec_problems(cfg, STACK) == [
        "stack 'existing-coreweave': gpufleet:kubeconfig: required for platform existing: set it with "
        "`pulumi config set --secret gpufleet:kubeconfig < kubeconfig`"]


def test_keys_that_create_nodes_are_refused_with_what_to_do():
    cfg = config(hosts=[{"name": "h1", "address": "192.0.2.1"}], maxUnavailable=2)
    problems = spec_problems(cfg, STACK)
    assert ("stack 'existing-coreweave': gpufleet:nodePools[0].hosts: not used on platform existing: k3s hosts joined "
            "over SSH; gpufleet creates no nodes on a cluster it does not own, so remove it") in problems
    assert any(p.startswith("stack 'existing-coreweave': gpufleet:nodePools[0].maxUnavailable: not used on platform "
                            "existing") for p in problems)
    cfg = config(instanceType="p5.48xlarge")
    assert spec_problems(cfg, STACK) == [
        "stack 'existing-coreweave': gpufleet:nodePools[0].instanceType: not used on existing: eks pools only; remove it"]


def test_an_unknown_offering_lists_the_catalogs():
    cfg = config()
    cfg["gpufleet:nodePools"][0]["existing"] = {"nodeSelector": {"a": "b"}, "offering": "oracle/bm-gpu-h100-8"}
    (problem,) = spec_problems(cfg, STACK)
    assert "gpufleet:nodePools[0].existing.offering: 'oracle/bm-gpu-h100-8': unknown GPU cloud 'oracle' " \
           "(allowed: coreweave, lambda, nebius;" in problem


def test_an_offering_and_a_different_gpu_disagree():
    assert spec_problems(config(gpu="A100-80GB"), STACK) == [
        "stack 'existing-coreweave': gpufleet:nodePools[0].gpu: offering coreweave/h100-8x has H100-80GB; leave gpu out "
        "or make it agree (got 'A100-80GB')"]


def test_a_pool_needs_its_node_selector():
    cfg = config()
    del cfg["gpufleet:nodePools"][0]["existing"]
    (problem,) = spec_problems(cfg, STACK)
    assert problem.startswith("stack 'existing-coreweave': gpufleet:nodePools[0].existing: required on platform existing")


def test_storage_and_other_platforms_blocks_are_refused():
    cfg = {**example_config(STACK), "gpufleet:storage": {"nfs": {"server": "192.0.2.5", "share": "/export"}}}
    assert any("gpufleet:storage.nfs: not used on existing" in p for p in spec_problems(cfg, STACK))


def test_every_catalog_offering_has_a_known_gpu_a_price_and_a_dated_source():
    from gpufleet.base import catalog

    for provider in gpu_clouds.providers():
        for name in gpu_clouds.offerings(provider):
            o = gpu_clouds.offering(provider, name)
            assert o.gpu in catalog.gpu_models() and o.gpus >= 1 and o.node_hour > 0, (provider, name)
            assert o.source.startswith("https://") and f"read {o.as_of}" in o.source, (provider, name)


def test_the_cli_exits_2_without_a_traceback_on_bad_input(tmp_path):
    cfg = config()
    cfg["gpufleet:nodePools"][0]["existing"]["nodeSelector"] = {"bad key!": "x"}
    path = tmp_path / "Pulumi.bad.yaml"
    path.write_text(json.dumps({"config": cfg}))
    proc = subprocess.run([str(ROOT / ".venv" / "bin" / "gpufleet"), "plan", "bad", "--config", str(path)],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "stack 'bad': gpufleet:nodePools[0].existing.nodeSelector: label key 'bad key!'" in proc.stderr
