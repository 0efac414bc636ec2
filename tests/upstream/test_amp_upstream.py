"""Upstream-format tests of the amp metrics backend: the AMP resources' inputs are the pulumi-aws provider's own
(re-registered through the real SDK classes, generated from the provider schema, they reach the monitor unchanged;
an unknown or renamed input raises), the rules file is the Prometheus rules-file format AMP takes (YAML with
`groups`, every expression parsed by a real PromQL parser and reading only metrics the exporters publish), and the
KEDA values gpufleet sets for amp exist in the pinned chart."""

from __future__ import annotations

import tarfile

import pulumi
import pytest
import yaml
from pulumi.runtime import settings as runtime_settings
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

promql = pytest.importorskip("promql_parser", reason="promql-parser (dev dependency) is not installed")

from gpufleet.base import versions  # noqa: E402
from gpufleet.components.observability import dcgm_metrics  # noqa: E402
from gpufleet.app.plan.mocks import PlanMocks, RecordingMonitor  # noqa: E402
from tests.amp_plan import amp_existing_workspace, amp_teams  # noqa: E402
from tests.helm_values import key_paths  # noqa: E402
from tests.helpers import by_type, one  # noqa: E402
from tests.policy.test_fixture_shapes import snake, to_python  # noqa: E402
from tests.upstream.test_observability_upstream import KUBE_STATE_METRICS, _metric_names  # noqa: E402
from gpufleet.base.versions import chart_name_of

AMP_TYPES = ("aws:amp/workspace:Workspace", "aws:amp/scraper:Scraper", "aws:amp/ruleGroupNamespace:RuleGroupNamespace")


def _sdk_class(type_: str):
    import pulumi_aws as aws

    return {"aws:amp/workspace:Workspace": aws.amp.Workspace, "aws:amp/scraper:Scraper": aws.amp.Scraper,
            "aws:amp/ruleGroupNamespace:RuleGroupNamespace": aws.amp.RuleGroupNamespace}[type_]


def _register(cls, inputs: dict) -> dict:
    monitor = RecordingMonitor(PlanMocks())
    runtime_settings.ROOT.set(None)
    pulumi.runtime.set_mocks(PlanMocks(), project="gpufleet", stack="amp-shapes", preview=False, monitor=monitor)
    args = {snake(k): to_python(v, snake(k)) for k, v in inputs.items()}
    _sync_await(run_pulumi_func(lambda: cls("subject", **args)))
    (reg,) = [r for r in monitor.registrations if r.custom]
    return reg.inputs


@pytest.mark.parametrize("plan", [amp_teams, amp_existing_workspace], ids=["new-workspace", "existing-workspace"])
def test_amp_inputs_are_the_providers_own(plan):
    found = [r for r in plan().resources if r.type in AMP_TYPES]
    assert {r.type for r in found} >= {"aws:amp/scraper:Scraper", "aws:amp/ruleGroupNamespace:RuleGroupNamespace"}
    for r in found:
        got = _register(_sdk_class(r.type), r.inputs)
        assert got == r.inputs, r.name


def test_scraper_requires_what_the_provider_requires():
    """ScraperSourceEks: cluster_arn and subnet_ids are required (pulumi-aws amp/_inputs.py)."""
    import inspect

    import pulumi_aws as aws

    params = inspect.signature(aws.amp.ScraperSourceEksArgs.__init__).parameters
    required = {n for n, p in params.items() if n != "__self__" and p.default is inspect.Parameter.empty}
    assert required == {"cluster_arn", "subnet_ids"}
    eks = one(amp_teams(), "aws:amp/scraper:Scraper").inputs["source"]["eks"]
    assert {"clusterArn", "subnetIds", "securityGroupIds"} == set(eks)


@pytest.mark.parametrize("plan", [amp_teams, amp_existing_workspace], ids=["teams-eks", "prod-eks"])
def test_rules_file_parses_and_reads_only_known_metrics(plan):
    """AMP API reference, RuleGroupsNamespaceData: a Prometheus rules file (`groups:` of named groups of rules)."""
    data = yaml.safe_load(one(plan(), "aws:amp/ruleGroupNamespace:RuleGroupNamespace").inputs["data"])
    assert set(data) == {"groups"}
    names = [g["name"] for g in data["groups"]]
    assert len(names) == len(set(names)) and all(set(g) == {"name", "rules"} for g in data["groups"])
    allowed = dcgm_metrics.exported() | KUBE_STATE_METRICS
    problems, seen = [], set()
    for group in data["groups"]:
        for rule in group["rules"]:
            assert set(rule) == {"alert", "expr", "for", "labels", "annotations"}, rule["alert"]
            try:
                metrics = _metric_names(promql.parse(rule["expr"]), set())
            except ValueError as exc:
                problems.append(f"{rule['alert']}: does not parse: {exc}")
                continue
            seen |= metrics
            problems += [f"{rule['alert']}: unknown metric {m}" for m in sorted(metrics - allowed)]
    assert problems == []
    assert {"DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_GPU_UTIL", "kube_node_labels", "kube_pod_status_phase"} <= seen


def test_keda_values_for_amp_exist_in_the_pinned_chart(reference):
    archive = reference / "charts" / f"keda-{versions.KEDA.version}.tgz"
    if not archive.is_file():
        pytest.skip(f"no KEDA chart archive at {archive}")
    with tarfile.open(archive) as tar:
        upstream = yaml.safe_load(tar.extractfile("keda/values.yaml").read())
    values = next(r for r in by_type(amp_teams(), "kubernetes:helm.sh/v3:Release")
                  if chart_name_of(r.inputs["chart"], r.inputs["version"]) == "keda").inputs["values"]
    assert sorted(key_paths(values)) == sorted([
        "prometheus.operator.enabled", "prometheus.operator.serviceMonitor.enabled",
        "prometheus.metricServer.enabled", "prometheus.metricServer.serviceMonitor.enabled",
        "podIdentity.aws.irsa.enabled", "podIdentity.aws.irsa.roleArn",
    ])
    for path in key_paths(values):
        node = upstream
        for part in path.split("."):
            assert isinstance(node, dict) and part in node, path
            node = node[part]
        if path.endswith(".enabled"):
            assert node is False, path  # the chart's default: off, so gpufleet's True is what turns it on


def test_exporter_pins_are_the_ones_kube_prometheus_stack_depends_on(reference):
    """amp installs kube-state-metrics and node-exporter standalone: the chart versions the pinned
    kube-prometheus-stack itself depends on (its Chart.yaml), so both backends run the same exporters."""
    path = reference / "kube-prometheus-stack" / f"Chart-{versions.KUBE_PROMETHEUS_STACK.version}.yaml"
    if not path.is_file():
        pytest.skip(f"no kube-prometheus-stack Chart.yaml at {path}")
    deps = {d["name"]: d for d in yaml.safe_load(path.read_text())["dependencies"]}
    for chart in (versions.KUBE_STATE_METRICS, versions.PROMETHEUS_NODE_EXPORTER):
        assert deps[chart.name]["version"] == chart.version
        # The dependency's repository is https://<owner>.github.io/<repo> (GitHub Pages of <owner>/<repo>); the pin is
        # that project's own release asset of the same chart and version.
        owner, repo = deps[chart.name]["repository"].removeprefix("https://").split(".github.io/")
        assert chart.archive == (f"https://github.com/{owner}/{repo}/releases/download/"
                                 f"{chart.name}-{chart.version}/{chart.name}-{chart.version}.tgz")
    # The allowlist has the item format kube-prometheus-stack's path uses (tests/upstream/test_observability_upstream.py
    # vouches for the key there): one `nodes=[<pool label>]` item.
    ksm = next(r for r in by_type(amp_teams(), "kubernetes:helm.sh/v3:Release") if chart_name_of(r.inputs["chart"], r.inputs["version"]) == "kube-state-metrics")
    from tests.observability_plan import observed

    kps = next(r for r in by_type(observed(), "kubernetes:helm.sh/v3:Release") if chart_name_of(r.inputs["chart"], r.inputs["version"]) == "kube-prometheus-stack")
    assert ksm.inputs["values"] == kps.inputs["values"]["kube-state-metrics"]


def test_kubernetes_objects_of_the_amp_plan_validate_strictly():
    """Every Kubernetes object of an amp stack is a core kind (no prometheus-operator custom resources: their CRDs
    come only with kube-prometheus-stack) and validates strictly for the stack's Kubernetes version."""
    from tests.k8s_validate import as_object, is_core, k8s_objects, validate_strict

    p = amp_teams()
    version = p.spec.cluster.kubernetes_version
    objs = [as_object(r) for r in k8s_objects(p.resources)]
    assert not [o for o in objs if o["apiVersion"].startswith("monitoring.coreos.com/")]
    core = [o for o in objs if is_core(o, f"{version}.0")]
    assert any(o["kind"] == "Namespace" and o["metadata"]["name"] == "monitoring" for o in core)
    for obj in core:
        validate_strict(obj, version)
