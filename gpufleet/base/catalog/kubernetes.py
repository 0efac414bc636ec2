"""Kubernetes minor versions on EKS, GKE and AKS (gpufleet/base/catalog/kubernetes.yaml): standard or extended
support on a date, and (EKS) what a cluster-hour costs in each. Cost reads `eks_kubernetes_version(v)
.hourly_price`; plans warn on a version past standard support."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Optional

from gpufleet.base.catalog._files import _load

FILE = "kubernetes.yaml"


@dataclass(frozen=True)
class KubernetesVersion:
    platform: str  # eks | gke
    version: str
    status: str  # standard | extended | unsupported
    released: Optional[str]
    end_of_standard_support: Optional[str]
    end_of_extended_support: Optional[str]
    hourly_price: Optional[float]  # USD per cluster-hour at this status (EKS); None where not recorded
    sources: tuple[str, ...]

    @property
    def extended(self) -> bool:
        return self.status == "extended"


def _status(row: dict, today: dt.date) -> str:
    eoss, eoes = row.get("end_of_standard_support"), row.get("end_of_extended_support")
    if eoes and today >= dt.date.fromisoformat(eoes):
        return "unsupported"
    if eoss:
        # Extended billing starts at the beginning of the end-of-standard-support day (UTC).
        return "extended" if today >= dt.date.fromisoformat(eoss) else "standard"
    return row.get("status", "standard")


def _version(platform: str, version: str, today: Optional[dt.date]) -> KubernetesVersion:
    data = _load(FILE)[platform]
    row = data["versions"][version]  # KeyError if unknown
    status = _status(row, today or dt.datetime.now(dt.timezone.utc).date())
    prices = data.get("hourly_price") or {}
    return KubernetesVersion(
        platform=platform, version=version, status=status,
        released=row.get("released"), end_of_standard_support=row.get("end_of_standard_support"),
        end_of_extended_support=row.get("end_of_extended_support"),
        hourly_price=prices.get(status) if status != "unsupported" else None,
        sources=tuple(row["sources"]) + tuple(prices.get("sources", ())),
    )


def eks_kubernetes_version(version: str, today: Optional[dt.date] = None) -> KubernetesVersion:
    """EKS support status of a Kubernetes minor on `today` (default: now, UTC) and its cluster-hour price."""
    return _version("eks", version, today)


def gke_kubernetes_version(version: str, today: Optional[dt.date] = None) -> KubernetesVersion:
    """GKE support status of a Kubernetes minor on `today` (default: now, UTC)."""
    return _version("gke", version, today)


def aks_kubernetes_version(version: str, today: Optional[dt.date] = None, lts: bool = False) -> KubernetesVersion:
    """AKS support status of a Kubernetes minor on `today`: community support to its end of life, then (with
    `lts`: the Premium tier and the AKSLongTermSupport plan) long-term support to its LTS end of life, recorded as
    "extended"; without LTS a version past its end of life is "unsupported" (AKS's platform support is not support
    for Kubernetes itself: supported-kubernetes-versions.md, "Platform support policy")."""
    row = dict(_load(FILE)["aks"]["versions"][version])  # KeyError if unknown
    if not lts:
        row["end_of_extended_support"] = row.get("end_of_standard_support")
    status = _status(row, today or dt.datetime.now(dt.timezone.utc).date())
    return KubernetesVersion(
        platform="aks", version=version, status=status, released=row.get("released"),
        end_of_standard_support=row.get("end_of_standard_support"), end_of_extended_support=row.get("end_of_extended_support"),
        hourly_price=None, sources=tuple(row["sources"]),
    )


def eks_cluster_hourly_price(status: str) -> float:
    """USD per EKS cluster-hour in standard or extended support."""
    return float(_load(FILE)["eks"]["hourly_price"][status])


def as_of() -> str:
    return str(_load(FILE)["as_of"])
