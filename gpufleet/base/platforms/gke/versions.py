"""gke: versions traits (gpufleet/base/platforms/contract/versions.py says what each one means)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from gpufleet.base import versions
from gpufleet.base.catalog import charges
from gpufleet.base.catalog import kubernetes as k8s_catalog
from gpufleet.base.platforms.contract.versions import CONTROL_PLANE, NODE_POOL, MoveRule, VersionTraits
from gpufleet.base.spec.checks.lifecycle_checks import calendar_warnings


class GkeVersions(VersionTraits):
    kubernetes_versions = versions.GKE_KUBERNETES_VERSIONS
    unknown_version = "is not a GKE version gpufleet plans for"
    move_rules = (
        MoveRule(CONTROL_PLANE, "no-downgrade",
                 source="GKE 'Manually upgrading a cluster or node pool' "
                        "(docs.cloud.google.com/kubernetes-engine/docs/how-to/upgrading-a-cluster), downgrading: a "
                        "control plane goes back only to an earlier patch of its minor (or rolls back a two-step minor "
                        "upgrade still in its soak), never to an earlier minor",
                 instead="a lower minor needs a new cluster (and a migration of the workloads)"),
        MoveRule(CONTROL_PLANE, "step", limit=1,
                 source="GKE 'About GKE cluster upgrades' and 'Manually upgrading a cluster': control plane upgrades are "
                        "sequential, one minor version at a time (node pools may then skip a minor)"),
        # GKE's own limit, stricter than the kubelet skew (three).
        MoveRule(NODE_POOL, "skew", limit=2,
                 source="GKE 'GKE versioning and support' (docs.cloud.google.com/kubernetes-engine/versioning): nodes "
                        "can't run a newer version than the control plane and may trail it by at most two minor versions"),
    )

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
