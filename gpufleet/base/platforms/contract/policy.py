"""Which of a platform's cloud resources are GPU pools and how the policy pack reads them (policies/)."""

from __future__ import annotations


class PolicyTraits:
    """Defaults: a platform that declares nothing here."""
