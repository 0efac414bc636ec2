"""DRA, topology, serving gateways, AMD, sharing and admission: what a platform supports and how."""

from __future__ import annotations


class SchedulingTraits:
    """Defaults: a platform that declares nothing here."""
