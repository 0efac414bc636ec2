"""Component tests of gpufleet:observability under mocks: children, names, parents and key inputs."""

import json

import pytest

from gpufleet.components.observability.stack import PROMETHEUS_URL
from gpufleet.base.spec import SpecError
from tests.helpers import by_type, example_config, one, parent_of, plan_config, planned
from tests.observability_plan import observed
from gpufleet.base.versions import chart_name_of

RELEASE = "kubernetes:helm.sh/v3:Release"


def _release(p, chart):
    return next(r for r in by_type(p, RELEASE) if chart_name_of(r.inputs["chart"], r.inputs["version"]) == chart)


def test_observability_component_children_and_parents():
    p = observed()
    comp = one(p, "gpufleet:observability:Observability", "teams-observability")
    assert parent_of(p, comp).type == "gpufleet:index:GpuCluster"
    ns = one(p, "kubernetes:core/v1:Namespace", "teams-observability-ns")
    release = _release(p, "kube-prometheus-stack")
    rule = one(p, "kubernetes:monitoring.coreos.com/v1:PrometheusRule", "teams-observability-gpu-alerts")
    boards = one(p, "kubernetes:core/v1:ConfigMap", "teams-observability-dashboards")
    assert {parent_of(p, r).name for r in (ns, release, rule, boards)} == {"teams-observability"}
    assert ns.inputs["metadata"]["name"] == "monitoring"
    assert ns.inputs["metadata"]["labels"] == {"pod-security.kubernetes.io/enforce": "privileged"}
    assert release.name == "teams-observability-release" and release.inputs["version"] == "88.5.3"
    assert boards.inputs["metadata"]["labels"] == {"grafana_dashboard": "1"}
    assert release.urn in rule.dependencies or any("observability-release" in d for d in rule.dependencies)


def test_prometheus_selects_every_monitor_and_keeps_a_priced_volume():
    spec = _release(observed(), "kube-prometheus-stack").inputs["values"]["prometheus"]["prometheusSpec"]
    assert (spec["serviceMonitorSelectorNilUsesHelmValues"], spec["podMonitorSelectorNilUsesHelmValues"],
            spec["ruleSelectorNilUsesHelmValues"]) == (False, False, False)
    assert (spec["retention"], spec["scrapeInterval"]) == ("15d", "30s")
    assert spec["storageSpec"]["volumeClaimTemplate"]["spec"]["resources"]["requests"]["storage"] == "80Gi"
    # k3s: the claim lands on local-path, your own disks: listed at 0, never unpriced.
    items = [i for i in observed().cost.items if "Prometheus" in i.name]
    assert [(i.kind, i.unit_hourly) for i in items] == [("storage", 0.0)]


def test_alert_rules_per_pool_with_price_and_runbook():
    rule = one(observed(), "kubernetes:monitoring.coreos.com/v1:PrometheusRule")
    groups = {g["name"]: g["rules"] for g in rule.inputs["spec"]["groups"]}
    pools = [p["name"] for p in example_config("teams")["gpufleet:nodePools"]]
    assert set(groups) == {"gpufleet-gpu-health", "gpufleet-gpu-scheduling", *(f"gpufleet-pool-{p}" for p in pools)}
    every = [r for rules in groups.values() for r in rules]
    assert all(r["annotations"]["runbook"] and r["labels"]["severity"] in ("warning", "critical") for r in every
               if r["labels"].get("nvidia_action") != "IGNORE")
    # XIDs NVIDIA's catalog says need no action still show, but never page.
    assert {r["labels"]["severity"] for r in every if r["labels"].get("nvidia_action") == "IGNORE"} == {"info"}
    health = {r["alert"] for r in groups["gpufleet-gpu-health"]}
    assert {"GpuXidMemoryError", "GpuXidBusError", "GpuXidNvlinkError", "GpuXidApplicationError", "GpuDoubleBitEccError",
            "GpuRowRemapFailure", "GpuNvlinkErrors", "GpuThermalThrottling", "GpuPowerThrottling"} <= health
    bus = next(r for r in groups["gpufleet-gpu-health"] if r["alert"] == "GpuXidBusError")
    assert bus["expr"] == "DCGM_FI_DEV_XID_ERRORS == 79"
    # NVIDIA's action for 79 is a machine restart (RESTART_BM), not a GPU reset: the runbook says so.
    assert bus["labels"]["nvidia_action"] == "RESTART_BM" and "RESTART_BM" in bus["annotations"]["runbook"]
    # One class, several NVIDIA actions: each gets its own rule, severity and runbook.
    memory = {r["labels"]["nvidia_action"]: r for r in groups["gpufleet-gpu-health"] if r["alert"] == "GpuXidMemoryError"}
    assert set(memory) == {"WORKFLOW_XID_48", "RESET_GPU", "IGNORE", "RESTART_APP"}
    assert memory["RESET_GPU"]["expr"] == ("DCGM_FI_DEV_XID_ERRORS == 64 or DCGM_FI_DEV_XID_ERRORS == 95 or "
                                           "DCGM_FI_DEV_XID_ERRORS == 140")
    assert memory["RESTART_APP"]["expr"] == "DCGM_FI_DEV_XID_ERRORS == 94"
    assert memory["RESTART_APP"]["labels"]["severity"] == "warning" and "reset the GPU when convenient" in \
        memory["RESTART_APP"]["annotations"]["runbook"]
    assert memory["IGNORE"]["annotations"]["xids"] == "63 GPU memory remapping event; 92 High single-bit ECC error rate"
    # XID 154 names the recovery another XID needs; the runbook sends the reader to the kernel log for it.
    recovery = next(r for r in groups["gpufleet-gpu-health"] if r["alert"] == "GpuXidRecoveryError")
    assert recovery["expr"] == "DCGM_FI_DEV_XID_ERRORS == 154" and "kernel log" in recovery["annotations"]["runbook"]
    idle = next(r for r in groups[f"gpufleet-pool-{pools[0]}"] if r["alert"] == "GpuAllocatedIdle")
    assert idle["for"] == "30m" and "/h per GPU wasted" in idle["annotations"]["summary"]
    # Allocated means a workload's pod, not the exporter's own pod (the target label an unallocated GPU gets).
    assert 'DCGM_FI_DEV_GPU_UTIL{pod!="", pod!~"nvidia-dcgm-exporter-.*"} < 5' in idle["expr"]
    # k3s pools are their hosts: no "pool at maximum" alert; pending pods alert after 15 minutes.
    assert not [r for r in every if r["alert"] == "GpuPoolAtMaximum"]
    assert groups["gpufleet-gpu-scheduling"][0]["for"] == "15m"


def test_gpu_operator_dcgm_exporter_keeps_workload_labels():
    values = _release(observed(), "gpu-operator").inputs["values"]["dcgmExporter"]
    assert values["serviceMonitor"] == {"enabled": True, "honorLabels": True}
    assert "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL, counter" in values["config"]["data"]
    # Without the observability layer the chart's exporter settings stay untouched.
    assert _release(planned("teams"), "gpu-operator").inputs["values"]["dcgmExporter"] == {"enabled": True}


def test_keda_points_at_the_stacks_prometheus_and_kueue_is_scraped():
    p = observed()
    monitored = {"enabled": True, "serviceMonitor": {"enabled": True}}
    assert _release(p, "keda").inputs["values"] == {"prometheus": {"operator": monitored, "metricServer": monitored}}
    assert _release(p, "kueue").inputs["values"] == {"enablePrometheus": True}
    # The address KEDA's ScaledObjects use (the component's prometheusServerAddress output).
    from gpufleet.components.workloads.keda import KedaArgs, keda_values

    assert PROMETHEUS_URL == "http://prometheus-operated.monitoring.svc:9090"
    assert keda_values(KedaArgs()) == {} and keda_values(KedaArgs(prometheus_url=PROMETHEUS_URL))["prometheus"]["operator"] == monitored
    assert _release(planned("teams"), "keda").inputs["values"] == {}


def test_dashboards_price_idle_gpus_per_pool_from_the_catalog():
    data = one(observed(), "kubernetes:core/v1:ConfigMap", "teams-observability-dashboards").inputs["data"]
    assert set(data) == {"gpu-nodes.json", "gpufleet-pools.json"}
    pools = json.loads(data["gpufleet-pools.json"])
    titles = [p["title"] for p in pools["panels"]]
    assert "Cost of idle allocated GPUs (catalog price)" in titles and "Pending GPU pods" in titles
    assert [v["name"] for v in pools["templating"]["list"]] == ["datasource", "pool"]


def test_eks_gpu_node_groups_repair_and_the_agent_runs():
    p = planned("prod-eks")
    groups = {r.name: r.inputs.get("nodeRepairConfig") for r in by_type(p, "aws:eks/nodeGroup:NodeGroup")}
    assert groups == {"prod-gpu-pool-h100-train-ng": {"enabled": True}, "prod-gpu-pool-l4-infer-ng": {"enabled": True},
                      "prod-gpu-pool-system-ng": None}
    agent = one(p, "aws:eks/addon:Addon", "prod-gpu-node-health-agent")
    assert agent.inputs["addonName"] == "eks-node-monitoring-agent"
    assert parent_of(p, agent).type == "gpufleet:eks:NodeHealth"


def test_eks_node_health_off():
    config = example_config("prod-eks")
    config["gpufleet:observability"] = {"nodeHealth": {"enabled": False}}
    p = plan_config(config, stack="nh-off", policies=False)
    assert not by_type(p, "gpufleet:eks:NodeHealth")
    assert {r.inputs.get("nodeRepairConfig") for r in by_type(p, "aws:eks/nodeGroup:NodeGroup")} == {None}


def test_gke_default_is_managed_prometheus_with_the_dcgm_package():
    cluster = one(planned("prod-gke"), "gcp:container/cluster:Cluster")
    assert cluster.inputs["monitoringConfig"] == {"enableComponents": ["SYSTEM_COMPONENTS", "DCGM"],
                                                  "managedPrometheus": {"enabled": True}}
    assert not by_type(planned("prod-gke"), "gpufleet:observability:Observability")


def test_a_backend_the_platform_cannot_run_is_refused():
    config = example_config("dev")
    config["gpufleet:observability"] = {"metrics": {"backend": "gke-managed"}}
    with pytest.raises(SpecError) as err:
        plan_config(config, stack="bad", policies=False)
    assert "gpufleet:observability.metrics.backend: not available on k3s (allowed: auto, kube-prometheus-stack, none) (got 'gke-managed')" in str(err.value)
