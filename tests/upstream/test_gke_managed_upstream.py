"""Upstream-format tests of the gke-managed observability backend (components/observability/gke_managed.py):

- every PodMonitoring validates strictly against the monitoring.googleapis.com CRD (GoogleCloudPlatform/
  prometheus-engine v0.17.2, ../shared/reference/crds/gke-managed-prometheus/), and the Kubernetes objects beside it
  against the Kubernetes OpenAPI schema;
- the PodMonitorings' selectors and ports match the pods the pinned KEDA and Kueue charts render (real helm), and the
  ClusterRole the Kueue reader is bound to is the one the chart creates;
- every PromQL query (alert policy and dashboard) parses with a real PromQL parser and reads only DCGM metrics that
  GKE's package exports and NVIDIA's default counter list enables;
- the dashboard JSON uses only fields of the Cloud Monitoring Dashboard resource
  (https://cloud.google.com/monitoring/api/ref_v3/rest/v1/projects.dashboards) and its tiles fit the mosaic grid.
"""

from __future__ import annotations

import csv
import io
import json

import pytest

from gpufleet.base import versions
from gpufleet.components.observability.gke_alerts import GKE_DCGM_METRICS
from gpufleet.components.observability.gke_managed import KUEUE_METRICS_READER_ROLE
from tests.crd_validate import _strict, as_sent
from tests.gke_managed_plan import managed
from tests.helpers import by_type, one
from tests.k8s_validate import as_object, validate_strict
from gpufleet.base.versions import chart_name_of

POD_MONITORING = "kubernetes:monitoring.googleapis.com/v1:PodMonitoring"
RELEASE = "kubernetes:helm.sh/v3:Release"


def _pod_monitoring_schema(reference):
    import yaml

    path = reference / "crds" / "gke-managed-prometheus" / "monitoring.googleapis.com_podmonitorings.yaml"
    if not path.is_file():
        pytest.skip(f"no PodMonitoring CRD at {path}")
    crd = yaml.safe_load(path.read_text())
    assert (crd["spec"]["group"], crd["spec"]["names"]["kind"]) == ("monitoring.googleapis.com", "PodMonitoring")
    return _strict(next(v for v in crd["spec"]["versions"] if v["name"] == "v1")["schema"]["openAPIV3Schema"])


def _errors(schema, obj) -> list[str]:
    import jsonschema

    return [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in jsonschema.Draft7Validator(schema).iter_errors(obj)]


def _monitorings():
    return {r.inputs["metadata"]["name"]: as_sent(as_object(r)) for r in by_type(managed(), POD_MONITORING)}


def test_pod_monitorings_validate_strictly_against_the_crd(reference):
    schema = _pod_monitoring_schema(reference)
    monitorings = _monitorings()
    assert set(monitorings) == {"keda-metrics", "kueue-metrics"}
    for name, obj in monitorings.items():
        assert _errors(schema, obj) == [], name
    # The strict schema does catch a field the CRD lacks (a ServiceMonitor habit: `bearerTokenSecret`).
    bad = json.loads(json.dumps(monitorings["kueue-metrics"]))
    bad["spec"]["endpoints"][0]["bearerTokenSecret"] = {"name": "x", "key": "token"}
    assert _errors(schema, bad)


def test_kueue_reader_objects_validate_strictly():
    p = managed()
    prefix = one(p, "gpufleet:observability:GkeManagedObservability").name
    objs = [r for r in p.resources if r.type.startswith("kubernetes:") and r.name.startswith(f"{prefix}-kueue-")
            and r.type != POD_MONITORING]
    assert {r.type.rsplit(":", 1)[-1] for r in objs} == {"ServiceAccount", "Secret", "ClusterRoleBinding", "Role", "RoleBinding"}
    version = one(p, "gcp:container/cluster:Cluster").inputs["minMasterVersion"]  # the stack's Kubernetes minor
    for r in objs:
        validate_strict(as_sent(as_object(r)), version)


def _rendered(reference, chart: str, archive: str, namespace: str):
    from tests.helm import template

    path = reference / "charts" / archive
    if not path.is_file():
        pytest.skip(f"no chart archive {path}")
    release = next(r for r in by_type(managed(), RELEASE) if chart_name_of(r.inputs["chart"], r.inputs["version"]) == chart)
    # gpufleet names each release after its chart (components/helm_chart.py).
    assert release.inputs["name"] == chart
    return template(path, release.inputs["values"], namespace, release=release.inputs["name"])


def _selected_pods(docs, selector: dict) -> list[dict]:
    """Pod templates of the rendered Deployments that `selector` (matchLabels / matchExpressions In) selects."""
    out = []
    for d in docs:
        if d.get("kind") != "Deployment":
            continue
        labels = d["spec"]["template"]["metadata"].get("labels", {})
        ok = all(labels.get(k) == v for k, v in selector.get("matchLabels", {}).items())
        for e in selector.get("matchExpressions", []):
            assert e["operator"] == "In"
            ok = ok and labels.get(e["key"]) in e["values"]
        if ok:
            out.append(d["spec"]["template"])
    return out


def _port_names(template: dict) -> set[str]:
    return {p.get("name") for c in template["spec"]["containers"] for p in c.get("ports", [])}


def test_keda_pod_monitoring_selects_the_operator_and_metrics_server_with_their_metrics_port(reference):
    docs = _rendered(reference, "keda", "keda-2.20.2.tgz", "keda")
    spec = _monitorings()["keda-metrics"]["spec"]
    pods = _selected_pods(docs, spec["selector"])
    assert sorted(p["metadata"]["labels"]["app"] for p in pods) == ["keda-operator", "keda-operator-metrics-apiserver"]
    for pod in pods:
        assert spec["endpoints"][0]["port"] in _port_names(pod)
    # Metrics are on, ServiceMonitors are not (no prometheus-operator CRDs on GKE's managed collection).
    assert not [d for d in docs if d.get("kind") == "ServiceMonitor"]
    operator = next(d for d in docs if d.get("kind") == "Deployment" and d["metadata"]["name"] == "keda-operator")
    assert "--enable-prometheus-metrics=true" in operator["spec"]["template"]["spec"]["containers"][0]["args"]


def test_kueue_pod_monitoring_selects_the_controller_and_the_reader_role_exists(reference):
    docs = _rendered(reference, "kueue", "kueue-0.19.2.tgz", "kueue-system")
    spec = _monitorings()["kueue-metrics"]["spec"]
    (pod,) = _selected_pods(docs, spec["selector"])
    assert spec["endpoints"][0]["port"] in _port_names(pod)
    port = next(p for c in pod["spec"]["containers"] for p in c.get("ports", []) if p.get("name") == spec["endpoints"][0]["port"])
    assert port["containerPort"] == 8443
    role = next(d for d in docs if d.get("kind") == "ClusterRole" and d["metadata"]["name"] == KUEUE_METRICS_READER_ROLE)
    assert role["rules"] == [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]
    binding = one(managed(), "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding").inputs
    assert binding["roleRef"]["name"] == KUEUE_METRICS_READER_ROLE
    assert not [d for d in docs if d.get("kind") == "ServiceMonitor"]


def _queries() -> list[tuple[str, str]]:
    p = managed()
    out = []
    for r in by_type(p, "gcp:monitoring/alertPolicy:AlertPolicy"):
        for c in r.inputs["conditions"]:
            out.append((f"alert {r.name}", c["conditionPrometheusQueryLanguage"]["query"]))
    board = json.loads(one(p, "gcp:monitoring/dashboard:Dashboard").inputs["dashboardJson"])
    for tile in board["mosaicLayout"]["tiles"]:
        for ds in tile["widget"].get("xyChart", {}).get("dataSets", []):
            out.append((f"dashboard {tile['widget']['title']!r}", ds["timeSeriesQuery"]["prometheusQuery"]))
    return out


def _default_enabled(reference) -> set[str]:
    path = reference / "dcgm-exporter" / f"default-counters-{versions.DCGM_EXPORTER_REFERENCE}.csv"
    if not path.is_file():
        pytest.skip(f"no DCGM exporter counters at {path}")
    rows = [line for line in path.read_text().splitlines() if line.startswith("DCGM_FI_")]
    return {next(csv.reader(io.StringIO(line)))[0].strip() for line in rows}


def test_every_query_parses_and_reads_only_metrics_gke_exports(reference):
    promql = pytest.importorskip("promql_parser", reason="promql-parser (dev dependency) is not installed")
    from tests.upstream.test_observability_upstream import _metric_names

    allowed = GKE_DCGM_METRICS & _default_enabled(reference)
    problems, seen = [], set()
    queries = _queries()
    assert len(queries) >= 7
    for where, query in queries:
        try:
            names = _metric_names(promql.parse(query), set())
        except ValueError as exc:
            problems.append(f"{where}: does not parse: {exc}")
            continue
        seen |= names
        problems += [f"{where}: {n} is not both exported by GKE and enabled by default" for n in sorted(names - allowed)] or \
            ([] if names else [f"{where}: selects no metric"])
    assert problems == []
    assert {"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_POWER_USAGE"} <= seen


# Fields of the Dashboard resource and the objects gpufleet uses in it, from the API reference
# (projects.dashboards: Dashboard, MosaicLayout, Tile, Widget, XyChart, DataSet, TimeSeriesQuery, Axis, Text).
API_FIELDS = {
    "Dashboard": {"name", "displayName", "etag", "dashboardFilters", "labels", "annotations",
                  "gridLayout", "mosaicLayout", "rowLayout", "columnLayout"},
    "MosaicLayout": {"columns", "tiles"},
    "Tile": {"xPos", "yPos", "width", "height", "widget"},
    "Widget": {"title", "id", "visibleIf", "xyChart", "scorecard", "text", "blank", "alertChart", "timeSeriesTable",
               "collapsibleGroup", "logsPanel", "incidentList", "pieChart", "errorReportingPanel", "sectionHeader",
               "singleViewGroup"},
    "XyChart": {"dataSets", "timeshiftDuration", "thresholds", "xAxis", "yAxis", "y2Axis", "chartOptions"},
    "DataSet": {"timeSeriesQuery", "plotType", "legendTemplate", "minAlignmentPeriod", "targetAxis", "breakdowns",
                "dimensions", "measures", "sort"},
    "TimeSeriesQuery": {"timeSeriesFilter", "timeSeriesFilterRatio", "timeSeriesQueryLanguage", "prometheusQuery",
                        "opsAnalyticsQuery", "unitOverride", "outputFullDuration"},
    "Axis": {"label", "scale"},
    "Text": {"content", "format", "style"},
}


def test_dashboard_json_uses_only_dashboard_api_fields_and_fits_the_grid():
    board = json.loads(one(managed(), "gcp:monitoring/dashboard:Dashboard").inputs["dashboardJson"])
    problems = []

    def check(obj: dict, kind: str, where: str):
        problems.extend(f"{where}: {k} is not a {kind} field" for k in set(obj) - API_FIELDS[kind])

    check(board, "Dashboard", "dashboard")
    layout = board["mosaicLayout"]
    check(layout, "MosaicLayout", "mosaicLayout")
    assert 1 <= layout["columns"] <= 48
    cells = set()
    for i, tile in enumerate(layout["tiles"]):
        check(tile, "Tile", f"tiles[{i}]")
        assert tile["xPos"] + tile["width"] <= layout["columns"]
        area = {(x, y) for x in range(tile["xPos"], tile["xPos"] + tile["width"]) for y in range(tile["yPos"], tile["yPos"] + tile["height"])}
        assert not cells & area, f"tile {i} overlaps another"
        cells |= area
        widget = tile["widget"]
        check(widget, "Widget", f"tiles[{i}].widget")
        assert len(set(widget) - {"title", "id", "visibleIf"}) == 1, "a widget has exactly one content field"
        if "xyChart" in widget:
            check(widget["xyChart"], "XyChart", f"tiles[{i}].xyChart")
            check(widget["xyChart"]["yAxis"], "Axis", f"tiles[{i}].yAxis")
            assert widget["xyChart"]["yAxis"]["scale"] in ("LINEAR", "LOG10")
            for ds in widget["xyChart"]["dataSets"]:
                check(ds, "DataSet", f"tiles[{i}].dataSet")
                check(ds["timeSeriesQuery"], "TimeSeriesQuery", f"tiles[{i}].timeSeriesQuery")
                assert ds["plotType"] in ("LINE", "STACKED_AREA", "STACKED_BAR", "HEATMAP")
        else:
            check(widget["text"], "Text", f"tiles[{i}].text")
            assert widget["text"]["format"] in ("MARKDOWN", "RAW")
    assert problems == []
    titles = [t["widget"]["title"] for t in layout["tiles"]]
    assert {"GPUs present vs allocated", "GPU utilization", "GPU memory used", "GPU power"} <= set(titles)
    assert any("costs, per pool" in t for t in titles)
