"""Its stack keys and their checks (gpufleet/base/spec)."""

from __future__ import annotations


class KeyTraits:
    """Defaults: a platform that declares nothing here."""
