"""Public list prices of GPU clouds' Kubernetes nodes (gpu_clouds.yaml), for pools of an existing cluster
(`nodePools[].existing.offering`): the GPU model, GPUs per node and one node-hour's price, each with its source and
the date it was read. Hand-entered from the providers' pricing pages (no public price API without an account)."""

from __future__ import annotations

from dataclasses import dataclass

from gpufleet.base.catalog import _load

FILE = "gpu_clouds.yaml"


@dataclass(frozen=True)
class Offering:
    provider: str
    name: str
    gpu: str
    gpus: int
    node_hour: float
    """USD per node-hour (a per-GPU list price times the node's GPUs)."""
    source: str
    """What the figure was read from: URL, the page's name for it, and a transcription it came through."""
    as_of: str


def providers() -> list[str]:
    return sorted(_load(FILE)["providers"])


def offerings(provider: str) -> list[str]:
    return sorted((_load(FILE)["providers"].get(provider) or {}).get("offerings") or {})


def offering(provider: str, name: str) -> Offering:
    doc = _load(FILE)
    row = doc["providers"][provider]["offerings"][name]
    src = doc["sources"][row["source"]]
    node_hour = row["node_hour"] if "node_hour" in row else round(row["gpu_hour"] * row["gpus"], 4)
    per = f"${row['gpu_hour']}/GPU-hour x {row['gpus']}" if "gpu_hour" in row else f"${row['node_hour']}/hour"
    via = f", via {src['via']}" if src.get("via") else ""
    return Offering(provider, name, row["gpu"], row["gpus"], node_hour,
                    f"{src['url']} '{row['page_name']}' {per} (read {src['read']}{via})", src["read"])
