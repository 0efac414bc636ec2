"""k3s: versions traits (gpufleet/base/platforms/contract/versions.py says what each one means)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from gpufleet.base import versions
from gpufleet.base.catalog import lifecycle
from gpufleet.base.platforms.contract.versions import VersionTraits
from gpufleet.base.spec.checks.lifecycle_checks import NAMESPACE, support_warnings


class K3sVersions(VersionTraits):
    kubernetes_versions = tuple(versions.K3S_RELEASES)
    unknown_version = "has no pinned k3s release"

    def kubernetes_warnings(self, stack: str, spec: Any, day: dt.date) -> list:
        """A k3s minor ends with upstream Kubernetes' same minor (catalog lifecycle.yaml `k3s`)."""
        version = spec.cluster.kubernetes_version
        return support_warnings(stack, f"{NAMESPACE}:cluster.kubernetesVersion", lifecycle.k3s_minor(version), day, version,
                                "upgrade to a newer k3s minor")
