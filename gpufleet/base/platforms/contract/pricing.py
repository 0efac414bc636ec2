"""How a platform's pools are counted and priced, and what its cluster costs beyond them."""

from __future__ import annotations


class PricingTraits:
    """Defaults: a platform that declares nothing here."""
