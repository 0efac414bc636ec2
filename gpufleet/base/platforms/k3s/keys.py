"""k3s: keys traits (gpufleet/base/platforms/contract/keys.py says what each one means)."""

from __future__ import annotations

from gpufleet.base.platforms.contract.keys import KeyTraits


class K3sKeys(KeyTraits):
    pass
