"""Observability: the stack's own metrics pipeline, GPU alerts and dashboards (gpufleet:observability).

With backend kube-prometheus-stack: the pinned chart in namespace `monitoring` (Prometheus with a persistent
volume, Alertmanager, Grafana with its dashboard sidecar, node-exporter, kube-state-metrics with the pool label
allowed on `kube_node_labels`), selecting every ServiceMonitor/PodMonitor/PrometheusRule in the cluster (not only
the chart's own), a PrometheusRule with gpufleet's GPU alerts and a ConfigMap with its dashboards. The DCGM exporter
itself is the GPU Operator's: GpuOperatorArgs.metrics turns on its ServiceMonitor with `honorLabels` (the exporter's
`pod`/`namespace`/`container` labels name the workload using the GPU; without honorLabels Prometheus renames them
`exported_pod`/`exported_namespace`) and the counter list the alerts need.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import pulumi
import pulumi_kubernetes as k8s

from gpufleet.base import labels, versions
from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.components.helm_chart import namespaced_release
from gpufleet.components.observability.alerts import POOL_SERIES_LABEL, rule_groups
from gpufleet.components.observability.dashboards import SIDECAR_LABEL, configmap_data, dashboards
from gpufleet.components.observability.pools import PoolFacts
from gpufleet.base.spec.features.observability import ObservabilitySpec

NAMESPACE = "monitoring"
# The Service prometheus-operator creates for every Prometheus it runs (`prometheus-operated`, port 9090 `web`):
# stable whatever the release's name (prometheus-operator Documentation/platform, "prometheus-operated" service).
PROMETHEUS_URL = f"http://prometheus-operated.{NAMESPACE}.svc:9090"


@dataclass(frozen=True)
class ObservabilityArgs:
    spec: ObservabilitySpec = ObservabilitySpec()
    """gpufleet:observability: retention, volume size, scrape interval, alert thresholds, dashboards on or off."""
    pools: list[PoolFacts] = field(default_factory=list)
    """The GPU pools (gpufleet.components.observability.pools.pool_facts): per-pool alerts and dashboard queries."""
    namespace: str = NAMESPACE
    """Namespace of the chart, the rules and the dashboards."""
    node_problem_detector: bool = False
    """node-problem-detector runs the XID check on the GPU nodes (k3s with nodeHealth on,
    components/k3s/node_health.py): add the alert on its `GpuUnhealthy` condition. Default: off (EKS and GKE repair
    GPU nodes themselves)."""
    system_tolerations: list[dict] = field(default_factory=list)
    """Tolerations of the nodes the monitoring pods should run on (e.g. a tainted system pool); default: none,
    they run wherever untainted capacity is (never on GPU nodes, which are tainted)."""
    apply_alerts: bool = True
    """Create the PrometheusRule of GPU alerts (when `spec.alerts` is on). Default: on; off where a GitOps engine
    applies it (gpufleet:gitops, gpufleet/base/gitops.py ALERTS)."""
    apply_dashboards: bool = True
    """Create the dashboards ConfigMap (when `spec.dashboards` is on). Default: on; off where a GitOps engine applies it
    (gpufleet/base/gitops.py DASHBOARDS)."""


def chart_values(args: ObservabilityArgs) -> dict:
    """kube-prometheus-stack values; every key path is in the chart's values.yaml (tests/upstream) except the
    Prometheus storageSpec (the Prometheus CRD's StorageSpec, shown commented in values.yaml) and the
    kube-state-metrics subchart's metricLabelsAllowlist (verified in tests/upstream/test_observability_upstream.py)."""
    metrics = args.spec.metrics
    prometheus_spec: dict = {
        "retention": metrics.retention,
        "scrapeInterval": metrics.scrape_interval,
        # Select every ServiceMonitor/PodMonitor/PrometheusRule, not only those labelled with this release: the GPU
        # Operator's DCGM exporter, KEDA's and Kueue's monitors and gpufleet's rules carry no release label.
        "serviceMonitorSelectorNilUsesHelmValues": False,
        "podMonitorSelectorNilUsesHelmValues": False,
        "ruleSelectorNilUsesHelmValues": False,
        "storageSpec": {"volumeClaimTemplate": {"spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": f"{metrics.storage_gib}Gi"}},
        }}},
    }
    if args.system_tolerations:
        prometheus_spec["tolerations"] = list(args.system_tolerations)
    return {
        "prometheus": {"prometheusSpec": prometheus_spec},
        "grafana": {"sidecar": {"dashboards": {"enabled": True, "label": "grafana_dashboard", "labelValue": "1", "searchNamespace": "ALL"}}},
        # kube_node_labels carries only allowed labels: the pool label maps nodes (and their GPUs) to pools.
        "kube-state-metrics": {"metricLabelsAllowlist": [f"nodes=[{labels.POOL_LABEL}]"]},
    }


class Observability(pulumi.ComponentResource):
    """kube-prometheus-stack (pinned) plus gpufleet's GPU alerts and dashboards, on the cluster's provider."""

    def __init__(self, name: str, args: ObservabilityArgs, access: ClusterAccess, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:observability:Observability", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, provider=access.provider)
        # node-exporter mounts the host's /proc and /sys with hostNetwork and hostPID: privileged pods.
        self.namespace, self.release = namespaced_release(
            name, versions.KUBE_PROMETHEUS_STACK, args.namespace, chart_values(args), access, parent=self,
            namespace_labels={"pod-security.kubernetes.io/enforce": "privileged"},
        )
        after_chart = pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[self.release]))
        self.rules = None
        if args.spec.alerts.enabled and args.apply_alerts:
            # The chart installs the monitoring.coreos.com CRDs: the rule waits for the release.
            self.rules = k8s.apiextensions.CustomResource(
                f"{name}-gpu-alerts",
                api_version="monitoring.coreos.com/v1",
                kind="PrometheusRule",
                metadata={"name": "gpufleet-gpu-alerts", "namespace": self.namespace.metadata["name"]},
                spec={"groups": rule_groups(args.pools, args.spec.alerts, node_problem_detector=args.node_problem_detector)},
                opts=after_chart,
            )
        self.dashboards = None
        if args.spec.dashboards.enabled and args.apply_dashboards:
            boards = dashboards(args.pools, args.spec.alerts.idle_utilization_percent)
            self.dashboards = k8s.core.v1.ConfigMap(
                f"{name}-dashboards",
                metadata={"name": "gpufleet-dashboards", "namespace": self.namespace.metadata["name"], "labels": dict(SIDECAR_LABEL)},
                data={key: configmap_data(board) for key, board in boards.items()},
                opts=child,
            )
        self.prometheus_url = PROMETHEUS_URL
        self.register_outputs({
            "prometheusUrl": PROMETHEUS_URL, "chartVersion": versions.KUBE_PROMETHEUS_STACK.version,
            "poolLabel": POOL_SERIES_LABEL,
        })
