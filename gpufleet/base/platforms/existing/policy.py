"""existing: policy traits (gpufleet/base/platforms/contract/policy.py says what each one means)."""

from __future__ import annotations

from gpufleet.base.platforms.contract.policy import PolicyTraits


class ExistingPolicy(PolicyTraits):
    """An existing cluster's nodes are not resources of the program: no pool types for the pack."""
