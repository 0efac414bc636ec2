"""k3s: scheduling traits (gpufleet/base/platforms/contract/scheduling.py says what each one means)."""

from __future__ import annotations

from gpufleet.base.platforms.contract.scheduling import SchedulingTraits


class K3sScheduling(SchedulingTraits):
    pass
