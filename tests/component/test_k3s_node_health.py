"""Component tests of gpufleet:k3s:NodeHealth (node-problem-detector) under mocks: children, names, parents, placement,
flags and the XID monitor config; the PodMonitor and alert with kube-prometheus-stack; off and AMD-only cases."""

import json

from gpufleet.base import catalog, labels, versions
from gpufleet.base.node_labels import pool_labels
from gpufleet.components.k3s.xid_monitor import CONFIG_KEY, monitor_config
from tests.helpers import by_type, example_config, one, parent_of, plan_config, planned
from tests.observability_plan import observed

COMP = "gpufleet:k3s:NodeHealth"
DS = "kubernetes:apps/v1:DaemonSet"
POD_MONITOR = "kubernetes:monitoring.coreos.com/v1:PodMonitor"


def _terms(ds) -> list[list[dict]]:
    """The node selector terms (ORed), each a list of match expressions (ANDed), Linux-only every one."""
    terms = ds.inputs["spec"]["template"]["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    out = [t["matchExpressions"] for t in terms]
    assert all(t[0] == {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]} for t in out)
    return [t[1:] for t in out]


AMD = sorted(n for n, g in catalog.gpu_models().items() if g.amd)
GPU_NODES = [[{"key": labels.GPU_NODE_LABEL, "operator": "In", "values": ["true"]},
              {"key": labels.GPU_MODEL_LABEL, "operator": "NotIn", "values": AMD}]]
OTHER_NODES = [[{"key": labels.GPU_NODE_LABEL, "operator": "NotIn", "values": ["true"]}],
               [{"key": labels.GPU_MODEL_LABEL, "operator": "In", "values": AMD}]]


def _schedules_on(ds, node_labels: dict) -> bool:
    """Kubernetes' node affinity semantics for In/NotIn (NotIn matches a node without the label)."""
    def holds(e):
        value = node_labels.get(e["key"])
        return value in e["values"] if e["operator"] == "In" else value not in e["values"]
    return any(all(holds(e) for e in term) for term in _terms(ds))


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


def test_gpu_daemonset_runs_on_the_nvidia_gpu_nodes_with_the_xid_monitor():
    p = planned("dev")
    gpu = one(p, DS, "dev-node-health-gpu-daemonset")
    assert gpu.inputs["metadata"]["name"] == "node-problem-detector-gpu"
    assert _terms(gpu) == GPU_NODES
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
    assert _terms(ds) == OTHER_NODES
    assert "--config.system-log-monitor=/config/kernel-monitor.json,/config/readonly-monitor.json" in _container(ds)["command"]
    assert "gpufleet-config" not in {v["name"] for v in ds.inputs["spec"]["template"]["spec"]["volumes"]}
    selectors = {r.name: r.inputs["spec"]["selector"]["matchLabels"] for r in by_type(planned("dev"), DS) if "node-health" in r.name}
    # Two DaemonSets, disjoint selectors.
    assert selectors == {"dev-node-health-daemonset": {"app": "node-problem-detector", "app.kubernetes.io/component": "node"},
                         "dev-node-health-gpu-daemonset": {"app": "node-problem-detector", "app.kubernetes.io/component": "gpu"}}


def test_exactly_one_npd_per_node_and_the_xid_monitor_only_on_nvidia_nodes():
    """Each pool's real node labels (gpufleet.base.node_labels.pool_labels), a CPU node and an unlabelled one."""
    p = planned("amd-lab")
    gpu, other = one(p, DS, "amd-lab-node-health-gpu-daemonset"), one(p, DS, "amd-lab-node-health-daemonset")
    nodes = {pool.name: pool_labels(pool) for pool in p.spec.node_pools}
    nodes["cpu"] = {"kubernetes.io/os": "linux"}
    for name, node in nodes.items():
        node = {"kubernetes.io/os": "linux", **node}
        amd = node.get(labels.GPU_MODEL_LABEL) in AMD
        nvidia = node.get(labels.GPU_NODE_LABEL) == "true" and not amd
        assert (_schedules_on(gpu, node), _schedules_on(other, node)) == (nvidia, not nvidia), name
    assert {n for n, node in nodes.items() if _schedules_on(gpu, {"kubernetes.io/os": "linux", **node})} == {"l4"}


def test_adding_a_pool_leaves_npd_unchanged():
    """Placement by labels: a new pool (or a new GPU model) does not touch NPD's pod templates (a restart would
    reset a GpuUnhealthy condition still waiting for repair)."""
    config = example_config("dev")
    config["gpufleet:nodePools"] = config["gpufleet:nodePools"] + [
        {"name": "h100", "gpu": "H100-80GB", "gpusPerNode": 8, "pricePerNodeHour": 30.0,
         "hosts": [{"name": "gpu-h100-1", "address": "192.0.2.51"}]}]
    grown = plan_config(config, stack="dev", policies=False)
    for type_, name in ((DS, "dev-node-health-daemonset"), (DS, "dev-node-health-gpu-daemonset"),
                        ("kubernetes:core/v1:ConfigMap", "dev-node-health-config")):
        assert one(grown, type_, name).inputs == one(planned("dev"), type_, name).inputs, name


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
