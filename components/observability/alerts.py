"""gpufleet's GPU alert rules: a PrometheusRule spec (monitoring.coreos.com/v1), each rule with a runbook line.

Metric sources: the DCGM exporter's counters (components/observability/dcgm_metrics.py, the exporter's `Hostname`
label is the node name, and `pod`/`namespace` the workload using the GPU, kept by `honorLabels`), and
kube-state-metrics (kubernetes/kube-state-metrics docs/metrics/: `kube_node_labels` with the pool label allowed by
`--metric-labels-allowlist`, `kube_pod_status_phase`, `kube_pod_container_resource_requests` with the resource name
sanitized to `nvidia_com_gpu`), and on k3s node-problem-detector's `problem_gauge` (components/k3s/node_health.py).
tests/upstream/test_observability_upstream.py parses every expression with a PromQL parser and checks each metric
name against those lists.
"""

from __future__ import annotations

from gpufleet.base import catalog, labels
from gpufleet.base.spec.features.observability import AlertsSpec
from gpufleet.components.observability.pools import PoolFacts

# kube-state-metrics turns a node label into `label_<name>` with every non-alphanumeric character as `_`.
POOL_SERIES_LABEL = "label_" + "".join(c if c.isalnum() else "_" for c in labels.POOL_LABEL)
GPU_REQUEST_RESOURCE = "".join(c if c.isalnum() else "_" for c in labels.GPU_RESOURCE)
RUNBOOK_DOC = "docs/observability.md#runbooks"
NPD_GPU_CONDITION = labels.GPU_UNHEALTHY_CONDITION
# A GPU allocated to a workload: the exporter labels its series with that pod (kept by honorLabels). An unallocated
# GPU's series has no pod label of its own, so Prometheus attaches the target's: the exporter pod, which the GPU
# Operator's DaemonSet names nvidia-dcgm-exporter-<hash>.
ALLOCATED = 'pod!="", pod!~"nvidia-dcgm-exporter-.*"'


def _on_pool(pool: str) -> str:
    """kube_node_labels of one pool, with its `node` label copied to `Hostname` (the DCGM exporter's node label)."""
    return (f'label_replace(kube_node_labels{{{POOL_SERIES_LABEL}="{pool}"}}, "Hostname", "$1", "node", "(.+)")')


def _rule(alert: str, expr: str, for_: str, severity: str, summary: str, runbook: str, **extra: str) -> dict:
    return {
        "alert": alert,
        "expr": expr,
        "for": for_,
        "labels": {"severity": severity, **extra},
        "annotations": {"summary": summary, "runbook": runbook, "runbook_url": RUNBOOK_DOC},
    }


def xid_rules() -> list[dict]:
    """XID alerts (gpufleet/base/catalog/xid.yaml): one rule per class and NVIDIA action, so each XID's runbook line and
    severity are those of the action NVIDIA's Xid Catalog gives for it (its Resolution Bucket), not the class's."""
    rules = []
    for cls in catalog.xid_classes().values():
        for bucket, group in cls.by_action().items():
            action = group[0].action
            expr = " or ".join(f"DCGM_FI_DEV_XID_ERRORS == {x.code}" for x in group)
            notes = " ".join(f"XID {x.code}: {x.note}" for x in group if x.note)
            rule = _rule(
                f"GpuXid{cls.name.capitalize()}Error", expr, "0m", action.severity,
                f"XID {{{{ $value }}}} ({cls.name} class, NVIDIA action {bucket}) on GPU {{{{ $labels.gpu }}}} of node "
                "{{ $labels.Hostname }}",
                f"{action.action} {notes}".strip(), xid_class=cls.name, nvidia_action=bucket,
            )
            rule["annotations"]["xids"] = "; ".join(f"{x.code} {x.name}" for x in group)
            rules.append(rule)
    return rules


def health_rules() -> list[dict]:
    return [
        _rule("GpuDoubleBitEccError", "increase(DCGM_FI_DEV_ECC_DBE_VOL_TOTAL[10m]) > 0", "0m", "critical",
              "Double-bit (uncorrectable) ECC errors on GPU {{ $labels.gpu }} of node {{ $labels.Hostname }}",
              catalog.xid_classes()["memory"].action),
        _rule("GpuRowRemapFailure", "DCGM_FI_DEV_ROW_REMAP_FAILURE > 0", "0m", "critical",
              "Row remapping failed on GPU {{ $labels.gpu }} of node {{ $labels.Hostname }}: its memory cannot be repaired",
              "Cordon and drain the node and replace it (cloud) or RMA the GPU: a failed row remap does not heal on reset."),
        _rule("GpuUncorrectableRowsRemapped", "increase(DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS[1h]) > 0", "0m", "warning",
              "GPU {{ $labels.gpu }} of node {{ $labels.Hostname }} remapped rows after uncorrectable errors",
              "Reset the GPU at the next drain (a remap takes effect after a reset); watch for more: repeats mean RMA."),
        _rule("GpuNvlinkErrors",
              "increase(DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL[10m]) > 0 or "
              "increase(DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL[10m]) > 0 or "
              "increase(DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL[10m]) > 0", "5m", "warning",
              "NVLink errors on GPU {{ $labels.gpu }} of node {{ $labels.Hostname }}",
              catalog.xid_classes()["nvlink"].action),
        _rule("GpuThermalThrottling", "rate(DCGM_FI_DEV_THERMAL_VIOLATION[5m]) / 1e9 > 0.1", "10m", "warning",
              "GPU {{ $labels.gpu }} of node {{ $labels.Hostname }} is throttled by temperature {{ $value | humanizePercentage }} of the time",
              "Check the node's cooling and the GPU temperature panel; on a cloud node, drain it and let the pool replace it."),
        _rule("GpuPowerThrottling", "rate(DCGM_FI_DEV_POWER_VIOLATION[5m]) / 1e9 > 0.1", "10m", "warning",
              "GPU {{ $labels.gpu }} of node {{ $labels.Hostname }} is throttled by its power limit {{ $value | humanizePercentage }} of the time",
              "Check the power limit (nvidia-smi -q -d POWER) and the node's power supply; sustained power capping slows every job on it."),
    ]


def pool_rules(pool: PoolFacts, alerts: AlertsSpec) -> list[dict]:
    """Per pool: GPUs fallen off the bus (fewer DCGM series than the pool's GPUs per node), allocated GPUs left
    idle (with what they cost), and a pool at its maximum size."""
    on_pool = _on_pool(pool.pool)
    price = f"${pool.price_per_gpu_hour:.2f}/h per GPU" if pool.price_per_gpu_hour is not None else "price unknown (unpriced in the catalog)"
    rules = [
        _rule("GpuMissing",
              f"count by (Hostname) (DCGM_FI_DEV_GPU_TEMP * on (Hostname) group_left () {on_pool}) < {pool.gpus_per_node}",
              "5m", "critical",
              f"Node {{{{ $labels.Hostname }}}} of pool {pool.pool} reports {{{{ $value }}}} of its {pool.gpus_per_node} GPUs: "
              "a GPU has fallen off the bus or its driver failed",
              catalog.xid_classes()["bus"].action, pool=pool.pool),
        _rule("GpuAllocatedIdle",
              f'(DCGM_FI_DEV_GPU_UTIL{{{ALLOCATED}}} < {alerts.idle_utilization_percent}) * on (Hostname) group_left () {on_pool}',
              f"{alerts.idle_minutes}m", "warning",
              f"GPU {{{{ $labels.gpu }}}} of pool {pool.pool} allocated to {{{{ $labels.namespace }}}}/{{{{ $labels.pod }}}} has been "
              f"under {alerts.idle_utilization_percent}% busy for {alerts.idle_minutes} minutes: {price} wasted",
              "Ask the owning team to scale the workload down or release the GPU (an idle notebook or a stuck job); "
              "the gpufleet pool dashboard lists every idle allocated GPU with its cost.",
              pool=pool.pool, cost_per_gpu_hour=f"{pool.price_per_gpu_hour:.4f}" if pool.price_per_gpu_hour is not None else "unknown"),
    ]
    if pool.autoscaled:
        rules.append(_rule(
            "GpuPoolAtMaximum",
            f"count(kube_node_labels{{{POOL_SERIES_LABEL}=\"{pool.pool}\"}}) >= {pool.max_nodes}", "15m", "warning",
            f"Pool {pool.pool} has run at its maximum of {pool.max_nodes} nodes for 15 minutes: new GPU pods will wait",
            f"Raise gpufleet:nodePools[{pool.pool}].maxNodes (check the GPU quota of the account or project first) or "
            "move work to another pool.", pool=pool.pool,
        ))
    return rules


def pending_rules(alerts: AlertsSpec) -> list[dict]:
    return [_rule(
        "GpuPodsPending",
        f'sum by (namespace, pod) (kube_pod_container_resource_requests{{resource="{GPU_REQUEST_RESOURCE}"}}) '
        '* on (namespace, pod) group_left () (kube_pod_status_phase{phase="Pending"} == 1) > 0',
        f"{alerts.pending_minutes}m", "warning",
        f"GPU pod {{{{ $labels.namespace }}}}/{{{{ $labels.pod }}}} has been pending for {alerts.pending_minutes} minutes",
        "Scale-from-zero or quota is broken: `kubectl describe pod` for the scheduler's reason; check the autoscaler's "
        "logs (node-template tags, GPU quota, capacity in the zone) and `gpufleet verify STACK` for the pool.",
    )]


def node_problem_rules() -> list[dict]:
    """node-problem-detector's GPU condition (components/k3s/xid_monitor.py): NPD's `problem_gauge{type, reason}` is
    1 while a permanent problem holds (kubernetes/node-problem-detector v1.36.0, pkg/problemmetrics/
    problem_metrics.go; the PodMonitor adds the pod's `node`). The condition stays until NPD restarts: see the
    runbook."""
    return [_rule(
        "GpuNodeUnhealthy", f'problem_gauge{{type="{NPD_GPU_CONDITION}"}} > 0', "0m", "critical",
        f"Node {{{{ $labels.node }}}} has condition {NPD_GPU_CONDITION} ({{{{ $labels.reason }}}}): an XID that needs a GPU reset or machine restart",
        "Cordon and drain the node (kubectl cordon/drain), read the XID with `kubectl describe node`, reset the GPU or "
        "reboot the host when you decide to, then restart its node-problem-detector pod to clear the condition.",
    )]


def rule_groups(pools: list[PoolFacts], alerts: AlertsSpec, node_problem_detector: bool = False) -> list[dict]:
    """The PrometheusRule's spec.groups; `node_problem_detector`: also the alert on NPD's GPU condition."""
    groups = [
        {"name": "gpufleet-gpu-health",
         "rules": xid_rules() + health_rules() + (node_problem_rules() if node_problem_detector else [])},
        {"name": "gpufleet-gpu-scheduling", "rules": pending_rules(alerts)},
    ]
    for pool in pools:
        groups.append({"name": f"gpufleet-pool-{pool.pool}", "rules": pool_rules(pool, alerts)})
    return groups
