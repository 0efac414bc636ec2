"""What an Amazon Managed Service for Prometheus (AMP) backend is told: the AWS managed collector's scrape
configuration and gpufleet's alert rules as a Prometheus rules file. Plain data, no cloud SDK: the EKS component
(components/eks/managed_prometheus.py) hands these strings to aws.amp.Scraper and aws.amp.RuleGroupNamespace.

The collector accepts a Prometheus configuration limited to `global`, `scrape_config`, `static_config`,
`relabel_config`, `metric_relabel_configs` and `kubernetes_sd_config`; no scrape interval under 30 s; an
`authorization` block only as a Bearer token from /var/run/secrets/kubernetes.io/serviceaccount/token (AMP User
Guide, "Using an AWS managed collector", Scraper configuration and Scraper limitations:
docs.aws.amazon.com/prometheus/latest/userguide/AMP-collector-how-to.html#AMP-collector-configuration). It discovers
targets through the Kubernetes API (service discovery) and scrapes pod and node IPs from its network interfaces in
the cluster's subnets, so every job below selects by Kubernetes labels and port names.
"""

from __future__ import annotations

from dataclasses import dataclass

import yaml

from gpufleet.components.observability.alerts import rule_groups
from gpufleet.components.observability.pools import PoolFacts
from gpufleet.base.spec.features.observability import AlertsSpec, sns_topic_region

TOKEN_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/token"


@dataclass(frozen=True)
class ScrapeTargets:
    """Which add-ons' metrics the collector scrapes besides the GPUs."""

    kueue: bool = False
    """Kueue is installed (gpufleet:addons.kueue): its controller's metrics service."""
    keda: bool = False
    """KEDA is installed (gpufleet:addons.keda) with its metrics ports open (KedaArgs.expose_metrics)."""


def _target_labels() -> list[dict]:
    """The target's namespace/pod/container as labels, as prometheus-operator adds them for a ServiceMonitor
    endpoint. With honor_labels the exporter's own `namespace`/`pod`/`container` (the workload using a GPU) win; a
    GPU with no workload keeps the exporter pod's, which the alerts' ALLOCATED filter relies on
    (components/observability/alerts.py), exactly as on the kube-prometheus-stack path."""
    return [
        {"source_labels": ["__meta_kubernetes_namespace"], "target_label": "namespace"},
        {"source_labels": ["__meta_kubernetes_pod_name"], "target_label": "pod"},
        {"source_labels": ["__meta_kubernetes_pod_container_name"], "target_label": "container"},
    ]


# Discovery roles are `pod` and `endpoints`, not `endpointslice`: the access policy AMP gives the collector lists
# pods, services and endpoints but not discovery.k8s.io EndpointSlices (AMP User Guide, "Access entry policy created").


def _keep(label: str, regex: str) -> dict:
    return {"action": "keep", "source_labels": [label], "regex": regex}


def dcgm_job() -> dict:
    """The GPU Operator's DCGM exporter through its Service `nvidia-dcgm-exporter`, port `gpu-metrics` (9400)
    (NVIDIA/gpu-operator assets/state-dcgm-exporter/0600_service.yaml), what the operator's ServiceMonitor selects.
    honor_labels keeps the exporter's pod/namespace labels: a GPU's use maps to the team's namespace."""
    return {
        "job_name": "gpu-metrics",
        "honor_labels": True,
        "kubernetes_sd_configs": [{"role": "endpoints"}],
        "relabel_configs": [
            _keep("__meta_kubernetes_service_name", "nvidia-dcgm-exporter"),
            _keep("__meta_kubernetes_endpoint_port_name", "gpu-metrics"),
            *_target_labels(),
        ],
    }


def node_exporter_job() -> dict:
    """node-exporter (components/observability/exporters.py installs it with amp): pods labelled
    `app.kubernetes.io/name: prometheus-node-exporter` (prometheus-community chart `prometheus-node-exporter`), port
    `metrics` (the chart's `service.portName` default) or `http-metrics` (what kube-prometheus-stack sets), so one the
    user runs is found too."""
    return {
        "job_name": "node-exporter",
        "kubernetes_sd_configs": [{"role": "pod"}],
        "relabel_configs": [
            _keep("__meta_kubernetes_pod_label_app_kubernetes_io_name", "prometheus-node-exporter"),
            _keep("__meta_kubernetes_pod_container_port_name", "metrics|http-metrics"),
            *_target_labels(),
        ],
    }


def kube_state_metrics_job() -> dict:
    """kube-state-metrics (components/observability/exporters.py installs it with amp, the pool label allowed): pods
    labelled `app.kubernetes.io/name: kube-state-metrics` (prometheus-community chart `kube-state-metrics`,
    templates/deployment.yaml container port `http`).
    The pool, pending and at-maximum alerts read its series (kube_node_labels with the pool label allowed,
    kube_pod_status_phase, kube_pod_container_resource_requests); honor_labels keeps the objects' namespace/pod."""
    return {
        "job_name": "kube-state-metrics",
        "honor_labels": True,
        "kubernetes_sd_configs": [{"role": "pod"}],
        "relabel_configs": [
            _keep("__meta_kubernetes_pod_label_app_kubernetes_io_name", "kube-state-metrics"),
            _keep("__meta_kubernetes_pod_container_port_name", "http"),
            *_target_labels(),
        ],
    }


def kueue_job() -> dict:
    """Kueue's controller metrics: the chart's metrics Service (labels `app.kubernetes.io/name: kueue`,
    `app.kubernetes.io/component: metrics-service`, port `https` 8443), HTTPS with the scraper's bearer token,
    as the chart's own ServiceMonitor does (the pinned kueue chart, templates/prometheus/monitor.yaml, values.yaml
    `metrics.serviceMonitor.tlsConfig.insecureSkipVerify: true`). The collector's access entry may GET /metrics
    (AMP User Guide, "Access entry policy created")."""
    return {
        "job_name": "kueue",
        "scheme": "https",
        "authorization": {"type": "Bearer", "credentials_file": TOKEN_FILE},
        "tls_config": {"insecure_skip_verify": True},
        "kubernetes_sd_configs": [{"role": "endpoints"}],
        "relabel_configs": [
            _keep("__meta_kubernetes_service_label_app_kubernetes_io_name", "kueue"),
            _keep("__meta_kubernetes_service_label_app_kubernetes_io_component", "metrics-service"),
            _keep("__meta_kubernetes_endpoint_port_name", "https"),
            *_target_labels(),
        ],
    }


def keda_job() -> dict:
    """KEDA's operator and metrics server: container port `metrics` (8080) once `prometheus.operator.enabled` and
    `prometheus.metricServer.enabled` are on (the pinned keda chart, templates/manager/deployment.yaml and
    templates/metrics-server/deployment.yaml; pods labelled `app.kubernetes.io/name: keda-operator` and
    `keda-operator-metrics-apiserver`)."""
    return {
        "job_name": "keda",
        "kubernetes_sd_configs": [{"role": "pod"}],
        "relabel_configs": [
            _keep("__meta_kubernetes_pod_label_app_kubernetes_io_name", "keda-operator|keda-operator-metrics-apiserver"),
            _keep("__meta_kubernetes_pod_container_port_name", "metrics"),
            *_target_labels(),
        ],
    }


def scrape_config(cluster: str, scrape_interval: str, targets: ScrapeTargets = ScrapeTargets()) -> dict:
    """The collector's Prometheus configuration (as data)."""
    jobs = [dcgm_job(), node_exporter_job(), kube_state_metrics_job()]
    if targets.kueue:
        jobs.append(kueue_job())
    if targets.keda:
        jobs.append(keda_job())
    return {
        "global": {"scrape_interval": scrape_interval, "external_labels": {"cluster": cluster}},
        "scrape_configs": jobs,
    }


def scrape_config_yaml(cluster: str, scrape_interval: str, targets: ScrapeTargets = ScrapeTargets()) -> str:
    """aws.amp.Scraper `scrape_configuration`: the YAML text (the provider base64-encodes it for CreateScraper)."""
    return yaml.safe_dump(scrape_config(cluster, scrape_interval, targets), sort_keys=False)


def rules_file(pools: list[PoolFacts], alerts: AlertsSpec) -> dict:
    """gpufleet's alert rules as a Prometheus rules file (`groups:`): the same groups, expressions and runbook
    annotations as the PrometheusRule of the kube-prometheus-stack path (AMP User Guide, "Recording and alerting
    rules": a rules file in the Prometheus format per rule group namespace)."""
    return {"groups": rule_groups(pools, alerts)}


def rules_file_yaml(pools: list[PoolFacts], alerts: AlertsSpec) -> str:
    """aws.amp.RuleGroupNamespace `data`."""
    return yaml.safe_dump(rules_file(pools, alerts), sort_keys=False)


# The alert manager definition (`alerts.snsTopicArn`). AMP's format: a YAML file whose `alertmanager_config` is an
# Alertmanager configuration as a string (AMP User Guide, "Create an alert manager configuration",
# docs.aws.amazon.com/prometheus/latest/userguide/AMP-alertmanager-config.html). Its only receiver kind is Amazon
# SNS; `sigv4.region` is required, `api_url` and `http_config` are refused (same guide, "Configure alert manager to
# send messages to your Amazon SNS topic", AMP-alertmanager-receiver-config.html). Without `subject` the default
# template lists every label and value, which "might result in a value that is too long for SNS" (same page), so
# the subject is set: the alert's name and status (Alertmanager notification template data `.Status` and
# `.CommonLabels`, function `toUpper`: prometheus.io/docs/alerting/latest/notifications/).
SNS_RECEIVER = "gpufleet-sns"
SNS_SUBJECT = "[{{ .Status | toUpper }}] {{ .CommonLabels.alertname }}"


def alert_manager_config(topic_arn: str) -> dict:
    """An Alertmanager configuration sending every alert to the SNS topic."""
    return {
        "route": {"receiver": SNS_RECEIVER},
        "receivers": [{"name": SNS_RECEIVER, "sns_configs": [
            {"topic_arn": topic_arn, "sigv4": {"region": sns_topic_region(topic_arn)}, "subject": SNS_SUBJECT},
        ]}],
    }


def alert_manager_definition_yaml(topic_arn: str) -> str:
    """What aws.amp.AlertManagerDefinition's `definition` takes."""
    return yaml.safe_dump({"alertmanager_config": yaml.safe_dump(alert_manager_config(topic_arn), sort_keys=False)},
                          sort_keys=False)
