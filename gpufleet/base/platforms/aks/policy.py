"""aks: policy traits (gpufleet/base/platforms/contract/policy.py says what each one means)."""

from __future__ import annotations

from gpufleet.base.platforms.contract.policy import PolicyTraits


class AksPolicy(PolicyTraits):
    pass
