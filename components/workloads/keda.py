"""KEDA: Deployments (inference servers) scale on metrics such as DCGM GPU utilization (examples/)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pulumi

from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.components.helm_chart import namespaced_release
from gpufleet import versions

NAMESPACE = "keda"


@dataclass(frozen=True)
class KedaArgs:
    namespace: str = NAMESPACE
    """Namespace KEDA's operator and metrics server run in."""
    prometheus_url: Optional[str] = None
    """The stack's Prometheus (gpufleet:observability with kube-prometheus-stack): KEDA's operator and metrics
    server get ServiceMonitors there, and the URL is this component's `prometheusServerAddress` output for
    ScaledObjects' `prometheus` triggers (examples/inference-keda-scaledobject.yaml). On GKE with the gke-managed
    backend: Managed Service for Prometheus's query API (components/observability/gke_managed.py), which needs a
    ClusterTriggerAuthentication with `podIdentity.provider: gcp` and IAM for KEDA's operator (docs/observability.md).
    Default: none (bring your own)."""
    service_monitors: bool = True
    """With `prometheus_url`: the chart's ServiceMonitors (prometheus-operator CRDs, kube-prometheus-stack). False on
    GKE's managed collection, which has no ServiceMonitor CRD: the metrics ports are opened and a PodMonitoring
    scrapes them instead."""
    expose_metrics: bool = False
    """Open the operator's and metrics server's Prometheus ports without ServiceMonitors, for a collector outside
    the cluster (gpufleet:observability.metrics.backend: amp scrapes them). Default: off."""


def keda_values(args: KedaArgs) -> dict:
    """KEDA chart values (keys from the chart's values.yaml at the pin: `prometheus.operator` and
    `prometheus.metricServer`, each with `enabled` and `serviceMonitor.enabled`)."""
    if args.prometheus_url:
        monitored = {"enabled": True, "serviceMonitor": {"enabled": args.service_monitors}}
        return {"prometheus": {"operator": dict(monitored), "metricServer": dict(monitored)}}
    if args.expose_metrics:
        return {"prometheus": {"operator": {"enabled": True}, "metricServer": {"enabled": True}}}
    return {}


class Keda(pulumi.ComponentResource):
    def __init__(self, name: str, args: KedaArgs, access: ClusterAccess, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:addons:Keda", name, None, opts)
        self.namespace, self.release = namespaced_release(name, versions.KEDA, args.namespace, keda_values(args), access, parent=self)
        self.namespace_name = args.namespace
        self.prometheus_server_address = args.prometheus_url
        self.register_outputs({"namespace": args.namespace, "chartVersion": versions.KEDA.version,
                               "prometheusServerAddress": args.prometheus_url})
