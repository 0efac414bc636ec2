"""MetricsExporters: kube-state-metrics and node-exporter for a metrics backend that runs outside the cluster (amp:
the AWS managed collector scrapes them; kube-prometheus-stack brings its own).

Both are the prometheus-community charts at the versions kube-prometheus-stack itself depends on
(gpufleet/base/versions.py), in namespace `monitoring`:
- kube-state-metrics with the pool label allowed on `kube_node_labels` (`metricLabelsAllowlist`: the chart's
  values.yaml at the pinned tag shows `metricLabelsAllowlist: []`; items `<resource>=[<label>,...]`, the
  `--metric-labels-allowlist` flag), so the per-pool and pending-pod alerts work as on the kube-prometheus-stack path;
- node-exporter as the chart ships it: a DaemonSet on every node (its default toleration `NoSchedule: Exists` covers
  the GPU pools' taints) with hostNetwork, hostPID and the host's root file system: the namespace is privileged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pulumi
import pulumi_kubernetes as k8s

from gpufleet.base import labels, versions
from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.components.helm_chart import pinned_release

NAMESPACE = "monitoring"


@dataclass(frozen=True)
class MetricsExportersArgs:
    namespace: str = NAMESPACE
    """Namespace both exporters run in (privileged: node-exporter reads the host)."""
    node_exporter: bool = True
    """Install node-exporter (host CPU, memory, disk and network of every node, GPU nodes included); default: on."""


def kube_state_metrics_values() -> dict:
    """kube_node_labels carries only allowed labels: the pool label maps nodes (and their GPUs) to pools."""
    return {"metricLabelsAllowlist": [f"nodes=[{labels.POOL_LABEL}]"]}


class MetricsExporters(pulumi.ComponentResource):
    """`gpufleet:observability:MetricsExporters`: kube-state-metrics and node-exporter (the versions kube-prometheus-
    stack pins) in namespace `monitoring` (`<name>-ns`), for a metrics backend that scrapes from outside the
    cluster."""

    def __init__(self, name: str, args: MetricsExportersArgs, access: ClusterAccess, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:observability:MetricsExporters", name, None, opts)
        self.namespace = k8s.core.v1.Namespace(
            f"{name}-ns",
            metadata={"name": args.namespace, "labels": {"pod-security.kubernetes.io/enforce": "privileged"}},
            opts=pulumi.ResourceOptions(parent=self, provider=access.provider),
        )
        namespace = self.namespace.metadata["name"]
        self.kube_state_metrics = pinned_release(
            f"{name}-kube-state-metrics", versions.KUBE_STATE_METRICS, namespace, kube_state_metrics_values(), access,
            parent=self, timeout=600,
        )
        self.node_exporter = None
        if args.node_exporter:
            self.node_exporter = pinned_release(
                f"{name}-node-exporter", versions.PROMETHEUS_NODE_EXPORTER, namespace, {}, access, parent=self,
                timeout=600,
            )
        self.register_outputs({"namespace": args.namespace, "kubeStateMetrics": versions.KUBE_STATE_METRICS.version,
                               "nodeExporter": versions.PROMETHEUS_NODE_EXPORTER.version if args.node_exporter else None})
