"""DRA and multi-node NVLink facts (gpufleet/base/catalog/dra.yaml): the Kubernetes and driver minimums of NVIDIA's
DRA driver for GPUs, NVLink domain sizes per platform and machine, and which autoscaler can scale a DRA pool up from
zero. Each fact carries its sources."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Optional

from gpufleet.base.catalog._files import _load


@dataclass(frozen=True)
class NvlinkSystem:
    """A machine that joins other machines' GPUs over NVLink (GB200 NVL72 and similar)."""

    machine: str  # EC2 instance type, GCE machine type, or (k3s) the GPU model of the hosts
    gpu: str
    gpus_per_machine: int
    domains: dict[str, int]  # the domain sizes the vendor sells -> machines per domain
    rule: str  # error | warning: what a partial domain is
    sources: tuple[str, ...]
    placement: dict = field(default_factory=dict, hash=False, compare=False)
    """What the platform requires to place the machines in one domain (dra.yaml `placement`): `reservation:
    capacity-block` (EC2 UltraServers) or `workload_policy: {type, accelerator_topology}` (GKE A4X, A4X Max)."""

    @property
    def workload_policy(self) -> Optional[dict]:
        """GKE: the Compute Engine workload policy a node pool of these machines must name, or None."""
        wp = self.placement.get("workload_policy")
        return dict(wp) if wp else None

    @property
    def reservation(self) -> Optional[str]:
        """The reservation kind the machines are sold through (`capacity-block`), or None."""
        return self.placement.get("reservation")

    @property
    def unit(self) -> int:
        """Machines per domain a pool is sized in: the smallest domain the vendor sells."""
        return min(self.domains.values())

    @property
    def largest(self) -> int:
        return max(self.domains.values())

    def describe(self) -> str:
        sizes = ", ".join(f"{name} = {n} machines ({n * self.gpus_per_machine} GPUs)" for name, n in self.domains.items())
        return f"{self.gpus_per_machine} GPUs per machine; NVLink domains: {sizes}"


@dataclass(frozen=True)
class AutoscalerDra:
    name: str
    dra_since: Optional[str]
    flag: Optional[str]
    can_scale_from_zero: bool
    sources: tuple[str, ...]
    node_label: Optional[str] = None  # scales from zero only pools whose nodes carry this label = "true"
    provisions_claims: bool = True  # launches nodes for pods whose GPUs come from a ResourceClaim


def data() -> dict:
    return _load("dra.yaml")


def sources() -> dict[str, str]:
    return dict(data()["sources"])


def kubernetes_min() -> str:
    """The oldest Kubernetes minor that serves resource.k8s.io/v1."""
    return data()["kubernetes_min"]["version"]


def kubernetes_min_patch() -> str:
    return data()["kubernetes_min"]["patch"]


def driver_min(what: str) -> str:
    """The oldest NVIDIA driver the DRA driver supports for `gpus` or `compute_domains`."""
    return data()["driver_min"][what]["version"]


def kueue_min() -> str:
    return data()["kueue_min"]["version"]


@functools.cache
def _systems() -> dict[tuple[str, str], NvlinkSystem]:
    out = {}
    for platform, rows in data()["nvlink_systems"].items():
        for machine, r in rows.items():
            out[(platform, machine)] = NvlinkSystem(machine, r["gpu"], r["gpus_per_machine"], dict(r["domains"]),
                                                    r["rule"], tuple(r["sources"]), dict(r.get("placement") or {}))
    return out


def nvlink_system(platform: str, machine: Optional[str]) -> Optional[NvlinkSystem]:
    """The multi-node NVLink system a pool's machine belongs to (None: NVLink stays inside one machine)."""
    return _systems().get((platform, machine or ""))


def unsourced(platform: str, machine: Optional[str]) -> Optional[str]:
    """Why a multi-node NVLink machine is not in `nvlink_systems` (no source read sizes it), or None."""
    return (data().get("unsourced") or {}).get(platform, {}).get(machine or "")


def autoscalers(platform: str) -> dict[str, AutoscalerDra]:
    rows = data()["autoscalers"].get(platform, {})
    return {n: AutoscalerDra(n, r["dra_since"], r["flag"], r["can_scale_from_zero"], tuple(r["sources"]), r.get("node_label"),
                             r.get("provisions_claims", True))
            for n, r in rows.items()}
