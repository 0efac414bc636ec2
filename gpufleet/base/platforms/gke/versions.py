"""gke: versions traits (gpufleet/base/platforms/contract/versions.py says what each one means)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from gpufleet.base import versions
from gpufleet.base.catalog import charges
from gpufleet.base.catalog import kubernetes as k8s_catalog
from gpufleet.base.platforms.contract.versions import VersionTraits
from gpufleet.base.spec.checks.lifecycle_checks import calendar_warnings


class GkeVersions(VersionTraits):
    kubernetes_versions = versions.GKE_KUBERNETES_VERSIONS
    unknown_version = "is not a GKE version gpufleet plans for"

    def driver_key(self, spec: Any) -> str:
        """With GKE's own GPU stack each pool chooses GKE's driver (as catalog_checks._drivers finds it)."""
        return "nodePools[*].gke.gpuDriverVersion" if spec.cluster.gke.managed_gpu_stack else super().driver_key(spec)

    def kubernetes_warnings(self, stack: str, spec: Any, day: dt.date) -> list:
        """GKE's calendar (catalog kubernetes.yaml), with the Extended channel's fee, or GKE's upgrade on the other
        channels."""
        channel = spec.cluster.gke.release_channel
        extended = f"USD {charges.gke_extended_hourly():.2f} per cluster-hour instead of {charges.gke_cluster_fee().value:.2f}"
        if channel == "EXTENDED":
            cost = f"; in extended support the cluster management fee is {extended} (Extended channel)"
        else:
            cost = (f"; on the {channel} channel GKE upgrades the cluster at the end of standard support (only the "
                    f"Extended channel keeps the minor, at {extended})")
        return calendar_warnings(stack, spec, day, "GKE", k8s_catalog.gke_kubernetes_version, cost)
