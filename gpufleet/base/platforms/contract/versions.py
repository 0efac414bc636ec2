"""The Kubernetes versions a platform plans for and its support calendar."""

from __future__ import annotations


class VersionTraits:
    """Defaults: a platform that declares nothing here."""
