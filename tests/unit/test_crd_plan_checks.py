"""Realistic mistakes the stack spec accepts and the API server refuses: `gpufleet plan` now stops them with the CRD's
own check (exit 2), naming the stack key. Each case: one change to an example stack, the exact message, and the
upstream rule that refuses it (the CRD in the pinned chart archive, ../shared/reference/charts/). Without the
archives the plan warns instead of judging, never silently."""

from __future__ import annotations

import os
import subprocess
import sys

import yaml

import pytest

from gpufleet.base.spec import SpecError
from tests.helpers import ROOT, example, example_config, plan_config

KARPENTER = "(refused by the API server: karpenter.sh/v1 NodePool, CRD of chart karpenter 1.14.1)"
KUEUE_FLAVOR = "(refused by the API server: kueue.x-k8s.io/v1beta2 ResourceFlavor, CRD of chart kueue 0.19.2)"


@pytest.fixture(autouse=True)
def _charts(charts):
    """Every case here needs the pinned chart archives (tests/conftest.py points GPUFLEET_CHARTS_DIR at them)."""


def _karpenter(**pool) -> dict:
    config = example_config("karpenter-eks")
    config["gpufleet:nodePools"][0].update(pool)  # l4-spot
    return config


def test_a_disruption_budget_above_100_percent():
    """karpenter.sh_nodepools.yaml v1.14.1, spec.disruption.budgets[].nodes:
    pattern ^((100|[0-9]{1,2})%|[0-9]+)$ (the spec's own pattern takes any percentage)."""
    config = example_config("karpenter-eks")
    config["gpufleet:cluster"]["eks"]["autoscaler"]["disruptionBudget"] = "150%"
    assert _plan_problems(config) == [
        f"stack 'test': gpufleet:cluster.eks.autoscaler.disruptionBudget: NodePool '{pool}' field "
        "spec.disruption.budgets[0].nodes: '150%' does not match '^((100|[0-9]{1,2})%|[0-9]+)$' " + KARPENTER
        for pool in ("h100-block", "l4-spot")
    ]


def _plan_problems(config: dict) -> list[str]:
    with pytest.raises(SpecError) as exc:
        plan_config(config, policies=False)
    return sorted(str(p) for p in exc.value.problems)


def test_a_karpenter_pool_label_in_karpenters_own_domain():
    """`karpenter.sh/do-not-disrupt` is a pod annotation, not a node label. NodePool CRD v1.14.1,
    spec.template.metadata.labels CEL rule: `self.all(x, x in ["karpenter.sh/capacity-type", "karpenter.sh/nodepool"]
    || !x.find("^([^/]+)").endsWith("karpenter.sh"))`, message 'label domain "karpenter.sh" is restricted'."""
    assert _plan_problems(_karpenter(labels={"karpenter.sh/do-not-disrupt": "true"})) == [
        "stack 'test': gpufleet:nodePools[0].labels: NodePool 'l4-spot' field spec.template.metadata.labels: "
        f'label domain "karpenter.sh" is restricted {KARPENTER}'
    ]


def test_a_karpenter_pool_pinning_a_hostname_label():
    """NodePool CRD v1.14.1, spec.template.metadata.labels CEL rule `self.all(x, x != "kubernetes.io/hostname")`."""
    assert _plan_problems(_karpenter(labels={"kubernetes.io/hostname": "gpu-1"})) == [
        "stack 'test': gpufleet:nodePools[0].labels: NodePool 'l4-spot' field spec.template.metadata.labels: "
        f'label "kubernetes.io/hostname" is restricted {KARPENTER}'
    ]


def test_more_taints_than_a_kueue_flavor_can_tolerate():
    """kueue.x-k8s.io_resourceflavors.yaml v0.19.2, spec.tolerations: maxItems 8. gpufleet's flavor tolerates the
    pool's taints: the GPU taint plus eight of the user's is nine."""
    config = example_config("teams")
    config["gpufleet:nodePools"][0]["taints"] = [
        {"key": f"example.com/t{i}", "value": "x", "effect": "NoSchedule"} for i in range(8)]
    assert _plan_problems(config) == [
        "stack 'test': gpufleet:nodePools[0].taints: ResourceFlavor 'a100-train' field spec.tolerations: "
        f"9 entries, the CRD allows at most 8 {KUEUE_FLAVOR}"
    ]


def test_a_taint_without_a_value_plans_on_karpenter():
    """Valid but unusual: `dedicated:NoSchedule` has no value (Kubernetes taints allow it). gpufleet put `value: ""`
    on the NodePool, whose CRD taint value pattern refuses it; the check found it, the component now leaves it out."""
    p = plan_config(_karpenter(taints=[{"key": "dedicated", "effect": "NoSchedule"}]), policies=False)
    pool = next(r for r in p.resources if r.type.endswith(":NodePool") and r.name.endswith("l4-spot-nodepool"))
    assert {"key": "dedicated", "effect": "NoSchedule"} in pool.inputs["spec"]["template"]["spec"]["taints"]


def test_the_cli_refuses_it_with_exit_2_and_one_message(tmp_path):
    config = _karpenter(labels={"kubernetes.io/hostname": "gpu-1"})
    path = tmp_path / "Pulumi.karpenter-eks.yaml"
    path.write_text(yaml.safe_dump({"config": config}))
    run = subprocess.run([sys.executable, "-m", "gpufleet.app.cli", "plan", "karpenter-eks", "--config", str(path)],
                         capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert run.returncode == 2, run.stderr
    assert run.stdout == ""
    assert "Traceback" not in run.stderr
    assert run.stderr.splitlines() == [
        "gpufleet: invalid gpufleet config for stack 'karpenter-eks' (1 problem):",
        "  - stack 'karpenter-eks': gpufleet:nodePools[0].labels: NodePool 'l4-spot' field "
        f'spec.template.metadata.labels: label "kubernetes.io/hostname" is restricted {KARPENTER}'.replace("'test'", "'karpenter-eks'"),
    ]


def test_without_the_chart_archives_the_plan_warns_which_kinds_it_did_not_validate(tmp_path, monkeypatch):
    """GPUFLEET_CHARTS_DIR on an empty directory: the same mistake plans (exit 0), and the plan names every kind it
    could not check, the archive it looked for and how to get it."""
    monkeypatch.setenv("GPUFLEET_CHARTS_DIR", str(tmp_path))
    p = plan_config(_karpenter(labels={"kubernetes.io/hostname": "gpu-1"}), policies=False)
    assert [str(w) for w in p.warnings if "CRD" in w.message] == [
        f"stack 'test': gpufleet:nodePools: EC2NodeClass, NodePool not validated against their CRD: chart archive "
        f"karpenter-1.14.1.tgz (versions.KARPENTER) is not in {tmp_path}: run `gpufleet charts fetch`, or set "
        "GPUFLEET_CHARTS_DIR to a directory of the pinned chart archives"
    ]


def test_the_kinds_only_gke_installs_are_warned_about_not_skipped():
    from gpufleet.app.plan.engine import plan

    p = plan(example("prod-gke"), evaluate_policies=False)
    assert [str(w) for w in p.warnings if "CRD" in w.message] == [
        "stack 'prod-gke': gpufleet:nodePools (GPUDirect machine types): GKENetworkParamSet, Network not validated "
        "against their CRD: GKE installs this CRD with multi-networking (GPUDirect NICs); Google publishes no CRD to "
        "validate against"
    ]


def test_the_cli_shows_the_warning_and_plans(tmp_path):
    path = tmp_path / "Pulumi.karpenter-eks.yaml"
    path.write_text(yaml.safe_dump({"config": _karpenter(labels={"kubernetes.io/hostname": "gpu-1"})}))
    empty = tmp_path / "charts"
    empty.mkdir()
    run = subprocess.run([sys.executable, "-m", "gpufleet.app.cli", "plan", "karpenter-eks", "--config", str(path)],
                         capture_output=True, text=True, cwd=ROOT, timeout=300,
                         env={**os.environ, "GPUFLEET_CHARTS_DIR": str(empty)})
    assert run.returncode == 0, run.stderr
    warnings = run.stdout.split("\nwarnings:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert ("  - stack 'karpenter-eks': gpufleet:nodePools: EC2NodeClass, NodePool not validated against their CRD: "
            f"chart archive karpenter-1.14.1.tgz (versions.KARPENTER) is not in {empty}: run `gpufleet charts fetch`, "
            "or set GPUFLEET_CHARTS_DIR to a directory of the pinned chart archives") in warnings
