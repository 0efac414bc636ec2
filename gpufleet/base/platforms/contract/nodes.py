"""The labels and taints a platform's nodes really carry, and a pool's GPU shape from its cloud shape."""

from __future__ import annotations


class NodeTraits:
    """Defaults: a platform that declares nothing here."""
