"""Azure GPU VM sizes for AKS node pools, loaded from azure_vms.yaml (each fact with its sources).

Lookups raise KeyError for unknown names so the spec can list what is known. Prices are None where no source was
read (azure_vms.yaml says why): the plan then lists the pool as unpriced, never as free.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Optional

from gpufleet.base.catalog._files import _load

FILE = "azure_vms.yaml"


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
    on_demand: Optional[float]  # USD per VM-hour, Linux pay-as-you-go; None: not read
    spot: Optional[float]
    sources: tuple[str, ...]
    driver: str = "cuda"
    """grid: the VM runs only NVIDIA's GRID (vGPU guest) driver (azure_vms.yaml `driver`); cuda: the data-center driver."""

    def price(self, capacity: str) -> Optional[float]:
        return self.spot if capacity == "spot" else self.on_demand


@functools.cache
def vms() -> dict[str, AzureVm]:
    out = {}
    for name, row in _load(FILE)["vms"].items():
        ib = row.get("infiniband")
        regions = row.get("regions")
        out[name] = AzureVm(
            name=name, gpu=row["gpu"], gpus=int(row["gpus"]), vcpus=int(row["vcpus"]), memory_gib=int(row["memory_gib"]),
            arch=row["arch"], infiniband=InfiniBand(int(ib["links"]), int(ib["gbps"])) if ib else None,
            regions=tuple(regions) if regions is not None else None,
            on_demand=row["price"]["on_demand"], spot=row["price"]["spot"], sources=tuple(row["sources"]),
            driver=row.get("driver", "cuda"),
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
