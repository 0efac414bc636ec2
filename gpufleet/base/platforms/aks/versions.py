"""aks: versions traits (gpufleet/base/platforms/contract/versions.py says what each one means)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from gpufleet.base import versions
from gpufleet.base.platforms.contract.versions import VersionTraits
from gpufleet.base.spec.platforms import aks_checks


class AksVersions(VersionTraits):
    kubernetes_versions = versions.AKS_KUBERNETES_VERSIONS
    unknown_version = "is not an AKS version gpufleet plans for"

    def kubernetes_warnings(self, stack: str, spec: Any, day: dt.date) -> list:
        """AKS's community and long-term support calendar (catalog kubernetes.yaml `aks`)."""
        return aks_checks.kubernetes_warnings(stack, spec, day)
