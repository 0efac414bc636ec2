"""gpufleet's GPU alerts on GKE Managed Service for Prometheus: what GKE's managed DCGM package can feed.

GKE's managed DCGM package runs NVIDIA's DCGM exporter in `gke-managed-system` and scrapes it with a
ClusterPodMonitoring into Managed Service for Prometheus (cloud.google.com/kubernetes-engine/docs/how-to/dcgm-metrics).
Its metric set is fixed by GKE, not by gpufleet (no counter list to extend, unlike the GPU Operator's exporter:
components/observability/dcgm_metrics.py). `GKE_DCGM_METRICS` is that set as PromQL sees it (each
`prometheus.googleapis.com/<NAME>/gauge` metric is queried by `<NAME>`).

Source of the set: the GKE page above has the table of exported metrics, but the stored copy reachable while this
was written is cut before it. The set below is a secondary source: a live capture of a GKE cluster's managed exporter
found in the public code index (its repository is not named there), reporting "21 fields" (10 DCGM_FI_DEV_*,
11 DCGM_FI_PROF_*) and "no XID or ECC field". Confirm against the GKE page before relying on a metric outside the
four gpufleet queries: GPU_UTIL, FB_USED, POWER_USAGE and GPU_TEMP, which are also enabled in NVIDIA's
default counter list (dcgm-exporter etc/default-counters.csv, checked in tests against ../shared/reference), so
every DCGM exporter publishes them.

Left out, because GKE's exporter does not export their metrics (XID, ECC, row remap, NVLink error counters,
throttling-violation counters) or because GKE's managed kube-state-metrics package is not turned on by gpufleet
(the monitoring components `POD`, `DEPLOYMENT`, `DAEMONSET`, `STATEFULSET`, `STORAGE`, `HPA` of the cluster's
monitoringConfig, pulumi-gcp ClusterMonitoringConfig `enable_components`; which kube-state-metrics series they
export, and whether kube_node_labels could carry gpufleet's pool label, is not documented on the pages reachable
here): see `LEFT_OUT`.

Labels: Managed Service for Prometheus adds the target labels project_id, location, cluster, namespace, job and
instance (the PodMonitoring CRD's "protected target labels", prometheus-engine v0.17.2), and ClusterPodMonitoring's
default `targetLabels.metadata` adds the *exporter* pod's `container`, `namespace` and `pod`. When the exporter's
own `pod`/`namespace` labels (the workload using the GPU) collide with those, Prometheus keeps them as
`exported_pod`/`exported_namespace` (Prometheus `honor_labels: false`, the default). Which of the two GKE's managed
ClusterPodMonitoring yields is not documented on the pages reachable here, so the allocated-GPU selector accepts
both: a workload in `exported_pod`, or a `pod` that is not the exporter's.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpufleet.base.spec.features.observability import AlertsSpec
from gpufleet.components.observability.alerts import RUNBOOK_DOC
from gpufleet.components.observability.pools import PoolFacts

GKE_DCGM_METRICS = frozenset({
    "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_FB_TOTAL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_GPU_TEMP",
    "DCGM_FI_DEV_MEMORY_TEMP", "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_MEM_COPY_UTIL", "DCGM_FI_DEV_POWER_USAGE",
    "DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
    "DCGM_FI_PROF_DRAM_ACTIVE", "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_PROF_SM_ACTIVE",
    "DCGM_FI_PROF_PIPE_FP16_ACTIVE", "DCGM_FI_PROF_PIPE_FP32_ACTIVE", "DCGM_FI_PROF_PIPE_FP64_ACTIVE",
    "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "DCGM_FI_PROF_NVLINK_RX_BYTES", "DCGM_FI_PROF_NVLINK_TX_BYTES",
    "DCGM_FI_PROF_PCIE_RX_BYTES", "DCGM_FI_PROF_PCIE_TX_BYTES",
})

# The gpufleet alerts (components/observability/alerts.py) GKE cannot feed, and why: docs/observability.md lists them.
LEFT_OUT = {
    "GpuXid*Error": "GKE's DCGM exporter exports no DCGM_FI_DEV_XID_ERRORS",
    "GpuDoubleBitEccError": "no DCGM_FI_DEV_ECC_DBE_VOL_TOTAL in GKE's set",
    "GpuRowRemapFailure": "no DCGM_FI_DEV_ROW_REMAP_FAILURE in GKE's set",
    "GpuUncorrectableRowsRemapped": "no DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS in GKE's set",
    "GpuNvlinkErrors": "GKE's set has NVLink bandwidth, not the CRC/replay/recovery error counters",
    "GpuThermalThrottling": "no DCGM_FI_DEV_THERMAL_VIOLATION in GKE's set",
    "GpuPowerThrottling": "no DCGM_FI_DEV_POWER_VIOLATION in GKE's set",
    "GpuMissing": "needs a node's pool (kube_node_labels with the pool label): no kube-state-metrics from gpufleet on GKE",
    "GpuPodsPending": "needs kube_pod_status_phase / kube_pod_container_resource_requests: no kube-state-metrics from gpufleet on GKE",
    "GpuPoolAtMaximum": "needs kube_node_labels with the pool label: no kube-state-metrics from gpufleet on GKE",
}

# The DCGM exporter pod of GKE's managed package (DaemonSet in gke-managed-system; its pod names contain this).
EXPORTER_POD = ".*dcgm-exporter.*"


def on_cluster(cluster: str) -> str:
    """The matcher that keeps a query to this cluster's series (a project can hold several clusters)."""
    return f'cluster="{cluster}"'


def allocated(metric: str, cluster: str) -> str:
    """`metric` of every GPU allocated to a workload, whichever label GKE's scrape leaves the workload's pod in."""
    c = on_cluster(cluster)
    return f'({metric}{{{c}, exported_pod!=""}} or {metric}{{{c}, pod!="", pod!~"{EXPORTER_POD}"}})'


@dataclass(frozen=True)
class ManagedAlert:
    """One Cloud Monitoring alert policy with one PromQL condition (PrometheusQueryLanguageCondition)."""

    name: str
    """Alert name (the condition's `alertRule`, a valid Prometheus label name)."""
    query: str
    """PromQL: every series it returns is a firing (or pending) alert."""
    duration: str
    """How long the query must hold before the alert fires (a Cloud Monitoring duration, e.g. "1800s")."""
    severity: str
    """The AlertPolicy's severity: CRITICAL | ERROR | WARNING."""
    summary: str
    """The notification's subject line."""
    runbook: str
    """What to do, in markdown (the policy's documentation.content)."""


def idle_alert(pools: list[PoolFacts], alerts: AlertsSpec, cluster: str) -> ManagedAlert:
    """An allocated GPU under `idleUtilizationPercent` for `idleMinutes` (components/observability/alerts.py's
    GpuAllocatedIdle). GKE's series carry no pool label, so the cost per pool (catalog GPU-hour price, the plan's
    figure) is listed in the runbook rather than computed in the query."""
    prices = "\n".join(
        f"- pool `{p.pool}`: " + (f"${p.price_per_gpu_hour:.2f}/h per GPU" if p.price_per_gpu_hour is not None else "unpriced in the catalog")
        for p in pools
    ) or "- (no GPU pools)"
    return ManagedAlert(
        name="GpuAllocatedIdle",
        query=f"{allocated('DCGM_FI_DEV_GPU_UTIL', cluster)} < {alerts.idle_utilization_percent}",
        duration=f"{alerts.idle_minutes * 60}s",
        severity="WARNING",
        summary=f"GPU allocated on {cluster} under {alerts.idle_utilization_percent}% busy for {alerts.idle_minutes} minutes",
        runbook=(
            f"A GPU allocated to a pod on cluster `{cluster}` has been under {alerts.idle_utilization_percent}% busy "
            f"(DCGM_FI_DEV_GPU_UTIL) for {alerts.idle_minutes} minutes: the labels `exported_namespace`/`exported_pod` "
            "(or `namespace`/`pod`) and `Hostname` name the workload and node.\n\n"
            "**Runbook:** ask the owning team to scale the workload down or release the GPU (an idle notebook or a "
            "stuck job); the gpufleet GPU dashboard shows every idle allocated GPU.\n\n"
            f"What an idle GPU costs, per pool (gpufleet catalog, the plan's figure):\n{prices}\n\n"
            f"Longer form: {RUNBOOK_DOC}"
        ),
    )


def managed_alerts(pools: list[PoolFacts], alerts: AlertsSpec, cluster: str) -> list[ManagedAlert]:
    """Every gpufleet alert GKE's managed metrics can feed (the rest: `LEFT_OUT`)."""
    return [idle_alert(pools, alerts, cluster)]
