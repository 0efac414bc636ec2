"""Realistic mistakes the API server refuses by a CRD rule: `gpufleet plan` stops them with the CRD's own check (exit 2),
naming the stack key, or earlier in the spec where it models the rule (the Karpenter cases: both layers shown). Each case: one change to an example stack, the exact message, and the
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


# The Karpenter mistakes below are refused first by the stack spec (gpufleet/base/spec/checks/admission_checks.py and
# value_checks.py, with messages in the stack's terms); the CRD check stays the backstop for what gpufleet emits. Each
# test shows both layers: the spec's refusal, and the CRD refusing the NodePool gpufleet would emit for it.

def _emitted_with(change) -> tuple[list[str], list[str]]:
    """(the CRD check's problems, its warnings) for karpenter-eks's emitted objects after `change(nodepool_inputs)`
    on the l4-spot NodePool: the check as the plan runs it, on an object the spec no longer lets through."""
    import copy
    import dataclasses

    from gpufleet.app.plan.cr_check import check_custom_resources
    from gpufleet.base.spec import load_spec
    from tests.helpers import CHARTS

    config = example_config("karpenter-eks")
    p = plan_config(config, policies=False)
    resources = []
    for r in p.resources:
        if r.type.endswith(":NodePool") and r.name.endswith("l4-spot-nodepool"):
            inputs = copy.deepcopy(r.inputs)
            change(inputs)
            r = dataclasses.replace(r, inputs=inputs)
        resources.append(r)
    problems, warnings = check_custom_resources("test", load_spec("test", config), resources, CHARTS)
    return sorted(str(x) for x in problems), [str(w) for w in warnings]


def test_a_disruption_budget_above_100_percent():
    """karpenter.sh_nodepools.yaml v1.14.1, spec.disruption.budgets[].nodes:
    pattern ^((100|[0-9]{1,2})%|[0-9]+)$."""
    config = example_config("karpenter-eks")
    config["gpufleet:cluster"]["eks"]["autoscaler"]["disruptionBudget"] = "150%"
    (problem,) = _spec_problems(config)
    assert problem.startswith("stack 'test': gpufleet:cluster.eks.autoscaler.disruptionBudget: ")

    def budget(inputs):
        inputs["spec"]["disruption"]["budgets"][0]["nodes"] = "150%"
    assert _emitted_with(budget) == ([
        "stack 'test': gpufleet:cluster.eks.autoscaler.disruptionBudget: NodePool 'l4-spot' field "
        "spec.disruption.budgets[0].nodes: '150%' does not match '^((100|[0-9]{1,2})%|[0-9]+)$' " + KARPENTER
    ], [])


def _spec_problems(config: dict) -> list[str]:
    from gpufleet.base.spec import load_spec

    with pytest.raises(SpecError) as exc:
        load_spec("test", config)
    return sorted(str(p) for p in exc.value.problems)


def _plan_problems(config: dict) -> list[str]:
    with pytest.raises(SpecError) as exc:
        plan_config(config, policies=False)
    return sorted(str(p) for p in exc.value.problems)


def test_a_karpenter_pool_label_in_karpenters_own_domain():
    """`karpenter.sh/do-not-disrupt` is a pod annotation, not a node label. NodePool CRD v1.14.1,
    spec.template.metadata.labels CEL rule: `self.all(x, x in ["karpenter.sh/capacity-type", "karpenter.sh/nodepool"]
    || !x.find("^([^/]+)").endsWith("karpenter.sh"))`, message 'label domain "karpenter.sh" is restricted'."""
    (problem,) = _spec_problems(_karpenter(labels={"karpenter.sh/do-not-disrupt": "true"}))
    assert problem.startswith("stack 'test': gpufleet:nodePools[0].labels: label domain \"karpenter.sh\" is restricted")

    def label(inputs):
        inputs["spec"]["template"]["metadata"]["labels"]["karpenter.sh/do-not-disrupt"] = "true"
    assert _emitted_with(label) == ([
        "stack 'test': gpufleet:nodePools[0].labels: NodePool 'l4-spot' field spec.template.metadata.labels: "
        f'label domain "karpenter.sh" is restricted {KARPENTER}'
    ], [])


def test_a_karpenter_pool_pinning_a_hostname_label():
    """NodePool CRD v1.14.1, spec.template.metadata.labels CEL rule `self.all(x, x != "kubernetes.io/hostname")`."""
    (problem,) = _spec_problems(_karpenter(labels={"kubernetes.io/hostname": "gpu-1"}))
    assert problem.startswith("stack 'test': gpufleet:nodePools[0].labels: label \"kubernetes.io/hostname\" is restricted")

    def label(inputs):
        inputs["spec"]["template"]["metadata"]["labels"]["kubernetes.io/hostname"] = "gpu-1"
    assert _emitted_with(label) == ([
        "stack 'test': gpufleet:nodePools[0].labels: NodePool 'l4-spot' field spec.template.metadata.labels: "
        f'label "kubernetes.io/hostname" is restricted {KARPENTER}'
    ], [])


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


def _nine_tolerations() -> dict:
    """teams with eight more taints on its first pool: a mistake only the CRD check catches (see above)."""
    config = example_config("teams")
    config["gpufleet:nodePools"][0]["taints"] = [
        {"key": f"example.com/t{i}", "value": "x", "effect": "NoSchedule"} for i in range(8)]
    return config


def test_the_cli_refuses_it_with_exit_2_and_one_message(tmp_path):
    path = tmp_path / "Pulumi.teams.yaml"
    path.write_text(yaml.safe_dump({"config": _nine_tolerations()}))
    run = subprocess.run([sys.executable, "-m", "gpufleet.app.cli", "plan", "teams", "--config", str(path)],
                         capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert run.returncode == 2, run.stderr
    assert run.stdout == ""
    assert "Traceback" not in run.stderr
    assert run.stderr.splitlines() == [
        "gpufleet: invalid gpufleet config for stack 'teams' (1 problem):",
        "  - stack 'teams': gpufleet:nodePools[0].taints: ResourceFlavor 'a100-train' field spec.tolerations: "
        f"9 entries, the CRD allows at most 8 {KUEUE_FLAVOR}",
    ]


def test_without_the_chart_archives_the_plan_warns_which_kinds_it_did_not_validate(tmp_path, monkeypatch):
    """GPUFLEET_CHARTS_DIR on an empty directory: the same mistake plans (exit 0), and the plan names every kind it
    could not check, the archive it looked for and how to get it."""
    monkeypatch.setenv("GPUFLEET_CHARTS_DIR", str(tmp_path))
    p = plan_config(_nine_tolerations(), policies=False)
    warnings = [str(w) for w in p.warnings if "CRD" in w.message]
    assert (f"stack 'test': gpufleet:addons.kueue: ClusterQueue, LocalQueue, ResourceFlavor not validated against "
            f"their CRD: chart archive kueue-0.19.2.tgz (versions.KUEUE) is not in {tmp_path}: run `gpufleet charts "
            "fetch`, or set GPUFLEET_CHARTS_DIR to a directory of the pinned chart archives") in warnings


def test_the_kinds_only_gke_installs_are_warned_about_not_skipped():
    from gpufleet.app.plan.engine import plan

    p = plan(example("prod-gke"), evaluate_policies=False)
    assert [str(w) for w in p.warnings if "CRD" in w.message] == [
        "stack 'prod-gke': gpufleet:nodePools (GPUDirect machine types): GKENetworkParamSet, Network not validated "
        "against their CRD: GKE installs this CRD with multi-networking (GPUDirect NICs); Google publishes no CRD to "
        "validate against"
    ]


def test_the_cli_shows_the_warning_and_plans(tmp_path):
    path = tmp_path / "Pulumi.teams.yaml"
    path.write_text(yaml.safe_dump({"config": _nine_tolerations()}))
    empty = tmp_path / "charts"
    empty.mkdir()
    run = subprocess.run([sys.executable, "-m", "gpufleet.app.cli", "plan", "teams", "--config", str(path)],
                         capture_output=True, text=True, cwd=ROOT, timeout=300,
                         env={**os.environ, "GPUFLEET_CHARTS_DIR": str(empty)})
    assert run.returncode == 0, run.stderr
    warnings = run.stdout.split("\nwarnings:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert ("  - stack 'teams': gpufleet:addons.kueue: ClusterQueue, LocalQueue, ResourceFlavor not validated against "
            f"their CRD: chart archive kueue-0.19.2.tgz (versions.KUEUE) is not in {empty}: run `gpufleet charts "
            "fetch`, or set GPUFLEET_CHARTS_DIR to a directory of the pinned chart archives") in warnings
