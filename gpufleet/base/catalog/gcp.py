"""GCP machine-type facts for GKE node pools, loaded from gcp_machines.yaml (each fact with sources).

Lookups raise KeyError for unknown names so the spec can list what is known.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Optional

from gpufleet.base.catalog import _load

FILE = "gcp_machines.yaml"


@dataclass(frozen=True)
class GpuDirect:
    """GPU-to-GPU networking a machine type supports on GKE."""

    kind: str  # TCPX | TCPXO | RDMA
    networks: int  # additional VPC networks, one NIC each (RDMA: the gVNIC VPC)
    rdma_subnets: int  # RDMA only: subnets of the one RoCE VPC, one per CX-7 NIC
    installer: Optional[str] = None  # the NCCL plugin installer variant (versions.GKE_GPUDIRECT_MANIFESTS key suffix)

    @property
    def manifests_key(self) -> str:
        """The key of the installer manifests this machine's pools get (versions.GKE_GPUDIRECT_MANIFESTS): the kind,
        or `<kind>-<installer>` where the machine needs its own (A4X: the arm64 gIB plugin)."""
        return f"{self.kind}-{self.installer}" if self.installer else self.kind

    @property
    def additional_node_networks(self) -> int:
        """How many additional_node_network_configs a node pool carries."""
        return self.networks + self.rdma_subnets


@dataclass(frozen=True)
class GcpMachine:
    name: str
    accelerator: str  # Compute Engine accelerator type, e.g. nvidia-l4
    gpu: str  # catalog GPU model, e.g. L4
    counts: tuple[int, ...]  # accelerator counts the machine type takes
    gpudirect: Optional[GpuDirect]
    on_demand: Optional[float]  # None: not sold on-demand (see sale_options), or no sourced price
    spot: Optional[float]  # None: no sourced spot price (the plan lists the pool as unpriced)
    gpu_on_demand: float  # per attached GPU (N1 + T4); 0 when the price includes the GPUs
    gpu_spot: float
    sources: tuple[str, ...]
    boot_disk: str = "pd-balanced"  # node boot disk type; hyperdisk-balanced where the machine takes Hyperdisk only
    sale_options: tuple[str, ...] = ("on-demand", "spot")
    """How Compute Engine sells the machine type: on-demand, spot, flex-start, reservation."""
    on_demand_needs_reservation: bool = False
    """Sold on-demand normally only through a reservation (A3 Ultra, A4): on-demand without one is a warning."""
    vcpus: Optional[int] = None
    """vCPUs of the machine type (gcp_machines.yaml sources gce_gpu_table, skypilot_v8_gcp); None where none was read."""
    memory_gb: Optional[float] = None
    """Instance memory in GB, as Compute Engine's GPU machine types tables give it; None where none was read."""
    gpu_memory_gb: Optional[float] = None
    """GPU memory of all the machine's GPUs in GB (Compute Engine's tables); None where the count varies (N1 + T4)."""

    @property
    def sold_on_demand(self) -> bool:
        return "on-demand" in self.sale_options

    @property
    def fixed_count(self) -> Optional[int]:
        """The accelerator count when the machine type fixes it."""
        return self.counts[0] if len(self.counts) == 1 else None

    def price(self, capacity: str, count: int) -> Optional[float]:
        """Hourly USD for one node (us-central1 estimate) at on-demand or spot capacity."""
        if capacity == "spot":
            return None if self.spot is None else round(self.spot + self.gpu_spot * count, 4)
        if self.on_demand is None:
            return None
        return round(self.on_demand + self.gpu_on_demand * count, 4)


@functools.cache
def machines() -> dict[str, GcpMachine]:
    data = _load(FILE)
    accelerators = data["accelerators"]
    out = {}
    for name, row in data["machines"].items():
        direct = row.get("gpudirect")
        gpu_price = row.get("gpu_price") or {"on_demand": 0.0, "spot": 0.0}
        out[name] = GcpMachine(
            name=name,
            accelerator=row["accelerator"],
            gpu=accelerators[row["accelerator"]]["gpu"],
            counts=tuple(row["counts"]),
            gpudirect=GpuDirect(direct["kind"], direct["networks"], direct["rdma_subnets"], direct.get("installer"))
            if direct else None,
            on_demand=None if row["price"]["on_demand"] is None else float(row["price"]["on_demand"]),
            spot=None if row["price"]["spot"] is None else float(row["price"]["spot"]),
            gpu_on_demand=float(gpu_price["on_demand"]),
            gpu_spot=float(gpu_price["spot"]),
            sources=tuple(row["sources"]),
            boot_disk=row.get("boot_disk", "pd-balanced"),
            sale_options=tuple(row.get("sale_options", ("on-demand", "spot"))),
            on_demand_needs_reservation=bool(row.get("on_demand_needs_reservation", False)),
            vcpus=row.get("vcpus"),
            memory_gb=row.get("memory_gb"),
            gpu_memory_gb=row.get("gpu_memory_gb"),
        )
    return out


def machine(name: str) -> GcpMachine:
    """A GPU machine type by name (KeyError if unknown)."""
    return machines()[name]


def gpudirect_machines() -> list[str]:
    return [name for name, m in machines().items() if m.gpudirect]


def gke_driver_branch(kubernetes_version: str, gpu_driver_version: str) -> Optional[int]:
    """The NVIDIA driver branch GKE installs for DEFAULT/LATEST on a GKE minor version (None if unknown)."""
    rows = _load(FILE)["gke_driver_branches"]["rows"]
    return (rows.get(kubernetes_version) or {}).get(gpu_driver_version)


def gke_gpu_driver_rows() -> dict:
    """GPU model -> GKE minor -> {DEFAULT, LATEST}: the branch GKE installs at least for that GPU (gcp_machines.yaml
    gke_driver_branches_per_gpu, with its source)."""
    return _load(FILE).get("gke_driver_branches_per_gpu", {}).get("rows", {})


def gke_gpu_driver_branch(kubernetes_version: str, gpu_driver_version: str, gpu: Optional[str]) -> Optional[int]:
    """The driver branch a GKE pool of `gpu` runs with DEFAULT/LATEST on a GKE minor: the newer of the minor's row and
    the GPU's own row (None if neither is recorded)."""
    known = [b for b in (gke_driver_branch(kubernetes_version, gpu_driver_version),
                         ((gke_gpu_driver_rows().get(gpu or "") or {}).get(kubernetes_version) or {}).get(gpu_driver_version))
             if b is not None]
    return max(known) if known else None


def gke_driver_floor(branch: int) -> str:
    """The oldest driver version GKE installs on a branch (gke_driver_floor_versions), else '<branch>.0'."""
    rows = _load(FILE).get("gke_driver_floor_versions", {}).get("rows", {})
    return str(rows.get(branch) or rows.get(str(branch)) or f"{branch}.0")


def price_date() -> str:
    return str(_load(FILE)["price_date"])


def gpu_accelerators(gpu: str) -> tuple[str, ...]:
    """The Compute Engine accelerator types of a catalog GPU model (H100-80GB: nvidia-h100-80gb and
    nvidia-h100-mega-80gb), in the catalog's order."""
    return tuple(a for a, row in _load(FILE)["accelerators"].items() if row["gpu"] == gpu)


def accelerator_gpu(accelerator: str) -> Optional[str]:
    """The catalog GPU model of a Compute Engine accelerator type (None if unknown)."""
    row = _load(FILE)["accelerators"].get(accelerator)
    return row["gpu"] if row else None


def machine_has_gpus(machine_type: str) -> bool:
    """A machine type of an accelerator-optimized family (a3-highgpu-8g, g2-standard-4, ...): GPUs attached."""
    family, dash, _ = (machine_type or "").partition("-")
    return bool(dash) and family in _load(FILE)["gpu_machine_families"]["names"]


def bundled_local_ssds(machine_type: str) -> int:
    """Local SSDs a machine type comes with (gcp_machines.yaml `local_ssd`); 0 when it has none bundled."""
    return int(_load(FILE).get("local_ssd", {}).get("machines", {}).get(machine_type, 0))


def compact_placement_supported(machine_type: str) -> bool:
    """GKE node pools of this machine type take a COMPACT placement policy (gcp_machines.yaml `compact_placement`)."""
    families = _load(FILE).get("compact_placement", {}).get("families", [])
    return any(machine_type == f or machine_type.startswith(f + "-") for f in families)
