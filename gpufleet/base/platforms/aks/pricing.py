"""aks: pricing traits (gpufleet/base/platforms/contract/pricing.py says what each one means)."""

from __future__ import annotations

from gpufleet.base.platforms.contract.pricing import PricingTraits


class AksPricing(PricingTraits):
    pass
