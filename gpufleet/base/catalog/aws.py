"""EC2 instance facts for EKS pools (gpufleet/base/catalog/aws_instances.yaml): GPU model and count, EFA
interfaces, estimated hourly prices, and the driver each EKS GPU AMI ships. Unknown types raise KeyError
so the spec can list what is known."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Optional

from gpufleet.base import versions
from gpufleet.base.catalog import _load


@dataclass(frozen=True)
class InstanceType:
    name: str
    gpu: Optional[str]
    gpus: int
    network_cards: int
    efa_interfaces: int
    on_demand: Optional[float]
    spot: Optional[float]
    sources: tuple[str, ...]
    efa_secondary: str = "efa"
    """Interface type on network cards 1.. of an EFA pool: efa (EFA with ENA) or efa-only (no IP address)."""
    vcpus: Optional[int] = None
    memory_gib: Optional[int] = None
    arch: str = "amd64"
    efa_device_rdma: bool = False
    """libfabric's EFA device RDMA read is on for this type (FI_EFA_USE_DEVICE_RDMA=1): what AWS's own EFA test sets
    for it (source dlc_efa_test); other types keep libfabric's default."""
    efa_known: bool = True
    """False where the catalog has not read the type's network cards and EFA interfaces (null in the YAML): the type
    then counts as having no EFA, and an RDMA pool of it is refused rather than wired from a guess."""

    @property
    def efa_layout_known(self) -> bool:
        """gpufleet puts one EFA interface on each of network cards 0..efa_interfaces-1 (node_group.efa_interfaces):
        right when every card takes one. A type with more cards than EFA interfaces (p6-b300.48xlarge: 17 and 16)
        needs a card layout the catalog does not record."""
        return self.efa_interfaces in (0, 1) or self.efa_interfaces == self.network_cards

    @property
    def has_efa(self) -> bool:
        return self.efa_interfaces > 0

    def price(self, capacity: str) -> Optional[float]:
        """Estimated $/h of one node for a pool's capacity type (on-demand | spot)."""
        return self.spot if capacity == "spot" else self.on_demand


@dataclass(frozen=True)
class AmiFacts:
    name: str
    driver_branch: int
    driver_version: Optional[str]
    ships_toolkit: bool

    @property
    def driver_floor(self) -> str:
        """The driver version alignment checks use: the recorded one, else the branch's first release."""
        return self.driver_version or f"{self.driver_branch}.0"


GENERATED = "aws_gpu_types.yaml"
"""Every NVIDIA GPU instance type from Karpenter's EC2 data (gpufleet/base/catalog/refresh/karpenter.py writes it):
the sizes aws_instances.yaml does not list by hand, so a real size (g6e.2xlarge, p5.4xlarge) is never unknown."""
GENERATED_SOURCES = ("karpenter_types", "karpenter_vpclimits", "karpenter_pricing")


@functools.cache
def instance_types() -> dict[str, InstanceType]:
    """The hand-kept rows of aws_instances.yaml, then every other size aws_gpu_types.yaml holds."""
    rows = _load("aws_instances.yaml")["instances"]
    generated = {
        name: InstanceType(
            name=name, gpu=r["gpu"], gpus=r["gpus"], network_cards=r["network_cards"] or 1,
            efa_interfaces=r["efa_interfaces"] or 0, on_demand=r["on_demand"], spot=None,
            sources=GENERATED_SOURCES, vcpus=r["vcpus"], memory_gib=r["memory_gib"], arch=r["arch"],
            efa_known=r["network_cards"] is not None,
        )
        for name, r in (_load(GENERATED).get("types") or {}).items() if name not in rows
    }
    return {**{
        name: InstanceType(
            name=name,
            gpu=r["gpu"],
            gpus=r["gpus"],
            network_cards=r["network_cards"] or 1,
            efa_interfaces=r["efa_interfaces"] or 0,
            on_demand=r["on_demand"],
            spot=r["spot"],
            sources=tuple(r["sources"]),
            efa_secondary=r.get("efa_secondary", "efa"),
            vcpus=r.get("vcpus"),
            memory_gib=r.get("memory_gib"),
            arch=r.get("arch", "amd64"),
            efa_device_rdma=r.get("efa_device_rdma", False),
            efa_known=r["efa_interfaces"] is not None,
        )
        for name, r in rows.items()
    }, **generated}


def instance_type(name: str) -> InstanceType:
    """Facts of one EC2 instance type (KeyError if the catalog does not know it)."""
    return instance_types()[name]


def stack_given(name: str, gpu: Optional[str], gpus: Optional[int]) -> InstanceType:
    """A type the catalog lacks, with the GPU model and count its pool states (nodePools[*].gpu / gpusPerNode): no
    EFA, no price (the pool's pricePerNodeHour prices it), sources ("stack",)."""
    return InstanceType(name=name, gpu=gpu, gpus=gpus or 0, network_cards=1, efa_interfaces=0, on_demand=None, spot=None,
                        sources=("stack",), efa_known=False)


def gpu_instance_types() -> list[str]:
    return [n for n, t in instance_types().items() if t.gpus]


@functools.cache
def amis() -> dict[str, AmiFacts]:
    rows = _load("aws_instances.yaml")["amis"]
    pinned = min((versions.EKS_AL2023_RELEASES[r] for r in versions.EKS_AL2023_RELEASE_PINS.values()),
                 key=lambda r: tuple(int(x) for x in r.driver.split(".")))
    return {
        n: AmiFacts(n, pinned.driver_branch if r["driver_branch"] == "pinned" else r["driver_branch"],
                    pinned.driver if r["driver_version"] == "pinned" else r["driver_version"], r["ships_toolkit"])
        for n, r in rows.items()
    }


def ami(name: str) -> AmiFacts:
    return amis()[name]


def gpu_families() -> tuple[str, ...]:
    """EC2 instance families with NVIDIA GPUs (aws_instances.yaml `gpu_families`)."""
    return tuple(_load("aws_instances.yaml")["gpu_families"]["names"])


def is_gpu_type(name: str) -> bool:
    """An EC2 instance type with NVIDIA GPUs: a known GPU type, or any size of a GPU family."""
    known = instance_types().get(name)
    return bool(known and known.gpus) or name.split(".", 1)[0] in gpu_families()


@dataclass(frozen=True)
class InstanceStore:
    """Local NVMe instance-store volumes of an instance type: `disks` of `disk_gb` each where aws_instances.yaml
    records the layout; only the total where it comes from aws_gpu_types.yaml (DescribeInstanceTypes' TotalSizeInGB)."""

    total_gb: int
    disks: Optional[int] = None
    disk_gb: Optional[int] = None


def instance_store(name: str) -> Optional[InstanceStore]:
    """The instance store of an EC2 instance type (aws_instances.yaml `instance_store`, else aws_gpu_types.yaml's
    local_nvme_gb); None: EBS only."""
    row = _load("aws_instances.yaml").get("instance_store", {}).get("types", {}).get(name)
    if row:
        return InstanceStore(row["disks"] * row["disk_gb"], row["disks"], row["disk_gb"])
    total = ((_load(GENERATED).get("types") or {}).get(name) or {}).get("local_nvme_gb")
    return InstanceStore(total) if total else None


def capacity_block_rates() -> dict[str, dict]:
    """Instance type -> its EC2 Capacity Block rate row (region, zone, hourly per instance, per accelerator, as_of):
    aws_instances.yaml `capacity_block_prices`, with its source."""
    return dict((_load("aws_instances.yaml").get("capacity_block_prices") or {}).get("rows") or {})
