"""Azure GPU VM sizes for AKS node pools, loaded from azure_vms.yaml (each fact with its sources).

Lookups raise KeyError for unknown names so the spec can list what is known. Prices are per region and undated (the
`prices:` section of azure_vms.yaml says from where); None where the source has none: the plan then lists the pool as
unpriced, never as free.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Optional

from gpufleet.base.catalog._files import _load

FILE = "azure_vms.yaml"
PRICE_SOURCE = "azure_retail_snapshot"
"""The `sources:` key the `prices:` section was read from (undated: azure_vms.yaml says why)."""


@dataclass(frozen=True)
class InfiniBand:
    links: int  # InfiniBand ports (one ConnectX NIC each) per VM
    gbps: int  # per port


@dataclass(frozen=True)
class AzureVm:
    name: str
    gpu: str  # catalog GPU model (gpus.yaml)
    gpus: int
    vcpus: int
    memory_gib: int
    arch: str  # x86_64 | arm64
    infiniband: Optional[InfiniBand]
    regions: Optional[tuple[str, ...]]  # None: not read (azure_vms.yaml)
    sources: tuple[str, ...]
    driver: str = "cuda"
    """grid: the VM runs only NVIDIA's GRID (vGPU guest) driver (azure_vms.yaml `driver`); cuda: the data-center driver."""
    prices: tuple[tuple[str, Optional[float], Optional[float]], ...] = ()
    """(region, on-demand, spot) USD per VM-hour, Linux, as `PRICE_SOURCE` read them; None: not in the source."""

    def price(self, capacity: str, region: Optional[str]) -> Optional[float]:
        """The hourly price at `capacity` (spot | anything else: pay-as-you-go) in `region`, or None."""
        for name, on_demand, spot in self.prices:
            if name == region:
                return spot if capacity == "spot" else on_demand
        return None

    @property
    def priced_regions(self) -> tuple[str, ...]:
        return tuple(name for name, _, _ in self.prices)


@functools.cache
def vms() -> dict[str, AzureVm]:
    out = {}
    prices = _load(FILE).get("prices") or {}
    for name, row in _load(FILE)["vms"].items():
        ib = row.get("infiniband")
        regions = row.get("regions")
        out[name] = AzureVm(
            name=name, gpu=row["gpu"], gpus=int(row["gpus"]), vcpus=int(row["vcpus"]), memory_gib=int(row["memory_gib"]),
            arch=row["arch"], infiniband=InfiniBand(int(ib["links"]), int(ib["gbps"])) if ib else None,
            regions=tuple(regions) if regions is not None else None,
            sources=tuple(row["sources"]), driver=row.get("driver", "cuda"),
            prices=tuple((region, p.get("on_demand"), p.get("spot")) for region, p in (prices.get(name) or {}).items()),
        )
    return out


def vm(name: str) -> AzureVm:
    """The GPU VM size by its ARM name, e.g. Standard_ND96isr_H100_v5 (KeyError if unknown)."""
    return vms()[name]


def as_of() -> str:
    return str(_load(FILE)["as_of"])


def source_text(keys) -> str:
    sources = _load(FILE)["sources"]
    return "; ".join(sources[k] for k in keys)
