"""Which of a platform's resources' fields force replacement or disrupt nodes (gpufleet/app/review)."""

from __future__ import annotations


class ReviewTraits:
    """Defaults: a platform that declares nothing here."""
