"""Component tests of gpufleet:k3s:NodeHealth (node-problem-detector) under mocks: children, names, parents, placement,
flags and the XID monitor config; the PodMonitor and alert with kube-prometheus-stack; off and AMD-only cases."""

import json

from gpufleet import labels, versions
from gpufleet.components.k3s.xid_monitor import CONFIG_KEY, monitor_config
from tests.helpers import by_type, example_config, one, parent_of, plan_config, planned
from tests.observability_plan import observed

COMP = "gpufleet:k3s:NodeHealth"
DS = "kubernetes:apps/v1:DaemonSet"
POD_MONITOR = "kubernetes:monitoring.coreos.com/v1:PodMonitor"


def _pool_expression(ds) -> dict:
    terms = ds.inputs["spec"]["template"]["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert len(terms) == 1
    exprs = {e["key"]: e for e in terms[0]["matchExpressions"]}
    assert exprs["kubernetes.io/os"] == {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}
    return exprs.get(labels.POOL_LABEL)


def _container(ds) -> dict:
    (container,) = ds.inputs["spec"]["template"]["spec"]["containers"]
    return container


def test_children_names_parents_and_rbac():
    p = planned("dev")
    comp = one(p, COMP, "dev-node-health")
    assert parent_of(p, comp).type == "gpufleet:index:GpuCluster"
    children = {r.name: r.type for r in p.resources if r.parent == comp.urn}
    assert children == {
        "dev-node-health-sa": "kubernetes:core/v1:ServiceAccount",
        "dev-node-health-binding": "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding",
        "dev-node-health-config": "kubernetes:core/v1:ConfigMap",
        "dev-node-health-daemonset": DS,
        "dev-node-health-gpu-daemonset": DS,
    }
    binding = one(p, "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding", "dev-node-health-binding")
    # upstream deployment/rbac.yaml: the API server's bootstrap ClusterRole for NPD.
    assert binding.inputs["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "system:node-problem-detector"}
    assert binding.inputs["subjects"] == [{"kind": "ServiceAccount", "name": "node-problem-detector", "namespace": "kube-system"}]
    sa = one(p, "kubernetes:core/v1:ServiceAccount", "dev-node-health-sa")
    assert sa.inputs["metadata"] == {"name": "node-problem-detector", "namespace": "kube-system"}
    # No monitoring stack in dev: nothing to scrape NPD, no PodMonitor.
    assert not by_type(p, POD_MONITOR)


def test_gpu_daemonset_runs_on_the_nvidia_pools_with_the_xid_monitor():
    p = planned("dev")
    gpu = one(p, DS, "dev-node-health-gpu-daemonset")
    assert gpu.inputs["metadata"]["name"] == "node-problem-detector-gpu"
    assert _pool_expression(gpu) == {"key": labels.POOL_LABEL, "operator": "In", "values": ["l4", "a100"]}
    container = _container(gpu)
    assert container["image"] == versions.NODE_PROBLEM_DETECTOR_IMAGE
    assert container["command"] == [
        "/node-problem-detector", "--logtostderr",
        "--config.system-log-monitor=/config/kernel-monitor.json,/config/readonly-monitor.json,/config/gpufleet/gpu-xid-monitor.json",
        "--prometheus-address=0.0.0.0", "--prometheus-port=20257",
    ]
    assert container["ports"] == [{"name": "metrics", "containerPort": 20257, "protocol": "TCP"}]
    assert container["securityContext"] == {"privileged": True}
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    assert mounts == {"/var/log": "log", "/dev/kmsg": "kmsg", "/etc/localtime": "localtime", "/config/gpufleet": "gpufleet-config"}
    volumes = {v["name"]: v for v in gpu.inputs["spec"]["template"]["spec"]["volumes"]}
    assert volumes["kmsg"]["hostPath"] == {"path": "/dev/kmsg"}
    assert volumes["gpufleet-config"]["configMap"]["name"] == "node-problem-detector-gpufleet"
    # Upstream's tolerations: every NoSchedule/NoExecute taint (the GPU taint included).
    assert gpu.inputs["spec"]["template"]["spec"]["tolerations"] == [
        {"effect": "NoSchedule", "operator": "Exists"}, {"effect": "NoExecute", "operator": "Exists"}]
    config = one(p, "kubernetes:core/v1:ConfigMap", "dev-node-health-config")
    assert json.loads(config.inputs["data"][CONFIG_KEY]) == monitor_config()
    assert any("dev-node-health-config" in d or d == config.urn for d in gpu.dependencies)


def test_every_other_node_runs_upstreams_kernel_monitors_only():
    ds = one(planned("dev"), DS, "dev-node-health-daemonset")
    assert ds.inputs["metadata"]["name"] == "node-problem-detector"
    assert _pool_expression(ds) == {"key": labels.POOL_LABEL, "operator": "NotIn", "values": ["l4", "a100"]}
    assert "--config.system-log-monitor=/config/kernel-monitor.json,/config/readonly-monitor.json" in _container(ds)["command"]
    assert "gpufleet-config" not in {v["name"] for v in ds.inputs["spec"]["template"]["spec"]["volumes"]}
    selectors = {r.name: r.inputs["spec"]["selector"]["matchLabels"] for r in by_type(planned("dev"), DS) if "node-health" in r.name}
    # Two DaemonSets, disjoint selectors: one NPD pod per node.
    assert selectors == {"dev-node-health-daemonset": {"app": "node-problem-detector", "app.kubernetes.io/component": "node"},
                         "dev-node-health-gpu-daemonset": {"app": "node-problem-detector", "app.kubernetes.io/component": "gpu"}}


def test_amd_pools_get_no_xid_monitor():
    p = planned("amd-lab")
    gpu = one(p, DS, "amd-lab-node-health-gpu-daemonset")
    assert _pool_expression(gpu)["values"] == ["l4"]
    assert _pool_expression(one(p, DS, "amd-lab-node-health-daemonset")) == {
        "key": labels.POOL_LABEL, "operator": "NotIn", "values": ["l4"]}


def test_without_nvidia_pools_only_the_kernel_monitors_run():
    config = example_config("amd-lab")
    config["gpufleet:nodePools"] = [p for p in config["gpufleet:nodePools"] if p["gpu"] != "L4"]
    config["gpufleet:addons"] = {}
    p = plan_config(config, stack="amd-only", policies=False)
    comp = one(p, COMP)
    assert {r.name for r in p.resources if r.parent == comp.urn} == {
        "amd-lab-node-health-sa", "amd-lab-node-health-binding", "amd-lab-node-health-daemonset"}
    assert _pool_expression(one(p, DS, "amd-lab-node-health-daemonset")) is None


def test_node_health_off_installs_nothing():
    config = example_config("dev")
    config["gpufleet:observability"] = {"nodeHealth": {"enabled": False}}
    p = plan_config(config, stack="nh-off", policies=False)
    assert not by_type(p, COMP)
    assert not [r for r in by_type(p, DS) if "node-health" in r.name]


def test_with_kube_prometheus_stack_a_pod_monitor_and_the_gpu_condition_alert():
    p = observed()
    monitor = one(p, POD_MONITOR, "teams-node-health-pod-monitor")
    assert parent_of(p, monitor).name == "teams-node-health"
    assert monitor.inputs["spec"]["selector"] == {"matchLabels": {"app": "node-problem-detector"}}
    assert monitor.inputs["spec"]["podMetricsEndpoints"][0]["port"] == "metrics"
    # It waits for the chart that installs the PodMonitor CRD.
    assert any("observability-release" in d for d in monitor.dependencies)
    rule = one(p, "kubernetes:monitoring.coreos.com/v1:PrometheusRule")
    health = next(g for g in rule.inputs["spec"]["groups"] if g["name"] == "gpufleet-gpu-health")["rules"]
    alert = next(r for r in health if r["alert"] == "GpuNodeUnhealthy")
    assert alert["expr"] == 'problem_gauge{type="GpuUnhealthy"} > 0'
    assert alert["labels"]["severity"] == "critical" and "cordon" in alert["annotations"]["runbook"].lower()


def test_eks_and_gke_stacks_have_no_npd():
    for stack in ("prod-eks", "prod-gke"):
        assert not by_type(planned(stack), COMP)
    rule_groups = [r for r in by_type(planned("ai-on-eks"), "kubernetes:monitoring.coreos.com/v1:PrometheusRule")]
    alerts = {r["alert"] for rule in rule_groups for g in rule.inputs["spec"]["groups"] for r in g["rules"]}
    assert alerts and "GpuNodeUnhealthy" not in alerts
