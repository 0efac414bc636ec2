"""The gpufleet GPU dashboard as a Cloud Monitoring dashboard (GKE Managed Service for Prometheus).

The JSON follows the Dashboard resource of the Cloud Monitoring API
(https://cloud.google.com/monitoring/api/ref_v3/rest/v1/projects.dashboards): `displayName`, `labels`,
`mosaicLayout` {`columns` (at most 48), `tiles[]` {`xPos`, `yPos`, `width`, `height`, `widget`}}; a widget has a
`title` and one content field: `xyChart` {`dataSets[]` {`timeSeriesQuery` {`prometheusQuery`, `unitOverride`},
`plotType`}, `yAxis` {`label`, `scale`}} or `text` {`content`, `format`}. pulumi-gcp's
`gcp.monitoring.Dashboard` takes it as `dashboardJson`.

Panels: GPUs present vs allocated, utilization, memory used, power, idle-but-allocated GPUs, and what an idle GPU
costs per pool. GKE's DCGM series carry no pool label (components/observability/gke_alerts.py), so the panels group
by `modelName` (the exporter's GPU model label) and the per-pool GPU-hour prices (the catalog's, the plan's figure)
are a text panel beside the idle chart rather than a computed series.
"""

from __future__ import annotations

import json

from gpufleet.components.observability.gke_alerts import allocated, on_cluster
from gpufleet.components.observability.pools import PoolFacts

COLUMNS = 48  # MosaicLayout.columns: 1..48
WIDTH, HEIGHT = 24, 16


def _chart(title: str, queries: list[str], unit: str, label: str) -> dict:
    """An xyChart; each series is named by its labels (`modelName`): the legend-template syntax for PromQL series is
    not documented on the pages reachable here, so none is set."""
    return {
        "title": title,
        "xyChart": {
            "dataSets": [
                {"timeSeriesQuery": {"prometheusQuery": q, "unitOverride": unit}, "plotType": "LINE"}
                for q in queries
            ],
            "yAxis": {"label": label, "scale": "LINEAR"},
        },
    }


def _prices(pools: list[PoolFacts]) -> dict:
    rows = "\n".join(
        f"| {p.pool} | {p.gpus_per_node} | " + (f"${p.price_per_gpu_hour:.2f}" if p.price_per_gpu_hour is not None else "unpriced") + " |"
        for p in pools
    )
    return {
        "title": "What an idle GPU costs, per pool (gpufleet catalog)",
        "text": {
            "content": "| pool | GPUs per node | $/h per GPU |\n|---|---|---|\n" + rows
            + "\n\nAn idle allocated GPU wastes its pool's GPU-hour price (the plan's figure; spot pools at the spot estimate).",
            "format": "MARKDOWN",
        },
    }


def widgets(pools: list[PoolFacts], cluster: str, idle_utilization_percent: int) -> list[dict]:
    c = on_cluster(cluster)
    idle = f"{allocated('DCGM_FI_DEV_GPU_UTIL', cluster)} < bool {idle_utilization_percent}"
    return [
        _chart("GPUs present vs allocated", [
            f'label_replace(count by (modelName) (DCGM_FI_DEV_GPU_UTIL{{{c}}}), "gpus", "present", "", "")',
            f'label_replace(count by (modelName) ({allocated("DCGM_FI_DEV_GPU_UTIL", cluster)}), "gpus", "allocated", "", "")',
        ], "1", "GPUs"),
        _chart("GPU utilization", [f"avg by (modelName) (DCGM_FI_DEV_GPU_UTIL{{{c}}})"], "%", "utilization (%)"),
        _chart("GPU memory used", [f"sum by (modelName) (DCGM_FI_DEV_FB_USED{{{c}}})"], "MiBy", "framebuffer used (MiB)"),
        _chart("GPU power", [f"sum by (modelName) (DCGM_FI_DEV_POWER_USAGE{{{c}}})"], "W", "power (W)"),
        _chart("GPU temperature (max)", [f"max by (modelName) (DCGM_FI_DEV_GPU_TEMP{{{c}}})"], "Cel", "temperature (C)"),
        _chart(f"Idle allocated GPUs (under {idle_utilization_percent}% busy)", [f"sum by (modelName) ({idle})"], "1", "GPUs"),
        _prices(pools),
    ]


def dashboard(pools: list[PoolFacts], cluster: str, idle_utilization_percent: int) -> dict:
    """The Dashboard object: two tiles per row."""
    tiles = [
        {"xPos": (i % 2) * WIDTH, "yPos": (i // 2) * HEIGHT, "width": WIDTH, "height": HEIGHT, "widget": w}
        for i, w in enumerate(widgets(pools, cluster, idle_utilization_percent))
    ]
    return {
        "displayName": f"gpufleet GPUs ({cluster})",
        "labels": {"gpufleet": ""},
        "mosaicLayout": {"columns": COLUMNS, "tiles": tiles},
    }


def dashboard_json(pools: list[PoolFacts], cluster: str, idle_utilization_percent: int) -> str:
    return json.dumps(dashboard(pools, cluster, idle_utilization_percent), sort_keys=True)
