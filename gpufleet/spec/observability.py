"""gpufleet:observability — day 2: metrics, GPU alerts, dashboards and node health/repair.

Defaults are chosen by what they cost and what they need (docs/observability.md):
- metrics `backend: auto` is the managed Prometheus on GKE (Managed Service for Prometheus: collection runs in
  GKE's own system pods and is billed per ingested sample, not by the hour; GKE's managed DCGM package is what
  exports GPU metrics there, since GKE runs its own GPU stack) and **none** on EKS and k3s. A self-run Prometheus
  (kube-prometheus-stack) holds a persistent volume (a priced EBS claim on EKS) and runs on the system nodes, so
  it is an explicit choice there: `backend: kube-prometheus-stack`. The advisory policy `gpu-observability`
  says so on every stack with GPU pools and no metrics pipeline.
- node health is on: the EKS node monitoring agent add-on and managed node auto repair are free; GKE pools
  auto-repair already (except flex-start/queued pools, which GKE does not repair: capacity code turns it off).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field

from gpufleet.spec.base import Model
from gpufleet.spec.errors import Problem

if TYPE_CHECKING:  # stack.py imports this module
    from gpufleet.spec.stack import StackSpec

NAMESPACE = "gpufleet"
_AT = f"{NAMESPACE}:observability"
# Prometheus duration (prometheus-operator CRD `Duration` pattern, crd-prometheusrules.yaml `for`).
DURATION = r"^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$"

Backend = Literal["auto", "kube-prometheus-stack", "gke-managed", "none"]
BACKENDS_BY_PLATFORM = {
    "eks": ("kube-prometheus-stack", "none"),
    "k3s": ("kube-prometheus-stack", "none"),
    # GKE runs its own GPU stack (no GPU Operator, so no DCGM exporter of ours): its GPU metrics come from GKE's
    # managed DCGM package, which reports to Managed Service for Prometheus.
    "gke": ("gke-managed", "none"),
}


class MetricsSpec(Model):
    """Where GPU, node and add-on metrics go."""

    backend: Backend = "auto"
    """auto: gke-managed on GKE, none on EKS and k3s (a self-run Prometheus has a priced volume: opt in).
    kube-prometheus-stack: Prometheus, Alertmanager, Grafana, node-exporter and kube-state-metrics (pinned chart)
    in namespace `monitoring`, scraping the DCGM exporter with the workload's pod and namespace labels kept.
    gke-managed: GKE Managed Service for Prometheus with GKE's DCGM metrics package, gpufleet's alerts as Cloud
    Monitoring alert policies, a Cloud Monitoring dashboard, and PodMonitorings for KEDA and Kueue.
    none: no metrics pipeline."""
    retention: str = Field(default="15d", pattern=DURATION)
    """kube-prometheus-stack: how long Prometheus keeps samples (`prometheus.prometheusSpec.retention`)."""
    storage_gib: int = Field(default=50, ge=1, le=16384)
    """kube-prometheus-stack: size of Prometheus's persistent volume (default StorageClass); priced in the plan."""
    scrape_interval: str = Field(default="30s", pattern=DURATION)
    """kube-prometheus-stack: how often every target is scraped (the DCGM exporter's own ServiceMonitor: 15s).
    gke-managed: the interval of gpufleet's PodMonitorings (KEDA, Kueue); GKE's DCGM scrape is GKE's own."""


class AlertsSpec(Model):
    """GPU alerts, each with a runbook line: a PrometheusRule with kube-prometheus-stack; Cloud Monitoring alert
    policies with PromQL conditions with gke-managed (only the alerts GKE's managed DCGM metrics can feed:
    docs/observability.md). None with backend none."""

    enabled: bool = True
    """Install the gpufleet GPU alert rules (kube-prometheus-stack: XID by class, ECC/row remap, fallen off the bus,
    NVLink, throttling, idle-but-allocated GPUs with their $/h, pending GPU pods, pools at maximum; gke-managed:
    idle-but-allocated GPUs with each pool's $/h, one Cloud Monitoring alert condition billed per month)."""
    idle_minutes: int = Field(default=30, ge=5, le=1440)
    """An allocated GPU below `idleUtilizationPercent` for this long is waste: alert with its hourly price."""
    idle_utilization_percent: int = Field(default=5, ge=1, le=50)
    """GPU utilization (DCGM_FI_DEV_GPU_UTIL) under which an allocated GPU counts as idle."""
    pending_minutes: int = Field(default=15, ge=1, le=1440)
    """A GPU pod pending this long means scale-from-zero (or quota) is broken."""


class DashboardsSpec(Model):
    enabled: bool = True
    """kube-prometheus-stack: Grafana dashboards as ConfigMaps the Grafana sidecar loads (NVIDIA's DCGM dashboard
    and the gpufleet per-pool dashboard). gke-managed: a Cloud Monitoring dashboard with PromQL charts (GPUs present
    vs allocated, utilization, memory, power, temperature, idle allocated GPUs, each pool's GPU-hour price)."""


class NodeHealthSpec(Model):
    """Detect broken GPU nodes and repair them."""

    enabled: bool = True
    """EKS: the eks-node-monitoring-agent add-on and managed node auto repair (nodeRepairConfig) on GPU node groups.
    GKE: GPU pools auto-repair (GKE does not repair flex-start/queued pools). Both free of charge."""


class ObservabilitySpec(Model):
    """Day 2: metrics, alerts, dashboards, node health."""

    metrics: MetricsSpec = MetricsSpec()
    """The metrics pipeline; default: managed on GKE, none elsewhere (see `backend`)."""
    alerts: AlertsSpec = AlertsSpec()
    """GPU alert rules, with a metrics backend that evaluates them."""
    dashboards: DashboardsSpec = DashboardsSpec()
    """GPU dashboards: Grafana (kube-prometheus-stack) or Cloud Monitoring (gke-managed)."""
    node_health: NodeHealthSpec = NodeHealthSpec()
    """Node problem detection and auto repair."""

    def backend(self, platform: str) -> str:
        """The metrics backend `auto` resolves to on `platform`."""
        if self.metrics.backend != "auto":
            return self.metrics.backend
        return "gke-managed" if platform == "gke" else "none"


def observability_checks(stack: str, spec: "StackSpec") -> list[Problem]:
    """A backend the platform cannot run."""
    platform = spec.cluster.platform
    chosen = spec.observability.metrics.backend
    allowed = BACKENDS_BY_PLATFORM[platform]
    if chosen != "auto" and chosen not in allowed:
        return [Problem(stack, f"{_AT}.metrics.backend", f"not available on {platform} (allowed: auto, {', '.join(allowed)})", chosen)]
    return []
