"""gpu-observability (advisory): a stack with GPUs should have a metrics pipeline.

Without one nothing alerts on a GPU that fell off the bus, XID or double-bit ECC errors, or an allocated GPU left
idle at tens of dollars an hour (issue 16). The stack has GPUs when it has GPU pools (EKS node groups, GKE node
pools, Karpenter NodePools with GPU limits) or a GPU Operator release (k3s hosts are not cloud resources). A
metrics pipeline is any of:
- a Helm release of a Prometheus distribution: kube-prometheus-stack, prometheus, victoria-metrics-k8s-stack,
  k8s-monitoring (Grafana's);
- a GKE cluster with Managed Service for Prometheus (monitoringConfig.managedPrometheus.enabled);
- an Amazon Managed Service for Prometheus scraper (aws:amp/scraper:Scraper);
- a ServiceMonitor, PodMonitor (prometheus-operator) or PodMonitoring/ClusterPodMonitoring (GKE) object: the stack
  feeds a Prometheus it does not install.
gpufleet stacks get one with gpufleet:observability.metrics.backend (docs/observability.md). One finding per GPU
pool (or per GPU Operator release when there is no pool resource); exempt a pool with its
`gpufleet.io/exempt-gpu-observability` label or the policy's `exemptions` config.
"""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, StackValidationPolicy

from gpufleet.policies import inputs as I

NAME = "gpu-observability"
PROMETHEUS_CHARTS = ("kube-prometheus-stack", "prometheus", "victoria-metrics-k8s-stack", "k8s-monitoring")
MONITOR_TYPES = (
    "kubernetes:monitoring.coreos.com/v1:ServiceMonitor",
    "kubernetes:monitoring.coreos.com/v1:PodMonitor",
    "kubernetes:monitoring.googleapis.com/v1:PodMonitoring",
    "kubernetes:monitoring.googleapis.com/v1:ClusterPodMonitoring",
)
AMP_SCRAPER = "aws:amp/scraper:Scraper"
KARPENTER_NODEPOOL = "kubernetes:karpenter.sh/v1:NodePool"


def _has_pipeline(resources: list) -> bool:
    if any(I.chart_of(r.props) in PROMETHEUS_CHARTS for r in I.helm_charts(resources)):
        return True
    if I.of_type(resources, AMP_SCRAPER, *MONITOR_TYPES):
        return True
    return any(I.truthy(I.get(r.props, "monitoringConfig", "managedPrometheus", "enabled"))
               for r in I.of_type(resources, I.GKE_CLUSTER))


def _karpenter_gpu_pools(resources: list) -> list:
    return [r for r in I.of_type(resources, KARPENTER_NODEPOOL)
            if any(str(k).startswith("nvidia.com/") for k in I.mapping(I.get(r.props, "spec", "limits")))]


def check(resources: list, config) -> list[tuple[str, str]]:
    resources = I.listed(resources)
    if _has_pipeline(resources):
        return []
    pools, karpenter = I.gpu_pools(resources), _karpenter_gpu_pools(resources)
    targets = [(p.name, p.urn) for p in pools if not I.pool_exemption(NAME, p, config)]
    targets += [(r.name, r.urn) for r in karpenter if not I.exemption(NAME, r.name, r.urn, r.props, config)]
    kind = "GPU pool"
    if not pools and not karpenter:
        targets = [(r.name, r.urn) for r in I.operator_releases(resources)
                   if not I.exemption(NAME, r.name, r.urn, r.props, config)]
        kind = "GPU Operator release"
    return [
        (urn, f"{kind} '{name}' has no metrics pipeline in this stack: nothing alerts on XID errors, a GPU fallen off "
              "the bus or allocated GPUs left idle. Set gpufleet:observability.metrics.backend (kube-prometheus-stack; "
              "gke-managed on GKE) or install a Prometheus that scrapes the DCGM exporter")
        for name, urn in targets
    ]


POLICY = StackValidationPolicy(
    name=NAME,
    description="A stack with GPUs has a metrics pipeline (Prometheus, managed or its own) that can alert on GPU faults and waste.",
    enforcement_level=EnforcementLevel.ADVISORY,
    validate=I.stack_validator(check),
    config_schema=I.exemptions_schema(),
)
