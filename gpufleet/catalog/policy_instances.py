"""Lookups over policy_instances.yaml: cloud GPU shapes the policy pack judges resources by.

Every lookup returns None for a shape the table does not know, so a rule can say it cannot judge
instead of guessing.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import yaml

_FILE = Path(__file__).with_name("policy_instances.yaml")


@functools.cache
def _data() -> dict:
    with open(_FILE, encoding="utf-8") as f:
        return yaml.safe_load(f)


@dataclass(frozen=True)
class GpuShape:
    """What one node of a cloud shape offers."""

    name: str
    gpu: Optional[str]  # catalog GPU model
    gpus: int
    price_hour: Optional[float]  # on-demand USD per node-hour
    efa_interfaces: int = 0
    gpudirect_networks: int = 0


def ec2_family(instance_type: str) -> str:
    return instance_type.split(".", 1)[0]


def ec2_is_gpu(instance_type: str) -> bool:
    """An EC2 instance type with NVIDIA GPUs (known size, or a size of a known GPU family)."""
    return instance_type in _data()["ec2_instance_types"] or ec2_family(instance_type) in _data()["ec2_gpu_families"]


def ec2_shape(instance_type: str) -> Optional[GpuShape]:
    row = _data()["ec2_instance_types"].get(instance_type)
    if row is None:
        return None
    return GpuShape(instance_type, row["gpu"], row["gpus"], row["price_hour"], efa_interfaces=row["efa_interfaces"])


def gke_accelerator_gpu(accelerator: str) -> Optional[str]:
    """The catalog GPU model of a GKE accelerator type (None when unknown)."""
    row = _data()["gke_accelerators"].get(accelerator)
    return row["gpu"] if row else None


def gke_shape(machine_type: str, accelerator: Optional[str] = None, count: int = 0) -> Optional[GpuShape]:
    """A GKE node's GPU shape from its machine type, or its attached accelerators (N1 + T4, ...)."""
    machine = _data()["gke_machine_types"].get(machine_type)
    if machine:
        accelerator = accelerator or machine["accelerator"]
        count = count or machine["gpus"]
    if not accelerator or accelerator not in _data()["gke_accelerators"]:
        return None
    acc = _data()["gke_accelerators"][accelerator]
    return GpuShape(
        machine_type,
        acc["gpu"],
        count,
        round(acc["gpu_price_hour"] * count, 4) if count else None,
        gpudirect_networks=machine["gpudirect_networks"] if machine else 0,
    )


_GKE_GPU_MACHINE = re.compile(r"^(a2|a3|a4|g2)-")


def gke_machine_has_gpus(machine_type: str) -> bool:
    """Accelerator-optimized machine families come with GPUs attached."""
    return bool(_GKE_GPU_MACHINE.match(machine_type or ""))
