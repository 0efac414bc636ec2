"""The Kubernetes versions a platform plans for and its support calendar (spec, lifecycle warnings)."""

from __future__ import annotations

import datetime as dt
from typing import Any


class VersionTraits:
    """Defaults: a platform that declares nothing here takes any Kubernetes minor, keeps no support calendar, runs
    the stack's GPU Operator and has its driver branch judged by NVIDIA's calendar."""

    kubernetes_versions: tuple[str, ...] = ()
    """The Kubernetes minors gpufleet plans for on it (from gpufleet/base/versions.py). Default: empty, any minor."""

    unknown_version: str = "is not a Kubernetes version gpufleet plans for"
    """How a minor outside `kubernetes_versions` is refused, after the quoted version."""

    driver_branch_judged: bool = True
    """Whether the driver branch its GPU nodes run is judged against NVIDIA's data center driver calendar (False where
    the catalog knows only a floor of the driver the nodes run). Default: True."""

    def driver_key(self, spec: Any) -> str:
        """The key path (under `gpufleet:`) where this stack chooses the driver its GPU nodes run. Default: the GPU
        Operator's `gpuOperator.driver.version`."""
        return "gpuOperator.driver.version"

    def kubernetes_warnings(self, stack: str, spec: Any, day: dt.date) -> list:
        """Lifecycle warnings (gpufleet.base.spec.errors.Problem) for the stack's Kubernetes minor on `day`, from the
        platform's support calendar (gpufleet/base/spec/checks/lifecycle_checks.py). Default: none (no calendar)."""
        return []
