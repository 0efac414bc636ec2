"""k3s: versions traits (gpufleet/base/platforms/contract/versions.py says what each one means)."""

from __future__ import annotations

from gpufleet.base.platforms.contract.versions import VersionTraits


class K3sVersions(VersionTraits):
    pass
