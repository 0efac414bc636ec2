"""AMD Instinct facts: partition modes per GPU and AMD GPU Driver (amdgpu) <-> ROCm compatibility.

From amd_gpus.yaml beside this file (each entry names its sources). The GPU models themselves join the one GPU
table (`gpufleet.base.catalog.gpu_models()`, vendor "amd"); this module holds what only AMD GPUs have.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Optional

from gpufleet.base.catalog._files import _load

FILE = "amd_gpus.yaml"
COMPUTE_MODES = ("SPX", "DPX", "QPX", "CPX")
MEMORY_MODES = ("NPS1", "NPS2", "NPS4")


@dataclass(frozen=True)
class AmdPartitions:
    """What compute and memory partitioning offers on one AMD GPU model."""

    compute: dict[str, int]  # compute mode -> partitions (logical GPUs) per GPU
    memory: dict[str, dict[str, Optional[str]]]  # compute mode -> memory mode -> minimum driver line (None: any)

    def memory_modes(self) -> list[str]:
        return [m for m in MEMORY_MODES if any(m in row for row in self.memory.values())]


@dataclass(frozen=True)
class AmdFacts:
    devices_per_gpu: int
    min_driver: str
    partitions: Optional[AmdPartitions]


def version_tuple(text: str) -> tuple[int, ...]:
    """'30.10.2' -> (30, 10, 2): AMD driver and ROCm versions compare as dotted integers."""
    return tuple(int(p) for p in str(text).split("."))


def driver_line(version: str) -> str:
    """'30.10.2' -> '30.10', '6.4.3' -> '6.4': the release line the compatibility rows name."""
    return ".".join(str(version).split(".")[:2])


@functools.cache
def amd_facts() -> dict[str, AmdFacts]:
    out = {}
    for name, row in _load(FILE)["gpus"].items():
        p = row.get("partitions")
        parts = AmdPartitions(dict(p["compute"]), {c: dict(m) for c, m in p["memory"].items()}) if p else None
        out[name] = AmdFacts(row["devices_per_gpu"], str(row["min_driver"]), parts)
    return out


def gpu_rows() -> dict[str, dict]:
    """The raw GPU rows (for the catalog's one GPU table)."""
    return dict(_load(FILE)["gpus"])


def driver_rocm() -> dict[str, list[str]]:
    """Driver line -> the ROCm minor releases AMD supports on it."""
    return {k: list(v) for k, v in _load(FILE)["driver_rocm"]["rows"].items()}


def rocm_versions() -> list[str]:
    """Every ROCm minor release the compatibility rows name, newest first."""
    found = {v for row in driver_rocm().values() for v in row}
    return sorted(found, key=version_tuple, reverse=True)


def driver_runs_rocm(driver: str, rocm: str) -> tuple[bool, str]:
    """Whether a driver runs a ROCm release, and why (AMD's user-space / driver support matrix)."""
    line = driver_line(driver)
    rows = driver_rocm()
    if line not in rows:
        return False, f"AMD GPU Driver {driver} is not in the compatibility table (known lines: {', '.join(rows)})"
    if rocm in rows[line]:
        return True, f"AMD GPU Driver {line}.x runs ROCm {', '.join(rows[line])}"
    runs = [d for d, r in rows.items() if rocm in r]
    return False, (f"AMD GPU Driver {line}.x runs ROCm {', '.join(rows[line])}, not {rocm} "
                   f"(drivers that run ROCm {rocm}: {', '.join(runs) or 'none recorded'})")


def combination_problem(gpu: str, compute: str, memory: str, driver: Optional[str]) -> Optional[str]:
    """Why a compute/memory partition pair does not work on a GPU (None when it does). `driver`: the AMD
    GPU Driver the nodes run, when known (some pairs need a newer one)."""
    facts = amd_facts()[gpu]
    parts = facts.partitions
    if parts is None:
        return f"{gpu} has no compute or memory partitions (it is always advertised whole)"
    if compute not in parts.compute:
        return f"{gpu} has no compute partition {compute} (allowed: {', '.join(parts.compute)})"
    allowed = parts.memory.get(compute, {})
    if memory not in allowed:
        others = [c for c, m in parts.memory.items() if memory in m]
        with_ = f"; {memory} runs with {', '.join(others)}" if others else f"; {gpu} has no {memory}"
        return f"{gpu} in {compute} runs memory partition {', '.join(allowed)}, not {memory}{with_}"
    floor = allowed[memory]
    if floor and driver and version_tuple(driver_line(driver)) < version_tuple(floor):
        return f"{compute}+{memory} on {gpu} needs AMD GPU Driver {floor} or newer (the nodes run {driver})"
    return None


def operator_releases() -> dict[str, str]:
    """AMD GPU Operator chart version -> the oldest Kubernetes minor version it supports."""
    return {v: str(r["kubernetes_min"]) for v, r in _load(FILE)["operator_releases"].items()}
