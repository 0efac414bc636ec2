"""eks: versions traits (gpufleet/base/platforms/contract/versions.py says what each one means)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from gpufleet.base import versions
from gpufleet.base.catalog import kubernetes as k8s_catalog
from gpufleet.base.platforms.contract.versions import VersionTraits
from gpufleet.base.spec.checks.lifecycle_checks import calendar_warnings


class EksVersions(VersionTraits):
    kubernetes_versions = versions.EKS_KUBERNETES_VERSIONS
    unknown_version = "is not an EKS version gpufleet plans for"
    # An EKS GPU AMI's catalog driver is a floor (aws_instances.yaml amis), not the branch the AMI ships: AWS moves
    # the AMI's driver branch itself, so judging the floor's branch would warn about a driver the nodes may not run.
    driver_branch_judged = False

    def kubernetes_warnings(self, stack: str, spec: Any, day: dt.date) -> list:
        """EKS's calendar (catalog kubernetes.yaml), with the extended cluster-hour price."""
        cost = (f"; in extended support the control plane costs USD {k8s_catalog.eks_cluster_hourly_price('extended'):.2f} "
                f"per cluster-hour instead of {k8s_catalog.eks_cluster_hourly_price('standard'):.2f}")
        return calendar_warnings(stack, spec, day, "EKS", k8s_catalog.eks_kubernetes_version, cost)
