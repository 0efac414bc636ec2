"""existing: scheduling traits (gpufleet/base/platforms/contract/scheduling.py says what each one means)."""

from __future__ import annotations

from gpufleet.base.platforms.contract.scheduling import SchedulingTraits


class ExistingScheduling(SchedulingTraits):
    nic_rdma = True  # RDMA over the Network Operator's NICs, as on k3s (components/existing/platform.py)
