"""existing: versions traits (gpufleet/base/platforms/contract/versions.py says what each one means).

The cluster's provider keeps its own support calendar; the catalog has none for it (no Kubernetes warnings)."""

from __future__ import annotations

from gpufleet.base import versions
from gpufleet.base.platforms.contract.versions import VersionTraits


def _minor(version: str) -> tuple[int, ...]:
    return tuple(map(int, version.split(".")))


class ExistingVersions(VersionTraits):
    # An existing cluster runs whatever its provider runs: any minor one of the platforms gpufleet plans for has.
    kubernetes_versions = tuple(sorted({*versions.K3S_RELEASES, *versions.EKS_KUBERNETES_VERSIONS,
                                        *versions.GKE_KUBERNETES_VERSIONS, *versions.AKS_KUBERNETES_VERSIONS}, key=_minor))
    unknown_version = "is not a Kubernetes version gpufleet plans for"
