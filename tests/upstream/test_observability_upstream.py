"""Upstream-format tests of gpufleet:observability: Helm values keys exist in the pinned charts, the PrometheusRule
validates strictly against the prometheus-operator CRD, every alert and dashboard expression parses with a real
PromQL parser (promql-parser, the Rust crate behind GreptimeDB's PromQL, from PyPI) and names only metrics the DCGM
exporter's counter list or kube-state-metrics export, and the DCGM metrics list matches the exporter's own CSVs.

Not available in ../shared/reference (so not rendered with helm here): the kube-prometheus-stack chart archive and
the Prometheus CRD (only ServiceMonitor, PodMonitor and PrometheusRule are there), and GKE's Rules CRD.
"""

from __future__ import annotations

import csv
import io
import json
import tarfile

import pytest

promql = pytest.importorskip("promql_parser", reason="promql-parser (dev dependency) is not installed")

from gpufleet.base import versions  # noqa: E402
from gpufleet.components.observability import dcgm_metrics  # noqa: E402
from gpufleet.components.observability.alerts import GPU_REQUEST_RESOURCE, POOL_SERIES_LABEL  # noqa: E402
from tests.crd_validate import _strict  # noqa: E402
from tests.helm_values import missing_paths  # noqa: E402
from tests.helpers import by_type, one  # noqa: E402
from tests.observability_plan import observed  # noqa: E402
from gpufleet.base.versions import chart_name_of

RELEASE = "kubernetes:helm.sh/v3:Release"
RULE = "kubernetes:monitoring.coreos.com/v1:PrometheusRule"
# kube-state-metrics metrics the rules and dashboards read: kubernetes/kube-state-metrics docs/metrics/
# (workload/pod-metrics.md: kube_pod_status_phase, kube_pod_created, kube_pod_container_resource_requests;
# cluster/node-metrics.md: kube_node_labels, kube_node_status_condition) at the v2.x line kube-prometheus-stack 88.x
# ships (its kube-state-metrics subchart 8.4.0).
KUBE_STATE_METRICS = {"kube_node_labels", "kube_pod_status_phase", "kube_pod_container_resource_requests",
                      "kube_pod_created", "kube_node_status_condition"}
# node-problem-detector's problem metrics (kubernetes/node-problem-detector v1.36.0, pkg/util/metrics/metric.go
# ProblemCounterID/ProblemGaugeID, pkg/problemmetrics/problem_metrics.go: labels reason, and type+reason), scraped by
# the k3s NodeHealth component's PodMonitor.
NODE_PROBLEM_DETECTOR_METRICS = {"problem_counter", "problem_gauge"}
# Values below keys the kube-prometheus-stack values.yaml leaves empty or to a subchart, each checked upstream:
VERIFIED_ELSEWHERE = {
    # values.yaml shows `storageSpec: {}` with the volumeClaimTemplate example commented out beside it; the fields
    # are the Prometheus CRD's StorageSpec.volumeClaimTemplate (an EmbeddedPersistentVolumeClaim: spec.accessModes,
    # spec.resources.requests.storage), prometheus-operator Documentation/platform/storage.md.
    "prometheus.prometheusSpec.storageSpec.volumeClaimTemplate.spec.accessModes",
    "prometheus.prometheusSpec.storageSpec.volumeClaimTemplate.spec.resources.requests.storage",
    # The kube-state-metrics subchart's values.yaml (prometheus-community/helm-charts charts/kube-state-metrics):
    # `metricLabelsAllowlist: []`, each item `<resource>=[<label>,...]` (--metric-labels-allowlist).
    "kube-state-metrics.metricLabelsAllowlist",
}


def _chart_values(archive, chart: str) -> dict:
    import yaml

    with tarfile.open(archive) as tar:
        return yaml.safe_load(tar.extractfile(f"{chart}/values.yaml").read())


def _missing(values: dict, upstream: dict) -> list[str]:
    from tests.helm_values import key_paths

    out = []
    for path in key_paths(values):
        node = upstream
        for part in path.split("."):
            if not isinstance(node, dict) or part not in node:
                out.append(path)
                break
            node = node[part]
    return out


def _release(chart: str):
    return next(r for r in by_type(observed(), RELEASE) if chart_name_of(r.inputs["chart"], r.inputs["version"]) == chart)


def _dashboards():
    return next(r for r in by_type(observed(), "kubernetes:core/v1:ConfigMap") if r.name.endswith("-observability-dashboards"))


def test_kube_prometheus_stack_values_keys_exist_in_the_pinned_chart(reference):
    upstream = reference / "kube-prometheus-stack" / f"values-{versions.KUBE_PROMETHEUS_STACK.version}.yaml"
    if not upstream.is_file():
        pytest.skip(f"no kube-prometheus-stack values.yaml at {upstream}")
    values = _release("kube-prometheus-stack").inputs["values"]
    assert set(missing_paths(values, upstream)) == VERIFIED_ELSEWHERE


def test_kube_prometheus_stack_pin_matches_the_reference_chart(reference):
    import yaml

    chart = reference / "kube-prometheus-stack" / f"Chart-{versions.KUBE_PROMETHEUS_STACK.version}.yaml"
    if not chart.is_file():
        pytest.skip(f"no Chart.yaml at {chart}")
    meta = yaml.safe_load(chart.read_text())
    assert (meta["version"], meta["appVersion"]) == (versions.KUBE_PROMETHEUS_STACK.version, versions.KUBE_PROMETHEUS_STACK.app_version)


@pytest.mark.parametrize("chart,archive", [("keda", "keda-2.20.2.tgz"), ("kueue", "kueue-0.19.2.tgz")])
def test_keda_and_kueue_monitoring_values_exist_in_their_charts(reference, chart, archive):
    path = reference / "charts" / archive
    if not path.is_file():
        pytest.skip(f"no chart archive {path}")
    values = _release(chart).inputs["values"]
    assert values, "the stack's Prometheus should turn on the chart's ServiceMonitor"
    assert _missing(values, _chart_values(path, chart)) == []


def test_gpu_operator_dcgm_exporter_values_are_what_its_chart_reads(reference):
    """serviceMonitor.{enabled,honorLabels} are in values.yaml; config.{name,create,data} only commented there, but
    read by templates/clusterpolicy.yaml (config.name) and templates/dcgm_exporter_config.yaml (create, data)."""
    archive = reference / "charts" / f"gpu-operator-{versions.GPU_OPERATOR.version}.tgz"
    if not archive.is_file():
        pytest.skip(f"no chart archive {archive}")
    values = _release("gpu-operator").inputs["values"]["dcgmExporter"]
    upstream = _chart_values(archive, "gpu-operator")["dcgmExporter"]
    assert _missing({"serviceMonitor": values["serviceMonitor"]}, upstream) == []
    assert values["serviceMonitor"] == {"enabled": True, "honorLabels": True}
    with tarfile.open(archive) as tar:
        template = tar.extractfile("gpu-operator/templates/dcgm_exporter_config.yaml").read().decode()
    for key in ("config.create", "config.data", "config.name"):
        assert f".Values.dcgmExporter.{key}" in template
    assert values["config"] == {"name": dcgm_metrics.CONFIGMAP, "create": True, "data": dcgm_metrics.metrics_csv()}


def _csv_rows(path) -> dict[str, tuple[str, str]]:
    """field -> (type, help) for every row, commented out or not."""
    out = {}
    for line in path.read_text().splitlines():
        line = line.lstrip("# ").strip()
        if not line.startswith("DCGM_FI_"):
            continue
        field, kind, text = next(csv.reader(io.StringIO(line), skipinitialspace=True))[:3]
        out.setdefault(field.strip(), (kind.strip(), text.strip()))
    return out


def test_dcgm_metrics_rows_match_the_exporter_csvs(reference):
    tag = versions.DCGM_EXPORTER_REFERENCE
    default = reference / "dcgm-exporter" / f"default-counters-{tag}.csv"
    dcp = reference / "dcgm-exporter" / f"dcp-metrics-included-{tag}.csv"
    if not default.is_file():
        pytest.skip(f"no DCGM exporter counters at {default}")
    upstream = {**_csv_rows(dcp), **_csv_rows(default)}
    for field, kind, text in dcgm_metrics.COUNTERS:
        assert upstream.get(field) == (kind, text), field
    enabled_by_default = {f for f in _csv_rows(default) if any(
        line.startswith(f) for line in default.read_text().splitlines())}
    assert enabled_by_default - {f for f, _, _ in dcgm_metrics.COUNTERS} <= {"DCGM_FI_PROF_PCIE_TX_BYTES", "DCGM_FI_PROF_PCIE_RX_BYTES"}


def test_prometheus_rule_validates_against_the_crd(reference):
    """Strictly (undeclared fields are errors), against the CRD file itself: tests/crd_validate.py's index parses
    every CRD in the reference (half a minute of YAML) when it is not warm yet."""
    import jsonschema
    import yaml

    path = reference / "crds" / "prometheus-operator" / "crd-prometheusrules.yaml"
    if not path.is_file():
        pytest.skip(f"no PrometheusRule CRD at {path}")
    crd = next(d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict) and d.get("kind") == "CustomResourceDefinition")
    rule = one(observed(), RULE)
    group, _, version = rule.inputs["apiVersion"].rpartition("/")
    assert (crd["spec"]["group"], crd["spec"]["names"]["kind"]) == (group, rule.inputs["kind"])
    schema = _strict(next(v for v in crd["spec"]["versions"] if v["name"] == version)["schema"]["openAPIV3Schema"])
    obj = {"apiVersion": rule.inputs["apiVersion"], "kind": rule.inputs["kind"], "metadata": rule.inputs["metadata"],
           "spec": rule.inputs["spec"]}
    errors = [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in jsonschema.Draft7Validator(schema).iter_errors(obj)]
    assert errors == []
    # The strict schema does catch a field the CRD lacks.
    bad = {**obj, "spec": {"groups": [{**obj["spec"]["groups"][0], "runbook": "x"}]}}
    assert list(jsonschema.Draft7Validator(schema).iter_errors(bad))


def test_node_problem_detector_pod_monitor_validates_against_the_crd(reference):
    """The k3s NodeHealth PodMonitor, strictly against crd-podmonitors.yaml; its port name is the DaemonSets'."""
    import jsonschema
    import yaml

    path = reference / "crds" / "prometheus-operator" / "crd-podmonitors.yaml"
    if not path.is_file():
        pytest.skip(f"no PodMonitor CRD at {path}")
    crd = next(d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict) and d.get("kind") == "CustomResourceDefinition")
    monitor = one(observed(), "kubernetes:monitoring.coreos.com/v1:PodMonitor")
    group, _, version = monitor.inputs["apiVersion"].rpartition("/")
    assert (crd["spec"]["group"], crd["spec"]["names"]["kind"]) == (group, monitor.inputs["kind"])
    schema = _strict(next(v for v in crd["spec"]["versions"] if v["name"] == version)["schema"]["openAPIV3Schema"])
    obj = {k: monitor.inputs[k] for k in ("apiVersion", "kind", "metadata", "spec")}
    errors = [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in jsonschema.Draft7Validator(schema).iter_errors(obj)]
    assert errors == []
    bad = {**obj, "spec": {**obj["spec"], "podMetricsEndpoints": [{**obj["spec"]["podMetricsEndpoints"][0], "portName": "x"}]}}
    assert list(jsonschema.Draft7Validator(schema).iter_errors(bad))
    ports = {p["name"] for ds in by_type(observed(), "kubernetes:apps/v1:DaemonSet") if ds.name.endswith("daemonset")
             and "node-health" in ds.name for p in ds.inputs["spec"]["template"]["spec"]["containers"][0]["ports"]}
    assert ports == {monitor.inputs["spec"]["podMetricsEndpoints"][0]["port"]}


def _metric_names(node, out: set) -> set:
    """Every metric name a parsed PromQL expression selects (walking the parser's AST)."""
    name = type(node).__name__
    if name == "VectorSelector":
        out.add(node.name)
        return out
    for attr in ("expr", "lhs", "rhs", "args", "param", "vector_selector"):
        child = getattr(node, attr, None)
        if child is None:
            continue
        for c in (child if isinstance(child, list) else [child]):
            if c is not None and not isinstance(c, (str, int, float)):
                _metric_names(c, out)
    return out


def _expressions():
    rule = one(observed(), RULE)
    for group in rule.inputs["spec"]["groups"]:
        for r in group["rules"]:
            yield f"rule {r['alert']} ({group['name']})", r["expr"]
    cm = _dashboards()
    for key, text in cm.inputs["data"].items():
        for panel in json.loads(text)["panels"]:
            for target in panel["targets"]:
                # Grafana's template variables are substituted before the query runs.
                yield f"dashboard {key} panel {panel['title']!r}", target["expr"].replace("$pool", "h100")


def test_every_expression_parses_and_reads_only_known_metrics():
    allowed = dcgm_metrics.exported() | KUBE_STATE_METRICS | NODE_PROBLEM_DETECTOR_METRICS
    seen = set()
    problems = []
    for where, expr in _expressions():
        try:
            names = _metric_names(promql.parse(expr), set())
        except ValueError as exc:
            problems.append(f"{where}: does not parse: {exc}")
            continue
        seen |= names
        if not names:
            problems.append(f"{where}: selects no metric")
        problems += [f"{where}: unknown metric {n}" for n in sorted(names - allowed)]
    assert problems == []
    # The alerts cover what the issue asks: XIDs, ECC/row remap, NVLink, throttling, utilization, pending pods.
    assert {"DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "DCGM_FI_DEV_ROW_REMAP_FAILURE",
            "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL", "DCGM_FI_DEV_THERMAL_VIOLATION", "DCGM_FI_DEV_POWER_VIOLATION",
            "DCGM_FI_DEV_GPU_UTIL", "kube_pod_status_phase", "kube_node_labels"} <= seen


def test_the_parser_rejects_a_broken_expression():
    """The check above would catch a typo: the parser is strict."""
    with pytest.raises(ValueError):
        promql.parse("sum by (Hostname (DCGM_FI_DEV_GPU_UTIL)")


def test_gpu_nodes_dashboard_queries_every_metric_of_nvidias_dashboard(reference):
    path = reference / "dcgm-exporter" / f"dcgm-exporter-dashboard-{versions.DCGM_EXPORTER_REFERENCE}.json"
    if not path.is_file():
        pytest.skip(f"no DCGM dashboard at {path}")
    nvidia = json.loads(path.read_text())
    theirs = {n for p in nvidia["panels"] for t in p.get("targets", [])
              for n in _metric_names(promql.parse(t["expr"].replace("$instance", "x").replace("$gpu", "0")), set())}
    cm = _dashboards()
    ours = json.loads(cm.inputs["data"]["gpu-nodes.json"])
    mine = {n for p in ours["panels"] for t in p["targets"] for n in _metric_names(promql.parse(t["expr"].replace("$pool", "x")), set())}
    assert theirs and theirs <= mine
    assert [p["title"].lower() for p in nvidia["panels"] if p.get("targets")][:2] == ["gpu temperature", "gpu avg. temp"]


def test_series_label_names_follow_kube_state_metrics_sanitizing():
    assert (POOL_SERIES_LABEL, GPU_REQUEST_RESOURCE) == ("label_gpufleet_io_pool", "nvidia_com_gpu")
