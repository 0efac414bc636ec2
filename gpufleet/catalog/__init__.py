"""Facts about GPUs, drivers and GPU Operator releases, loaded from the YAML files beside this one.

Each YAML entry names its sources. Lookups return small frozen dataclasses; unknown names raise
KeyError so callers (the spec) can turn them into a clear error listing what is known.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Optional

from gpufleet.catalog._files import _load
from gpufleet.catalog.kubernetes import KubernetesVersion, eks_kubernetes_version, gke_kubernetes_version

__all__ = ["KubernetesVersion", "eks_kubernetes_version", "gke_kubernetes_version"]


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
    min_driver_branch: Optional[int]  # None: no source read (the driver-floor check does not judge the GPU)
    mig: Optional[MigFacts]
    sources: tuple[str, ...]
    fraction_of: Optional[str] = None  # a vGPU slice of this model (EC2 g6f/gr6f)
    fraction: Optional[float] = None

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
            fraction_of=row.get("fraction_of"),
            fraction=row.get("fraction"),
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


@dataclass(frozen=True)
class CudaSupport:
    """How a driver runs one CUDA toolkit release.

    mode: "full" (driver >= the toolkit's own minimum), "minor-version" (only through CUDA minor-version
    compatibility: runs, but PTX JIT of newer code, NVRTC and APIs newer than the driver fail), or "none".
    """

    ok: bool
    mode: str
    why: str

    @property
    def limited(self) -> bool:
        """True when the pass relies on minor-version compatibility only (worth a warning)."""
        return self.ok and self.mode == "minor-version"


MINOR_VERSION_LIMITS = (
    "in minor-version compatibility mode PTX JIT of code built for a newer toolkit and NVRTC-compiled "
    "kernels fail, and APIs newer than the driver return cudaErrorCallRequiresNewerDriver"
)


def cuda_support(driver_version: str, cuda: str) -> CudaSupport:
    """Whether, and how, a driver runs a CUDA toolkit release ("12.8" GA, "12.8.1" Update 1, ...).

    Full compatibility when the driver is at least the toolkit's own minimum (Table 3); otherwise
    minor-version compatibility when the driver is at least the exact minimum of the CUDA major (CUDA
    compatibility guide, Table 1: 11.x >= 450.80.02, 12.x >= 525.60.13, 13.x >= 580.65.06).
    """
    data = _load("drivers.yaml")
    rows = data["cuda_min_driver"]["rows"]
    if cuda not in rows:
        return CudaSupport(False, "none", f"CUDA {cuda} is not in the compatibility table (known: {', '.join(cuda_versions())})")
    minimum = rows[cuda]
    if minimum is not None and parse_version(driver_version) >= parse_version(minimum):
        return CudaSupport(True, "full", f"driver {driver_version} >= {minimum}, the minimum for CUDA {cuda}")
    major = cuda.split(".")[0]
    compat_min = data["cuda_minor_compat_min_driver"]["rows"].get(major)
    own = f"the minimum for CUDA {cuda} is {minimum}" if minimum else f"no minimum driver is recorded for CUDA {cuda}"
    if compat_min is not None and parse_version(driver_version) >= parse_version(compat_min):
        return CudaSupport(
            True, "minor-version",
            f"driver {driver_version} runs CUDA {cuda} through CUDA {major}.x minor-version compatibility only "
            f"(>= {compat_min}; {own}): {MINOR_VERSION_LIMITS}",
        )
    if minimum is None:
        return CudaSupport(False, "none", f"driver {driver_version} is older than {compat_min}, the minimum for CUDA {major}.x")
    return CudaSupport(False, "none", f"driver {driver_version} is older than {minimum}, the minimum for CUDA {cuda}")


def driver_runs_cuda(driver_version: str, cuda: str) -> tuple[bool, str]:
    """Whether a driver runs a CUDA toolkit release, and how: (ok, explanation). See cuda_support."""
    support = cuda_support(driver_version, cuda)
    return support.ok, support.why



CATALOG_DATE_FIELDS = {"drivers.yaml": "as_of", "aws_instances.yaml": "prices_as_of", "gcp_machines.yaml": "price_date", "kubernetes.yaml": "as_of"}
PLATFORM_FILES = {
    "eks": ("drivers.yaml", "aws_instances.yaml", "kubernetes.yaml"),
    "gke": ("drivers.yaml", "gcp_machines.yaml", "kubernetes.yaml"),
    "k3s": ("drivers.yaml",),
}


def catalog_dates(platform: Optional[str] = None) -> dict[str, str]:
    """file -> the date its facts were last read from their sources (all files, or those a platform uses)."""
    files = PLATFORM_FILES.get(platform, tuple(CATALOG_DATE_FIELDS)) if platform else tuple(CATALOG_DATE_FIELDS)
    return {f: str(_load(f)[CATALOG_DATE_FIELDS[f]]) for f in files}


def catalog_date(platform: Optional[str] = None) -> str:
    """The oldest of catalog_dates(platform): how fresh the facts a plan uses are, at worst."""
    return min(catalog_dates(platform).values())
