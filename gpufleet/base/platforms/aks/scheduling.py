"""aks: scheduling traits (gpufleet/base/platforms/contract/scheduling.py says what each one means)."""

from __future__ import annotations

from gpufleet.base.platforms.contract.scheduling import SchedulingTraits


class AksScheduling(SchedulingTraits):
    pass
