"""GkeManagedObservability: gpufleet's GPU alerts, dashboard and add-on scraping on GKE Managed Service for Prometheus.

Backend `gke-managed` (GKE's default): GKE itself runs collection and its DCGM exporter (the cluster's
monitoringConfig, components/gke/cluster.py). This component adds what gpufleet owns on top:

- **Alerts** as Cloud Monitoring alert policies with a PromQL condition (`conditionPrometheusQueryLanguage`), the
  runbook in `documentation.content`: the managed equivalent of a PrometheusRule that pulumi-gcp's typed inputs
  check. GKE's `Rules`/`ClusterRules` custom resources would do the same inside the cluster, but their CRD is not in
  ../shared/reference, so they could not be validated here. Only the alerts GKE's metrics can feed
  (components/observability/gke_alerts.py; the others are listed there and in docs/observability.md).
  `disableMetricValidation` is on: a new cluster whose GPU pools sit at zero has no DCGM series yet, and Cloud
  Monitoring would refuse a condition on a metric that does not exist (pulumi-gcp AlertPolicy docstring of
  `disable_metric_validation`).
- **A Cloud Monitoring dashboard** (components/observability/gke_dashboard.py).
- **PodMonitoring** (monitoring.googleapis.com/v1) for KEDA's operator and metrics server when KEDA is on, so their
  metrics reach Managed Service for Prometheus (KEDA chart at its pin, versions.KEDA: pods labelled
  `app: keda-operator` and `app: keda-operator-metrics-apiserver`, container port named `metrics`, 8080, when
  `prometheus.operator.enabled` / `prometheus.metricServer.enabled`).
- **Kueue's metrics** when Kueue is on, as GKE's Kueue tutorial does it
  (docs.cloud.google.com/kubernetes-engine/docs/tutorials/kueue-cohort, "Configure Google Cloud Managed Service for
  Prometheus"): Kueue serves /metrics over HTTPS on port `metrics` (8443) and allows only callers that may `get`
  the non-resource URL /metrics (controller-runtime's authentication/authorization filter; the chart's ClusterRole
  `<release>-metrics-reader`, templates/rbac/metrics_reader_role.yaml, here `kueue-metrics-reader` since gpufleet
  names the release after the chart). So: a ServiceAccount with a token Secret, bound to that ClusterRole; a Role
  and RoleBinding that let Managed Service for Prometheus's collector (ServiceAccount `collector` in `gmp-system`
  on GKE Standard) read that Secret; a PodMonitoring that scrapes with the token as Bearer credentials and skips
  verifying Kueue's self-signed serving certificate (the chart's own ServiceMonitor does the same:
  values.yaml `metrics.serviceMonitor.tlsConfig.insecureSkipVerify: true`).

Cost: each alert condition is billed per month ($1.50, plus $0.35 per million time series returned, no sooner than
April 2025: cloud.google.com/monitoring/alerts/cost-control), which the plan lists (gpufleet/base/catalog/charges.yaml);
no dashboard charge was found on the pricing pages reachable here. What Managed Service for Prometheus ingests is
billed per sample, usage-billed and so not in the plan's hourly figures.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.components.observability.gke_alerts import ManagedAlert, managed_alerts
from gpufleet.components.observability.gke_dashboard import dashboard_json
from gpufleet.components.observability.pools import PoolFacts
from gpufleet.base.spec.features.observability import ObservabilitySpec

RULE_GROUP = "gpufleet-gpu"
# PrometheusQueryLanguageCondition.evaluationInterval: a positive multiple of 30 s (pulumi-gcp docstring).
EVALUATION_INTERVAL = "60s"
# KEDA chart (versions.KEDA): manager/ and metrics-server/deployment.yaml pod labels and port names.
KEDA_PODS = ("keda-operator", "keda-operator-metrics-apiserver")
KEDA_METRICS_PORT = "metrics"
# Kueue chart (versions.KUEUE): _helpers.tpl selectorLabels, manager/manager.yaml port `metrics` (8443).
KUEUE_PODS = {"app.kubernetes.io/name": "kueue", "control-plane": "controller-manager"}
KUEUE_METRICS_PORT = "metrics"
KUEUE_METRICS_READER_ROLE = "kueue-metrics-reader"
KUEUE_READER = "gpufleet-kueue-metrics-reader"
# Managed collection's collector on GKE Standard (gpufleet builds Standard clusters; Autopilot's is gke-gmp-system).
GMP_COLLECTOR = {"kind": "ServiceAccount", "name": "collector", "namespace": "gmp-system"}


def managed_prometheus_url(project: str) -> str:
    """Managed Service for Prometheus's Prometheus-compatible query API for `project`: what KEDA's prometheus
    scaler queries on GKE (keda.sh docs, Prometheus scaler, "Example: Google Managed Prometheus", with a
    ClusterTriggerAuthentication `podIdentity.provider: gcp`)."""
    return f"https://monitoring.googleapis.com/v1/projects/{project}/location/global/prometheus"


def kebab(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "-", name).lower()


@dataclass(frozen=True)
class GkeManagedObservabilityArgs:
    cluster: str
    """The GKE cluster's name: Managed Service for Prometheus's `cluster` label, which every query filters on (one
    project can hold several clusters)."""
    project: str
    """The GCP project of the cluster, its alert policies and its dashboard."""
    spec: ObservabilitySpec = ObservabilitySpec()
    """gpufleet:observability: alert thresholds, alerts and dashboards on or off, the PodMonitorings' interval."""
    pools: list[PoolFacts] = field(default_factory=list)
    """The GPU pools (pool_facts): their GPU-hour prices go into the idle alert's runbook and the dashboard."""
    keda_namespace: Optional[str] = None
    """KEDA's namespace when KEDA is on (a PodMonitoring scrapes its operator and metrics server there); default:
    None, no PodMonitoring."""
    kueue_namespace: Optional[str] = None
    """Kueue's namespace when Kueue is on (its metrics are scraped over HTTPS with a token, see above); default:
    None, nothing for Kueue."""
    depends_on: list[pulumi.Resource] = field(default_factory=list)
    """What the PodMonitorings wait for (the add-ons' Helm releases, which create their namespaces)."""


class GkeManagedObservability(pulumi.ComponentResource):
    """Alert policies, a dashboard and add-on PodMonitorings for a GKE cluster with managed collection."""

    def __init__(self, name: str, args: GkeManagedObservabilityArgs, access: ClusterAccess,
                 opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:observability:GkeManagedObservability", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        spec = args.spec
        self.alert_policies = []
        if spec.alerts.enabled:
            for alert in managed_alerts(args.pools, spec.alerts, args.cluster):
                self.alert_policies.append(self._policy(name, alert, args, child))
        self.dashboard = None
        if spec.dashboards.enabled:
            self.dashboard = gcp.monitoring.Dashboard(
                f"{name}-dashboard",
                project=args.project,
                dashboard_json=dashboard_json(args.pools, args.cluster, spec.alerts.idle_utilization_percent),
                opts=child,
            )
        self.pod_monitorings = []
        if args.keda_namespace:
            self.pod_monitorings.append(k8s.apiextensions.CustomResource(
                f"{name}-keda-metrics",
                api_version="monitoring.googleapis.com/v1",
                kind="PodMonitoring",
                metadata={"name": "keda-metrics", "namespace": args.keda_namespace},
                spec={
                    "selector": {"matchExpressions": [{"key": "app", "operator": "In", "values": list(KEDA_PODS)}]},
                    "endpoints": [{"port": KEDA_METRICS_PORT, "interval": spec.metrics.scrape_interval}],
                },
                opts=pulumi.ResourceOptions(parent=self, provider=access.provider, depends_on=list(args.depends_on)),
            ))
        if args.kueue_namespace:
            self.pod_monitorings.append(self._kueue(name, args, access))
        self.register_outputs({
            "alertPolicies": [p.name for p in self.alert_policies],
            "dashboard": self.dashboard.id if self.dashboard else None,
            "prometheusQueryUrl": managed_prometheus_url(args.project),
        })

    def _kueue(self, name: str, args: GkeManagedObservabilityArgs, access: ClusterAccess) -> k8s.apiextensions.CustomResource:
        ns = args.kueue_namespace
        opts = pulumi.ResourceOptions(parent=self, provider=access.provider, depends_on=list(args.depends_on))
        token = f"{KUEUE_READER}-token"
        k8s.core.v1.ServiceAccount(f"{name}-kueue-reader", metadata={"name": KUEUE_READER, "namespace": ns}, opts=opts)
        secret = k8s.core.v1.Secret(
            f"{name}-kueue-reader-token",
            metadata={"name": token, "namespace": ns, "annotations": {"kubernetes.io/service-account.name": KUEUE_READER}},
            type="kubernetes.io/service-account-token",
            opts=opts,
        )
        k8s.rbac.v1.ClusterRoleBinding(
            f"{name}-kueue-reader",
            metadata={"name": KUEUE_READER},
            role_ref={"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": KUEUE_METRICS_READER_ROLE},
            subjects=[{"kind": "ServiceAccount", "name": KUEUE_READER, "namespace": ns}],
            opts=opts,
        )
        k8s.rbac.v1.Role(
            f"{name}-kueue-token-reader",
            metadata={"name": f"{KUEUE_READER}-token", "namespace": ns},
            rules=[{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list", "watch"], "resourceNames": [token]}],
            opts=opts,
        )
        k8s.rbac.v1.RoleBinding(
            f"{name}-kueue-token-reader",
            metadata={"name": f"gmp-system:collector:{KUEUE_READER}-token", "namespace": ns},
            role_ref={"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": f"{KUEUE_READER}-token"},
            subjects=[dict(GMP_COLLECTOR)],
            opts=opts,
        )
        return k8s.apiextensions.CustomResource(
            f"{name}-kueue-metrics",
            api_version="monitoring.googleapis.com/v1",
            kind="PodMonitoring",
            metadata={"name": "kueue-metrics", "namespace": ns},
            spec={
                "selector": {"matchLabels": dict(KUEUE_PODS)},
                "endpoints": [{
                    "port": KUEUE_METRICS_PORT, "scheme": "https", "path": "/metrics",
                    "interval": args.spec.metrics.scrape_interval,
                    "authorization": {"type": "Bearer", "credentials": {"secret": {"name": token, "key": "token"}}},
                    "tls": {"insecureSkipVerify": True},
                }],
            },
            opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=[secret])),
        )

    @staticmethod
    def _policy(name: str, alert: ManagedAlert, args: GkeManagedObservabilityArgs, child: pulumi.ResourceOptions):
        return gcp.monitoring.AlertPolicy(
            f"{name}-{kebab(alert.name)}",
            project=args.project,
            display_name=f"{alert.name} ({args.cluster})",
            combiner="OR",
            severity=alert.severity,
            conditions=[gcp.monitoring.AlertPolicyConditionArgs(
                display_name=alert.summary,
                condition_prometheus_query_language=gcp.monitoring.AlertPolicyConditionConditionPrometheusQueryLanguageArgs(
                    query=alert.query,
                    duration=alert.duration,
                    evaluation_interval=EVALUATION_INTERVAL,
                    alert_rule=alert.name,
                    rule_group=RULE_GROUP,
                    labels={"severity": alert.severity.lower(), "cluster": args.cluster},
                    disable_metric_validation=True,
                ),
            )],
            documentation=gcp.monitoring.AlertPolicyDocumentationArgs(
                content=alert.runbook, mime_type="text/markdown", subject=alert.summary,
            ),
            # alerts.notificationChannels; none: an incident in Cloud Monitoring only.
            notification_channels=list(args.spec.alerts.notification_channels) or None,
            user_labels={"gpufleet": "gpu-alerts"},
            opts=child,
        )
