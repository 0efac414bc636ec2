"""Facts about GPUs, drivers and GPU Operator releases, loaded from the YAML files beside this one.

Each YAML entry names its sources. Lookups return small frozen dataclasses; unknown names raise
KeyError so callers (the spec) can turn them into a clear error listing what is known.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import yaml

_HERE = Path(__file__).parent


@functools.cache
def _load(name: str) -> dict:
    with open(_HERE / name, encoding="utf-8") as f:
        return yaml.safe_load(f)


@dataclass(frozen=True)
class MigFacts:
    """What MIG offers on one GPU model."""

    max_instances: int
    profiles: dict[str, int]  # profile -> instances on one GPU when filled with it alone
    all_balanced: dict[str, int]


@dataclass(frozen=True)
class GpuModel:
    name: str
    architecture: str
    memory_gb: int
    min_driver_branch: int
    mig: Optional[MigFacts]
    sources: tuple[str, ...]

    @property
    def mig_capable(self) -> bool:
        return self.mig is not None


@dataclass(frozen=True)
class OperatorRelease:
    version: str
    default_driver: str
    driver_branches: tuple[int, ...]
    kubernetes: tuple[str, ...]


@functools.cache
def gpu_models() -> dict[str, GpuModel]:
    out = {}
    for name, row in _load("gpus.yaml")["gpus"].items():
        mig = row.get("mig")
        out[name] = GpuModel(
            name=name,
            architecture=row["architecture"],
            memory_gb=row["memory_gb"],
            min_driver_branch=row["min_driver_branch"],
            mig=MigFacts(mig["max_instances"], dict(mig["profiles"]), dict(mig["all_balanced"])) if mig else None,
            sources=tuple(row["sources"]),
        )
    return out


def gpu(name: str) -> GpuModel:
    """The GPU model by catalog name (KeyError if unknown)."""
    return gpu_models()[name]


@functools.cache
def operator_releases() -> dict[str, OperatorRelease]:
    rows = _load("drivers.yaml")["gpu_operator_releases"]
    return {
        v: OperatorRelease(v, r["default_driver"], tuple(r["driver_branches"]), tuple(r["kubernetes"]))
        for v, r in rows.items()
    }


def operator_release(version: str) -> OperatorRelease:
    """Facts of one GPU Operator chart release (KeyError if unknown)."""
    return operator_releases()[version]


def cuda_versions() -> list[str]:
    """CUDA toolkit minor versions the compatibility table knows, newest first."""
    return list(_load("drivers.yaml")["cuda_min_driver"]["rows"])


def parse_version(text: str) -> tuple[int, ...]:
    """'570.124.06' -> (570, 124, 6); compares as dotted integers."""
    return tuple(int(part) for part in str(text).split("."))


def driver_branch(driver_version: str) -> int:
    return parse_version(driver_version)[0]


def driver_runs_cuda(driver_version: str, cuda: str) -> tuple[bool, str]:
    """Whether a driver runs a CUDA toolkit minor version, and how.

    Full compatibility when the driver is at least the toolkit's own minimum; otherwise minor-version
    compatibility when the driver's branch is at least the CUDA major's minimum branch (CUDA release
    notes, Table 2). Returns (ok, explanation).
    """
    data = _load("drivers.yaml")
    minimum = data["cuda_min_driver"]["rows"].get(cuda)
    if minimum is None:
        return False, f"CUDA {cuda} is not in the compatibility table (known: {', '.join(cuda_versions())})"
    if parse_version(driver_version) >= parse_version(minimum):
        return True, f"driver {driver_version} >= {minimum}, the minimum for CUDA {cuda}"
    major = cuda.split(".")[0]
    branch_min = data["cuda_minor_compat_min_branch"]["rows"].get(major)
    if branch_min is not None and driver_branch(driver_version) >= branch_min:
        return True, f"driver branch {driver_branch(driver_version)} >= {branch_min}: CUDA {major}.x minor-version compatibility"
    return False, f"driver {driver_version} is older than {minimum}, the minimum for CUDA {cuda}"
