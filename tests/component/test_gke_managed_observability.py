"""Component tests of GkeManagedObservability (backend gke-managed) under mocks: children, names, parents, key inputs,
and the wiring into the workload add-ons (KEDA's address, no ServiceMonitors on GKE)."""

import pytest

from gpufleet.components.observability.gke_alerts import LEFT_OUT
from gpufleet.components.observability.gke_managed import managed_prometheus_url
from gpufleet.components.observability.pools import pool_facts
from tests.gke_managed_plan import managed
from gpufleet.testing import run as run_under_mocks
from tests.helpers import by_type, example_config, load_config, one, parent_of, plan_config
from tests.policy.test_fixture_shapes import register, snake, to_python
from gpufleet.base.versions import chart_name_of

COMPONENT = "gpufleet:observability:GkeManagedObservability"
POLICY = "gcp:monitoring/alertPolicy:AlertPolicy"
DASHBOARD = "gcp:monitoring/dashboard:Dashboard"
POD_MONITORING = "kubernetes:monitoring.googleapis.com/v1:PodMonitoring"
RELEASE = "kubernetes:helm.sh/v3:Release"


def _release(p, chart):
    return next(r for r in by_type(p, RELEASE) if chart_name_of(r.inputs["chart"], r.inputs["version"]) == chart)


def _cluster_name(p) -> str:
    return one(p, "gcp:container/cluster:Cluster").inputs["name"]


def test_children_names_and_parents():
    p = managed()
    comp = one(p, COMPONENT)
    assert parent_of(p, comp).type == "gpufleet:index:GpuCluster"
    prefix = comp.name
    children = [one(p, POLICY), one(p, DASHBOARD), *by_type(p, POD_MONITORING),
                *[r for r in p.resources if r.type.startswith("kubernetes:") and r.name.startswith(f"{prefix}-kueue")]]
    assert {parent_of(p, r).name for r in children} == {prefix}
    assert {r.name for r in children} == {
        f"{prefix}-gpu-allocated-idle", f"{prefix}-dashboard", f"{prefix}-keda-metrics", f"{prefix}-kueue-metrics",
        f"{prefix}-kueue-reader", f"{prefix}-kueue-reader-token", f"{prefix}-kueue-token-reader",
    }
    # No self-run Prometheus on GKE's managed backend: no kube-prometheus-stack, no PrometheusRule.
    assert not [r for r in by_type(p, RELEASE) if chart_name_of(r.inputs["chart"], r.inputs["version"]) == "kube-prometheus-stack"]
    assert not by_type(p, "kubernetes:monitoring.coreos.com/v1:PrometheusRule")


def test_alert_policy_is_a_promql_condition_with_the_runbook_and_each_pools_price():
    p = managed()
    policy = one(p, POLICY).inputs
    cluster = _cluster_name(p)
    (condition,) = policy["conditions"]
    promql = condition["conditionPrometheusQueryLanguage"]
    assert (policy["combiner"], policy["severity"], policy["project"]) == ("OR", "WARNING", "my-gpu-project")
    assert promql["alertRule"] == "GpuAllocatedIdle" and promql["ruleGroup"] == "gpufleet-gpu"
    # The stack's thresholds (defaults: 5 % for 30 minutes), evaluated every minute (a multiple of 30 s).
    assert (promql["duration"], promql["evaluationInterval"]) == ("1800s", "60s")
    assert promql["query"].endswith(" < 5")
    # Only this cluster's series (a project may hold several clusters), and only workloads' GPUs.
    assert promql["query"].count(f'cluster="{cluster}"') == 2
    assert 'exported_pod!=""' in promql["query"] and 'pod!~".*dcgm-exporter.*"' in promql["query"]
    # A fresh cluster with pools at zero has no DCGM series yet: the condition must not be refused for that.
    assert promql["disableMetricValidation"] is True
    assert promql["labels"] == {"severity": "warning", "cluster": cluster}
    doc = policy["documentation"]
    assert doc["mimeType"] == "text/markdown" and "**Runbook:**" in doc["content"]
    spec = load_config(example_config("dws-gke"), stack="dws-gke")
    for pool in pool_facts(spec):
        line = f"pool `{pool.pool}`: " + (f"${pool.price_per_gpu_hour:.2f}/h per GPU" if pool.price_per_gpu_hour is not None
                                          else "unpriced in the catalog")
        assert line in doc["content"]


def test_alert_policy_inputs_are_what_pulumi_gcp_sends():
    """Round trip through pulumi_gcp's own AlertPolicy class (the provider schema's Python types): an input name the
    SDK does not know would be a TypeError, a renamed one would not come back equal."""
    import pulumi_gcp as gcp

    inputs = one(managed(), POLICY).inputs
    args = {snake(k): to_python(v, snake(k)) for k, v in inputs.items()}
    assert register(lambda: gcp.monitoring.AlertPolicy("subject", **args)) == inputs


def test_dashboard_inputs_are_what_pulumi_gcp_sends():
    import pulumi_gcp as gcp

    inputs = one(managed(), DASHBOARD).inputs
    assert set(inputs) == {"dashboardJson", "project"}
    assert register(lambda: gcp.monitoring.Dashboard("subject", dashboard_json=inputs["dashboardJson"],
                                                     project=inputs["project"])) == inputs


def test_keda_points_at_managed_prometheus_and_no_chart_creates_service_monitors():
    p = managed()
    keda = _release(p, "keda").inputs["values"]["prometheus"]
    assert keda == {"operator": {"enabled": True, "serviceMonitor": {"enabled": False}},
                    "metricServer": {"enabled": True, "serviceMonitor": {"enabled": False}}}
    assert "enablePrometheus" not in _release(p, "kueue").inputs["values"]
    assert managed_prometheus_url("my-gpu-project") == \
        "https://monitoring.googleapis.com/v1/projects/my-gpu-project/location/global/prometheus"


def test_keda_component_is_told_the_managed_query_address():
    """What ScaledObjects' prometheus triggers use (KEDA's `prometheusServerAddress` output): the project's
    Managed Service for Prometheus query API, not an in-cluster URL."""
    from gpufleet.components.gpu_cluster import GpuCluster, GpuClusterArgs

    config = example_config("prod-gke")
    config["gpufleet:addons"] = {"keda": {"enabled": True}}
    built = {}

    def program():
        built["cluster"] = GpuCluster("prod-gke", GpuClusterArgs.from_config(config, stack="prod-gke"))

    run_under_mocks(program, stack="prod-gke", config=config)
    cluster = built["cluster"]
    assert cluster.workloads["keda"].prometheus_server_address == managed_prometheus_url("my-gpu-project")
    assert type(cluster.observability).__name__ == "GkeManagedObservability"
    assert cluster.observability.pod_monitorings and cluster.observability.dashboard is not None


def test_pod_monitorings_wait_for_their_add_ons():
    p = managed()
    keda, kueue = (one(p, POD_MONITORING, f"{one(p, COMPONENT).name}-{a}-metrics") for a in ("keda", "kueue"))
    assert keda.inputs["metadata"] == {"name": "keda-metrics", "namespace": "keda"}
    assert kueue.inputs["metadata"] == {"name": "kueue-metrics", "namespace": "kueue-system"}
    for pm, chart in ((keda, "keda"), (kueue, "kueue")):
        release = _release(p, chart)
        assert release.urn in pm.dependencies
    endpoint = kueue.inputs["spec"]["endpoints"][0]
    assert (endpoint["scheme"], endpoint["port"], endpoint["interval"]) == ("https", "metrics", "30s")
    assert endpoint["authorization"] == {"type": "Bearer", "credentials": {"secret": {"name": "gpufleet-kueue-metrics-reader-token", "key": "token"}}}
    binding = one(p, "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding")
    assert binding.inputs["subjects"] == [{"kind": "ServiceAccount", "name": "collector", "namespace": "gmp-system"}]


@pytest.mark.parametrize("observability,policies,dashboards", [
    ({"alerts": {"enabled": False}}, 0, 1),
    ({"dashboards": {"enabled": False}}, 1, 0),
    ({"metrics": {"backend": "none"}}, 0, 0),
])
def test_switches(observability, policies, dashboards):
    config = example_config("prod-gke")
    config["gpufleet:observability"] = observability
    p = plan_config(config, stack="prod-gke-switch", policies=False)
    assert (len(by_type(p, POLICY)), len(by_type(p, DASHBOARD))) == (policies, dashboards)
    assert bool(by_type(p, COMPONENT)) == (observability.get("metrics", {}).get("backend") != "none")


def test_thresholds_reach_the_alert():
    config = example_config("prod-gke")
    config["gpufleet:observability"] = {"alerts": {"idleMinutes": 45, "idleUtilizationPercent": 10}}
    promql = one(plan_config(config, stack="prod-gke-thresholds", policies=False), POLICY).inputs["conditions"][0]["conditionPrometheusQueryLanguage"]
    assert promql["duration"] == "2700s" and promql["query"].endswith(" < 10")


def test_every_left_out_alert_says_why():
    assert set(LEFT_OUT) >= {"GpuXid*Error", "GpuDoubleBitEccError", "GpuPodsPending", "GpuMissing", "GpuPoolAtMaximum"}
    assert all(reason for reason in LEFT_OUT.values())


def test_alert_policies_notify_the_stacks_channels_and_none_by_default():
    from tests.gke_managed_plan import CHANNEL

    assert one(managed(), POLICY).inputs["notificationChannels"] == [CHANNEL]
    default = plan_config(example_config("prod-gke"), stack="prod-gke")
    assert by_type(default, POLICY) and all("notificationChannels" not in r.inputs for r in by_type(default, POLICY))
