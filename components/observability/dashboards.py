"""Grafana dashboards as code: JSON models in ConfigMaps labelled for the Grafana sidecar.

kube-prometheus-stack's Grafana runs the dashboard sidecar (values `grafana.sidecar.dashboards`: label
`grafana_dashboard`, value "1", all namespaces), which loads every ConfigMap with that label.

- `gpu-nodes`: the panels of NVIDIA's DCGM exporter dashboard (NVIDIA/dcgm-exporter grafana/dcgm-exporter-dashboard.json
  at the reference tag: temperature, power, SM clocks, utilization, framebuffer used, tensor core activity), built
  here rather than copied, with a pool variable added; tests check it queries every metric NVIDIA's does.
- `gpufleet-pools`: per pool, GPUs present vs allocated, utilization, memory, power, idle-but-allocated GPUs and
  their cost per hour (catalog price), pending GPU pods and time to scale from zero.
"""

from __future__ import annotations

import json

from gpufleet.components.observability.alerts import ALLOCATED, GPU_REQUEST_RESOURCE, POOL_SERIES_LABEL
from gpufleet.components.observability.pools import PoolFacts

SIDECAR_LABEL = {"grafana_dashboard": "1"}  # kube-prometheus-stack values grafana.sidecar.dashboards.label/labelValue
_POOL_NODES = f'label_replace(kube_node_labels{{{POOL_SERIES_LABEL}=~"$pool"}}, "Hostname", "$1", "node", "(.+)")'


def _panel(pid: int, title: str, exprs: list[tuple[str, str]], unit: str, x: int, y: int, kind: str = "timeseries", w: int = 12) -> dict:
    return {
        "id": pid, "type": kind, "title": title,
        "datasource": {"type": "prometheus", "uid": "${datasource}"},
        "gridPos": {"h": 8, "w": w, "x": x, "y": y},
        "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
        "targets": [{"refId": chr(65 + i), "expr": expr, "legendFormat": legend} for i, (expr, legend) in enumerate(exprs)],
    }


def _variables(pools: list[PoolFacts]) -> list[dict]:
    return [
        {"name": "datasource", "type": "datasource", "query": "prometheus", "hide": 0},
        {"name": "pool", "type": "custom", "multi": True, "includeAll": True,
         "query": ",".join(p.pool for p in pools), "current": {"text": "All", "value": "$__all"}},
    ]


def _dashboard(uid: str, title: str, panels: list[dict], pools: list[PoolFacts]) -> dict:
    return {
        "uid": uid, "title": title, "tags": ["gpufleet", "gpu"], "schemaVersion": 39, "editable": False,
        "time": {"from": "now-6h", "to": "now"}, "refresh": "1m",
        "templating": {"list": _variables(pools)}, "panels": panels,
    }


def _on_pool(metric: str) -> str:
    return f"{metric} * on (Hostname) group_left () {_POOL_NODES}"


def gpu_nodes(pools: list[PoolFacts]) -> dict:
    """NVIDIA's DCGM exporter dashboard panels, filtered by pool."""
    legend = "{{Hostname}} GPU {{gpu}}"
    rows = [
        ("GPU temperature", [(_on_pool("DCGM_FI_DEV_GPU_TEMP"), legend)], "celsius"),
        ("GPU average temperature", [(f"avg({_on_pool('DCGM_FI_DEV_GPU_TEMP')})", "average")], "celsius"),
        ("GPU power usage", [(_on_pool("DCGM_FI_DEV_POWER_USAGE"), legend)], "watt"),
        ("GPU power total", [(f"sum({_on_pool('DCGM_FI_DEV_POWER_USAGE')})", "total")], "watt"),
        ("GPU SM clocks", [(_on_pool("DCGM_FI_DEV_SM_CLOCK * 1000000"), legend)], "hertz"),
        ("GPU utilization", [(_on_pool("DCGM_FI_DEV_GPU_UTIL"), legend)], "percent"),
        ("GPU framebuffer memory used", [(_on_pool("DCGM_FI_DEV_FB_USED"), legend)], "decmbytes"),
        ("Tensor core utilization", [(_on_pool("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"), legend)], "percentunit"),
    ]
    panels = [_panel(i + 1, title, exprs, unit, (i % 2) * 12, (i // 2) * 8) for i, (title, exprs, unit) in enumerate(rows)]
    return _dashboard("gpufleet-gpu-nodes", "GPU nodes (DCGM)", panels, pools)


def pools_dashboard(pools: list[PoolFacts], idle_utilization_percent: int) -> dict:
    """gpufleet per pool: capacity, use, waste and scale-from-zero."""
    by_pool = f"sum by ({POOL_SERIES_LABEL})"
    idle = f'(DCGM_FI_DEV_GPU_UTIL{{{ALLOCATED}}} < bool {idle_utilization_percent}) * on (Hostname) group_left ({POOL_SERIES_LABEL}) {_POOL_NODES}'
    # Each pool's GPU-hour price from the catalog is a literal in its own query (Prometheus has no price series).
    cost_exprs = [
        (f'sum(({idle}) * on (Hostname) group_left () label_replace(kube_node_labels{{{POOL_SERIES_LABEL}="{p.pool}"}}, "Hostname", "$1", "node", "(.+)")) * {p.price_per_gpu_hour:.4f}',
         f"{p.pool} ($/h)")
        for p in pools if p.price_per_gpu_hour is not None
    ]
    rows = [
        ("GPUs present vs allocated", [
            (f'{by_pool} (count by (Hostname) (DCGM_FI_DEV_GPU_TEMP) * on (Hostname) group_left ({POOL_SERIES_LABEL}) {_POOL_NODES})', "present {{" + POOL_SERIES_LABEL + "}}"),
            (f'{by_pool} (count by (Hostname) (DCGM_FI_DEV_GPU_TEMP{{{ALLOCATED}}}) * on (Hostname) group_left ({POOL_SERIES_LABEL}) {_POOL_NODES})', "allocated {{" + POOL_SERIES_LABEL + "}}"),
        ], "short"),
        ("GPU utilization by pool", [(f"avg by ({POOL_SERIES_LABEL}) (DCGM_FI_DEV_GPU_UTIL * on (Hostname) group_left ({POOL_SERIES_LABEL}) {_POOL_NODES})", "{{" + POOL_SERIES_LABEL + "}}")], "percent"),
        ("GPU memory used by pool", [(f"{by_pool} (DCGM_FI_DEV_FB_USED * on (Hostname) group_left ({POOL_SERIES_LABEL}) {_POOL_NODES})", "{{" + POOL_SERIES_LABEL + "}}")], "decmbytes"),
        ("GPU power by pool", [(f"{by_pool} (DCGM_FI_DEV_POWER_USAGE * on (Hostname) group_left ({POOL_SERIES_LABEL}) {_POOL_NODES})", "{{" + POOL_SERIES_LABEL + "}}")], "watt"),
        ("Idle allocated GPUs", [(f"{by_pool} ({idle})", "{{" + POOL_SERIES_LABEL + "}}")], "short"),
        ("Cost of idle allocated GPUs (catalog price)", cost_exprs or [("vector(0)", "no priced pool")], "currencyUSD"),
        ("Pending GPU pods", [(
            f'count(sum by (namespace, pod) (kube_pod_container_resource_requests{{resource="{GPU_REQUEST_RESOURCE}"}}) '
            '* on (namespace, pod) group_left () (kube_pod_status_phase{phase="Pending"} == 1))', "pending")], "short"),
        ("Scale from zero: longest wait of a pending GPU pod", [(
            f'max((time() - kube_pod_created) * on (namespace, pod) group_left () (sum by (namespace, pod) '
            f'(kube_pod_container_resource_requests{{resource="{GPU_REQUEST_RESOURCE}"}}) > 0) '
            '* on (namespace, pod) group_left () (kube_pod_status_phase{phase="Pending"} == 1))', "longest wait")], "s"),
    ]
    panels = [_panel(i + 1, title, exprs, unit, (i % 2) * 12, (i // 2) * 8) for i, (title, exprs, unit) in enumerate(rows)]
    return _dashboard("gpufleet-pools", "gpufleet GPU pools", panels, pools)


def dashboards(pools: list[PoolFacts], idle_utilization_percent: int) -> dict[str, dict]:
    """ConfigMap data key -> dashboard JSON model."""
    return {
        "gpu-nodes.json": gpu_nodes(pools),
        "gpufleet-pools.json": pools_dashboard(pools, idle_utilization_percent),
    }


def configmap_data(dashboard: dict) -> str:
    return json.dumps(dashboard, indent=1, sort_keys=True)
