"""gpufleet:observability — day 2: metrics, GPU alerts, dashboards and node health/repair.

Defaults are chosen by what they cost and what they need (docs/observability.md):
- metrics `backend: auto` is the managed Prometheus on GKE (Managed Service for Prometheus: collection runs in
  GKE's own system pods and is billed per ingested sample, not by the hour; GKE's managed DCGM package is what
  exports GPU metrics there, since GKE runs its own GPU stack) and **none** on EKS and k3s. A self-run Prometheus
  (kube-prometheus-stack) holds a persistent volume (a priced EBS claim on EKS) and runs on the system nodes, so
  it is an explicit choice there: `backend: kube-prometheus-stack`. The advisory policy `gpu-observability`
  says so on every stack with GPU pools and no metrics pipeline.
- `backend: amp` (EKS only) is Amazon Managed Service for Prometheus: a workspace (or `ampWorkspaceArn`, one you
  have), an AWS managed collector (scraper) reading the cluster from inside its VPC, and gpufleet's alert rules as a
  rule group namespace in the workspace. The collector is billed per hour it runs plus per sample; the workspace per
  sample ingested and stored (docs/observability.md).
- node health is on: the EKS node monitoring agent add-on and managed node auto repair are free; GKE pools
  auto-repair already (except flex-start/queued pools, which GKE does not repair: capacity code turns it off); on
  k3s node-problem-detector reports broken GPUs as a node condition and never repairs on its own.
"""

import re
from typing import Literal, Optional

from pydantic import Field

from gpufleet.base import platforms
from gpufleet.base.spec.base import Model

NAMESPACE = "gpufleet"
# Prometheus duration (prometheus-operator CRD `Duration` pattern, crd-prometheusrules.yaml `for`).
DURATION = r"^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$"

# An AWS managed collector refuses a scrape interval under 30 seconds (Amazon Managed Service for Prometheus User
# Guide, "Using an AWS managed collector", Scraper limitations:
# docs.aws.amazon.com/prometheus/latest/userguide/AMP-collector-how-to.html#AMP-collector-limits).
AMP_MIN_SCRAPE_SECONDS = 30
# A workspace ARN as CloudFormation's AWS::APS::RuleGroupsNamespace `Workspace` property accepts it (AWS CloudFormation
# Template Reference, aws-resource-aps-rulegroupsnamespace: pattern below); groups: region, workspace id.
AMP_WORKSPACE_ARN = r"^arn:(?:aws|aws-us-gov|aws-cn):aps:([a-z0-9-]+):[0-9]+:workspace/([a-zA-Z0-9-]+)$"
# An SNS topic ARN (Amazon SNS API Reference, Topic ARN: arn:<partition>:sns:<region>:<account>:<name>, names of 1-256
# letters, digits, hyphens and underscores, FIFO topics ending in .fifo); groups: region, topic name. AMP's alert
# manager sends to a *standard* topic only (AMP User Guide, "Configure alert manager to send messages to your Amazon
# SNS topic": "a (new or existing) Standard type Amazon SNS topic"), so a .fifo name is refused by the check below.
SNS_TOPIC_ARN = r"^arn:(?:aws|aws-us-gov|aws-cn):sns:([a-z0-9-]+):[0-9]{12}:([A-Za-z0-9_-]{1,256}(?:\.fifo)?)$"
# A Cloud Monitoring notification channel's resource name (Cloud Monitoring API v3, projects.notificationChannels,
# NotificationChannel.name: "projects/[PROJECT_ID_OR_NUMBER]/notificationChannels/[CHANNEL_ID]"), which
# AlertPolicy.notificationChannels lists.
NOTIFICATION_CHANNEL = r"^projects/[^/]+/notificationChannels/[^/]+$"
_DURATION_UNITS = {"y": 365 * 86400, "w": 7 * 86400, "d": 86400, "h": 3600, "m": 60, "s": 1, "ms": 0.001}

# Which of them a platform offers, and which `auto` is there, are its traits (AddonTraits.metrics_backends,
# default_metrics_backend), with the source of each.
Backend = Literal["auto", "kube-prometheus-stack", "gke-managed", "amp", "none"]
# What a backend is, for the code that wires it (so that code asks these, not a backend's or a platform's name):
# the backends that scrape the GPU Operator's DCGM exporter (and so get gpufleet's counter list), and the managed ones
# (a cloud's query API instead of an in-cluster Prometheus, and no ServiceMonitor CRD).
SCRAPES_GPU_OPERATOR_DCGM = ("kube-prometheus-stack", "amp")
MANAGED_BACKENDS = ("amp", "gke-managed")


class MetricsSpec(Model):
    """Where GPU, node and add-on metrics go."""

    backend: Backend = "auto"
    """auto: gke-managed on GKE, none on EKS and k3s (a self-run Prometheus has a priced volume: opt in).
    kube-prometheus-stack: Prometheus, Alertmanager, Grafana, node-exporter and kube-state-metrics (pinned chart)
    in namespace `monitoring`, scraping the DCGM exporter with the workload's pod and namespace labels kept.
    gke-managed: GKE Managed Service for Prometheus with GKE's DCGM metrics package, gpufleet's alerts as Cloud
    Monitoring alert policies, a Cloud Monitoring dashboard, and PodMonitorings for KEDA and Kueue. amp (EKS):
    Amazon Managed Service for Prometheus with an AWS managed collector (scraper) and the alert rules in the workspace.
    none: no metrics pipeline."""
    retention: str = Field(default="15d", pattern=DURATION)
    """kube-prometheus-stack: how long Prometheus keeps samples (`prometheus.prometheusSpec.retention`)."""
    storage_gib: int = Field(default=50, ge=1, le=16384)
    """kube-prometheus-stack: size of Prometheus's persistent volume (default StorageClass); priced in the plan."""
    scrape_interval: str = Field(default="30s", pattern=DURATION)
    """kube-prometheus-stack and amp: how often every target is scraped (the DCGM exporter's own ServiceMonitor: 15s).
    amp: at least 30s (the AWS managed collector's minimum). gke-managed: the interval of gpufleet's PodMonitorings
    (KEDA, Kueue); GKE's DCGM scrape is GKE's own."""
    amp_workspace_arn: Optional[str] = Field(default=None, pattern=AMP_WORKSPACE_ARN)
    """amp: an existing Amazon Managed Service for Prometheus workspace (its ARN, same region as the cluster) to send
    metrics and the alert rules to. Default: none, gpufleet creates a workspace for the stack."""


class AlertsSpec(Model):
    """GPU alerts, each with a runbook line: a PrometheusRule with kube-prometheus-stack; a rule group namespace in
    the workspace with amp; Cloud Monitoring alert policies with PromQL conditions with gke-managed (only the alerts
    GKE's managed DCGM metrics can feed: docs/observability.md). None with backend none."""

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
    notification_channels: list[str] = Field(default_factory=list)
    """gke-managed: Cloud Monitoring notification channels (`projects/<project>/notificationChannels/<id>`, made in
    Cloud Monitoring: e-mail, Slack, PagerDuty, Pub/Sub...) every gpufleet alert policy notifies. Default: none, so
    an alert opens an incident in Cloud Monitoring and tells nobody."""
    sns_topic_arn: Optional[str] = Field(default=None, pattern=SNS_TOPIC_ARN)
    """amp: a standard Amazon SNS topic the workspace's alert manager sends every gpufleet alert to (gpufleet writes
    the workspace's alert manager definition; the topic's access policy must let `aps.amazonaws.com` publish:
    docs/observability.md). Default: none, so alerts fire in the workspace and reach nobody."""


class DashboardsSpec(Model):
    enabled: bool = True
    """kube-prometheus-stack: Grafana dashboards as ConfigMaps the Grafana sidecar loads (NVIDIA's DCGM dashboard
    and the gpufleet per-pool dashboard). gke-managed: a Cloud Monitoring dashboard with PromQL charts (GPUs present
    vs allocated, utilization, memory, power, temperature, idle allocated GPUs, each pool's GPU-hour price). amp: none
    (AMP has no Grafana: docs/observability.md)."""


class NodeHealthSpec(Model):
    """Detect broken GPU nodes and repair them."""

    enabled: bool = True
    """EKS: the eks-node-monitoring-agent add-on and managed node auto repair (nodeRepairConfig) on GPU node groups.
    GKE: GPU pools auto-repair (GKE does not repair flex-start/queued pools). Both free of charge.
    k3s: node-problem-detector (pinned) on every node, with an XID check on the NVIDIA GPU pools' nodes that sets the
    node condition `GpuUnhealthy` (alerted on with kube-prometheus-stack); detection only: cordon, drain and any
    reboot stay yours (docs/observability.md, "Node health and repair")."""


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
        """The metrics backend `auto` resolves to on `platform` (by name): its AddonTraits.default_metrics_backend."""
        if self.metrics.backend != "auto":
            return self.metrics.backend
        return platforms.get(platform).addons.default_metrics_backend


def duration_seconds(text: str) -> float:
    """A Prometheus duration (`DURATION`) in seconds: 1m30s -> 90."""
    return sum(int(n) * _DURATION_UNITS[u] for n, u in re.findall(r"([0-9]+)(ms|y|w|d|h|m|s)", text))


def sns_topic_region(arn: str) -> str:
    """The region in an SNS topic ARN (`SNS_TOPIC_ARN`): what the alert manager's SigV4 settings name."""
    match = re.match(SNS_TOPIC_ARN, arn)
    if not match:
        raise ValueError(f"not an SNS topic ARN: {arn!r}")
    return match.group(1)


def amp_workspace_id(arn: str) -> str:
    """The workspace id (`ws-...`) in an AMP workspace ARN (what aws.amp.RuleGroupNamespace takes)."""
    match = re.match(AMP_WORKSPACE_ARN, arn)
    if not match:
        raise ValueError(f"not an AMP workspace ARN: {arn!r}")
    return match.group(2)
