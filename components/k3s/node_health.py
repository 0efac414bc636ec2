"""K3sNodeHealth: node-problem-detector (NPD) on the k3s nodes, with gpufleet's XID check on the NVIDIA GPU nodes.

EKS and GKE repair GPU nodes themselves (components/eks/node_health.py, GKE auto repair); on your own hosts nothing
does. NPD (kubernetes/node-problem-detector, image pinned in gpufleet/base/versions.py) reads each node's kernel log and
writes what it finds to the API server: permanent problems as node conditions, temporary ones as events. Built
from upstream's plain manifests at tag v1.36.0 (there is no NPD chart in the reference data):

- deployment/rbac.yaml: a ServiceAccount bound to the `system:node-problem-detector` ClusterRole, which every API
  server creates itself (kubernetes plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go: get nodes, patch
  nodes/status, create/patch/update events).
- deployment/node-problem-detector.yaml: a privileged DaemonSet on every Linux node that reads /dev/kmsg and
  /var/log, 10m CPU and 80Mi memory, tolerating every NoSchedule and NoExecute taint (a health agent must keep
  running on a tainted node), with upstream's kernel monitors. Those monitor files are the image's own: its
  Dockerfile copies config/ to /config and runs `--config.system-log-monitor=/config/kernel-monitor.json,
  /config/readonly-monitor.json` (upstream's manifest also loads docker-monitor.json, a journald watcher of the
  docker service, which k3s's containerd hosts do not run).
- two DaemonSets, one pod per node: `node-problem-detector-gpu` on the NVIDIA GPU nodes (gpufleet's labels:
  `gpufleet.io/gpu=true` and a `gpufleet.io/gpu-model` that is not one of the catalog's AMD models), which also
  loads the XID monitor (components/k3s/xid_monitor.py) from a ConfigMap mounted at /config/gpufleet: condition
  `GpuUnhealthy` for the XID classes that mean a broken GPU, events for application XIDs; `node-problem-detector`
  on every other node (CPU nodes, AMD pools), with the kernel monitors only. Placement reads labels, never pool
  names: adding or removing a pool leaves both pod templates unchanged, so NPD pods do not restart (a restart
  resets every condition to False, which would hide a GPU still waiting for repair).
- metrics: NPD's Prometheus exporter (README "For Prometheus exporter": `--prometheus-port` 20257, bound to
  127.0.0.1 unless `--prometheus-address` says otherwise) serves `problem_counter{reason}` and
  `problem_gauge{type,reason}` (pkg/problemmetrics/problem_metrics.go); with kube-prometheus-stack a PodMonitor
  scrapes it and the alert `GpuNodeUnhealthy` (components/observability/alerts.py) fires on the condition.

NPD only reports; it never cordons, drains or reboots. What to do is in docs/observability.md (cordon and drain;
reboot only when you decide to).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Sequence

import pulumi
import pulumi_kubernetes as k8s

from gpufleet.base import catalog, labels, versions
from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.components.k3s.xid_monitor import CONFIG_KEY, monitor_json

APP = "node-problem-detector"
# NPD's defaults (cmd/options/options.go at v1.36.0): --prometheus-port 20257.
METRICS_PORT = 20257
IMAGE_CONFIG_DIR = "/config"  # the image's upstream monitors (Dockerfile: COPY config/ /config)
GPUFLEET_CONFIG_DIR = "/config/gpufleet"
UPSTREAM_MONITORS = ("kernel-monitor.json", "readonly-monitor.json")


def _amd_models() -> tuple[str, ...]:
    return tuple(sorted(name for name, gpu in catalog.gpu_models().items() if gpu.amd))


@dataclass(frozen=True)
class K3sNodeHealthArgs:
    non_nvidia_models: tuple[str, ...] = field(default_factory=_amd_models)
    """GPU models (`gpufleet.io/gpu-model`) whose nodes get no XID monitor; default: the catalog's AMD models. Every
    other GPU node (`gpufleet.io/gpu=true`) runs NPD with the XID monitor, as the NVIDIA GPU Operator serves every
    non-AMD pool."""
    namespace: str = "kube-system"
    """Where NPD runs (upstream's manifests use kube-system)."""
    pod_monitor: bool = False
    """Create a PodMonitor (monitoring.coreos.com/v1) for NPD's metrics port: only with kube-prometheus-stack, whose
    CRDs must exist first (pass the chart's release as `crds_ready`). Default: off, nothing scrapes NPD."""
    image: str = versions.NODE_PROBLEM_DETECTOR_IMAGE
    """The NPD image; default: the pinned upstream release."""
    tolerations: list[dict] = field(default_factory=lambda: [
        {"effect": "NoSchedule", "operator": "Exists"}, {"effect": "NoExecute", "operator": "Exists"}])
    """Upstream's: every NoSchedule and NoExecute taint (the GPU and spot taints, a node's problem taints)."""


def _affinity(non_nvidia_models: Sequence[str], gpu: bool) -> dict:
    """gpu: NVIDIA GPU nodes. Otherwise their complement: nodes that are not GPU nodes, or GPU nodes of a non-NVIDIA
    model (node selector terms are ORed; NotIn also matches a node without the label)."""
    linux = {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}
    gpu_node = {"key": labels.GPU_NODE_LABEL, "operator": "In" if gpu else "NotIn", "values": ["true"]}
    models = list(non_nvidia_models)
    if gpu:
        terms = [[linux, gpu_node, *([{"key": labels.GPU_MODEL_LABEL, "operator": "NotIn", "values": models}] if models else [])]]
    else:
        terms = [[linux, gpu_node], *([[linux, {"key": labels.GPU_MODEL_LABEL, "operator": "In", "values": models}]] if models else [])]
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": t} for t in terms]}}}


def daemonset_spec(args: K3sNodeHealthArgs, gpu: bool, config_map: Optional[str] = None) -> dict:
    """The DaemonSet's spec: upstream's deployment/node-problem-detector.yaml (v1.36.0) with gpufleet's placement,
    monitor list and a metrics port Prometheus can reach."""
    role = "gpu" if gpu else "node"
    pod_labels = {"app": APP, "app.kubernetes.io/component": role}
    monitors = [f"{IMAGE_CONFIG_DIR}/{m}" for m in UPSTREAM_MONITORS]
    mounts = [
        {"name": "log", "mountPath": "/var/log", "readOnly": True},
        {"name": "kmsg", "mountPath": "/dev/kmsg", "readOnly": True},
        # NPD's timestamps in the host's time zone (upstream's comment).
        {"name": "localtime", "mountPath": "/etc/localtime", "readOnly": True},
    ]
    volumes = [
        {"name": "log", "hostPath": {"path": "/var/log/"}},
        {"name": "kmsg", "hostPath": {"path": "/dev/kmsg"}},
        {"name": "localtime", "hostPath": {"path": "/etc/localtime"}},
    ]
    if gpu:
        monitors.append(f"{GPUFLEET_CONFIG_DIR}/{CONFIG_KEY}")
        mounts.append({"name": "gpufleet-config", "mountPath": GPUFLEET_CONFIG_DIR, "readOnly": True})
        volumes.append({"name": "gpufleet-config", "configMap": {"name": config_map, "items": [{"key": CONFIG_KEY, "path": CONFIG_KEY}]}})
    container = {
        "name": APP,
        "image": args.image,
        "imagePullPolicy": "IfNotPresent",
        "command": [
            "/node-problem-detector", "--logtostderr",
            f"--config.system-log-monitor={','.join(monitors)}",
            # Upstream binds the exporter to 127.0.0.1 by default: Prometheus scrapes the pod's IP.
            "--prometheus-address=0.0.0.0", f"--prometheus-port={METRICS_PORT}",
        ],
        "ports": [{"name": "metrics", "containerPort": METRICS_PORT, "protocol": "TCP"}],
        "resources": {"limits": {"cpu": "10m", "memory": "80Mi"}, "requests": {"cpu": "10m", "memory": "80Mi"}},
        "securityContext": {"privileged": True},
        "env": [{"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
        "volumeMounts": mounts,
    }
    return {
        "selector": {"matchLabels": pod_labels},
        "template": {
            "metadata": {"labels": pod_labels},
            "spec": {
                "affinity": _affinity(args.non_nvidia_models, gpu),
                "containers": [container],
                "serviceAccountName": APP,
                "tolerations": list(args.tolerations),
                "volumes": volumes,
            },
        },
    }


def pod_monitor_spec(namespace: str) -> dict:
    """Scrape both DaemonSets' pods; the node name becomes the `node` label (kube-state-metrics' node label)."""
    return {
        "namespaceSelector": {"matchNames": [namespace]},
        "selector": {"matchLabels": {"app": APP}},
        "podMetricsEndpoints": [{
            "port": "metrics",
            "relabelings": [{"sourceLabels": ["__meta_kubernetes_pod_node_name"], "targetLabel": "node", "action": "replace"}],
        }],
    }


class K3sNodeHealth(pulumi.ComponentResource):
    """node-problem-detector on every node, with the XID check on the NVIDIA GPU pools' nodes."""

    def __init__(self, name: str, args: K3sNodeHealthArgs, access: ClusterAccess, crds_ready: Sequence[pulumi.Resource] = (),
                 opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:k3s:NodeHealth", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, provider=access.provider, depends_on=access.ready or [])
        ns = args.namespace
        self.service_account = k8s.core.v1.ServiceAccount(
            f"{name}-sa", metadata={"name": APP, "namespace": ns}, opts=child)
        self.binding = k8s.rbac.v1.ClusterRoleBinding(
            f"{name}-binding",
            metadata={"name": f"gpufleet-{APP}"},
            role_ref={"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "system:node-problem-detector"},
            subjects=[{"kind": "ServiceAccount", "name": APP, "namespace": ns}],
            opts=child,
        )
        after_sa = pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[self.service_account]))
        self.daemonset = k8s.apps.v1.DaemonSet(
            f"{name}-daemonset", metadata={"name": APP, "namespace": ns, "labels": {"app": APP}},
            spec=daemonset_spec(args, gpu=False), opts=after_sa,
        )
        # Always created (no pod where no NVIDIA GPU node exists): a first NVIDIA pool then changes nothing here.
        config_name = f"{APP}-gpufleet"
        self.config = k8s.core.v1.ConfigMap(
            f"{name}-config", metadata={"name": config_name, "namespace": ns, "labels": {"app": APP}},
            data={CONFIG_KEY: monitor_json()}, opts=child,
        )
        self.gpu_daemonset = k8s.apps.v1.DaemonSet(
            f"{name}-gpu-daemonset",
            metadata={"name": f"{APP}-gpu", "namespace": ns, "labels": {"app": APP}},
            spec=daemonset_spec(args, gpu=True, config_map=config_name),
            opts=pulumi.ResourceOptions.merge(after_sa, pulumi.ResourceOptions(depends_on=[self.config])),
        )
        self.pod_monitor = None
        if args.pod_monitor:
            self.pod_monitor = k8s.apiextensions.CustomResource(
                f"{name}-pod-monitor", api_version="monitoring.coreos.com/v1", kind="PodMonitor",
                metadata={"name": APP, "namespace": ns, "labels": {"app": APP}},
                spec=pod_monitor_spec(ns),
                opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=list(crds_ready))),
            )
        self.register_outputs({"image": args.image, "metricsPort": METRICS_PORT})
