"""Which storage, cold-start, registry, image and metrics features a platform has, and why not when it has not."""

from __future__ import annotations


class AddonTraits:
    """Defaults: a platform that declares nothing here."""
