"""Facts about GPUs, drivers and GPU Operator releases, loaded from the YAML files beside this one.

Each YAML entry names its sources. Lookups return small frozen dataclasses; unknown names raise
KeyError so callers (the spec) can turn them into a clear error listing what is known.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Optional

from gpufleet.base.catalog._files import _load
from gpufleet.base.catalog.amd import gpu_rows as amd_rows
from gpufleet.base.catalog.kubernetes import (
    KubernetesVersion, aks_kubernetes_version, eks_kubernetes_version, gke_kubernetes_version,
)

__all__ = ["KubernetesVersion", "aks_kubernetes_version", "eks_kubernetes_version", "gke_kubernetes_version"]


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
    vendor: str = "nvidia"
    """nvidia (gpus.yaml) or amd (amd_gpus.yaml; AMD facts in gpufleet/base/catalog/amd.py)."""
    host_arch: Optional[str] = None
    """A superchip's CPU architecture, fixed by the GPU (GB200, GB300: arm64, Grace); None: the GPU says nothing."""
    host_gpus: Optional[int] = None
    """GPUs on every node of a superchip GPU (one compute tray); None: any count."""

    @property
    def mig_capable(self) -> bool:
        return self.mig is not None

    @property
    def amd(self) -> bool:
        return self.vendor == "amd"


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
            host_arch=(row.get("host") or {}).get("arch"),
            host_gpus=(row.get("host") or {}).get("gpus_per_node"),
        )
    for name, row in amd_rows().items():
        # AMD drivers are not numbered in NVIDIA branches: min_driver_branch 0, the AMD floor is amd.AmdFacts.min_driver.
        out[name] = GpuModel(name, row["architecture"], row["memory_gb"], 0, None, tuple(row["sources"]), vendor="amd")
    return out


def gpu_source(key: str) -> str:
    """The text of one of gpus.yaml's `sources` (KeyError if unknown)."""
    return _load("gpus.yaml")["sources"][key]


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


CATALOG_DATE_FIELDS = {"drivers.yaml": "as_of", "amd_gpus.yaml": "as_of", "aws_instances.yaml": "prices_as_of", "gcp_machines.yaml": "price_date", "kubernetes.yaml": "as_of", "azure_vms.yaml": "as_of"}


def catalog_dates(files: Optional[tuple[str, ...]] = None) -> dict[str, str]:
    """file -> the date its facts were last read from their sources: of `files` (the catalog files a platform's plans
    use: its PricingTraits.catalog_files), or of every dated file when None."""
    return {f: str(_load(f)[CATALOG_DATE_FIELDS[f]]) for f in (files if files is not None else tuple(CATALOG_DATE_FIELDS))}


def catalog_date(files: Optional[tuple[str, ...]] = None) -> str:
    """The oldest of catalog_dates(files): how fresh the facts a plan uses are, at worst."""
    return min(catalog_dates(files).values())


@dataclass(frozen=True)
class XidBucket:
    """One of NVIDIA's resolution buckets (the Xid Catalog's 'Guidance Classes'), as gpufleet alerts on it."""

    name: str  # NVIDIA's bucket name, e.g. RESET_GPU
    severity: str  # the alert's: critical | warning | info
    nvidia: str  # what NVIDIA says the bucket means
    action: str  # the alert's runbook line


@dataclass(frozen=True)
class Xid:
    """One XID as NVIDIA's Xid Catalog describes it (gpufleet/base/catalog/xid.yaml)."""

    code: int
    xid_class: str
    name: str
    mnemonic: str
    action: XidBucket  # Resolution Bucket (Immediate Action)
    investigate: str  # Resolution Bucket (Investigatory Action)
    applies: tuple[str, ...]  # the catalog's 'Applies to' columns that say YES
    sources: tuple[str, ...]
    note: str = ""


@dataclass(frozen=True)
class XidClass:
    """A class of NVIDIA XID errors (gpufleet/base/catalog/xid.yaml) and what to do when one occurs."""

    name: str
    description: str
    action: str  # the runbook of the class's alerts that are not XIDs (DCGM counters)
    xids: tuple[int, ...]

    def by_action(self) -> dict[str, tuple[Xid, ...]]:
        """The class's XIDs grouped by NVIDIA's immediate action, so each group gets its own runbook."""
        out: dict[str, list[Xid]] = {}
        for code in self.xids:
            x = xids()[code]
            out.setdefault(x.action.name, []).append(x)
        return {k: tuple(v) for k, v in out.items()}


@functools.cache
def xid_buckets() -> dict[str, XidBucket]:
    """NVIDIA resolution bucket -> its meaning, the alert's severity and runbook line."""
    return {name: XidBucket(name, row["severity"], row["nvidia"], row["action"])
            for name, row in _load("xid.yaml")["buckets"].items()}


@functools.cache
def xids() -> dict[int, Xid]:
    """XID code -> class, NVIDIA's description, immediate and investigatory action, with sources."""
    data = _load("xid.yaml")
    buckets = xid_buckets()
    return {int(code): Xid(int(code), r["class"], r["name"], r["mnemonic"], buckets[r["action"]], r["investigate"],
                           tuple(r["applies"]), tuple(r["sources"]), r.get("note", ""))
            for code, r in sorted(data["xids"].items(), key=lambda kv: int(kv[0]))}


@functools.cache
def xid_classes() -> dict[str, XidClass]:
    """XID class -> its XIDs, what it means and the runbook of its non-XID alerts."""
    data = _load("xid.yaml")
    return {name: XidClass(name, row["description"], row["action"],
                           tuple(code for code, x in xids().items() if x.xid_class == name))
            for name, row in data["classes"].items()}
