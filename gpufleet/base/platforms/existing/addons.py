"""existing: addons traits (gpufleet/base/platforms/contract/addons.py says what each one means)."""

from __future__ import annotations

from gpufleet.base.platforms.contract.addons import AddonTraits


class ExistingAddons(AddonTraits):
    pass
