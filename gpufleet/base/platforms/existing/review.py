"""existing: review traits (gpufleet/base/platforms/contract/review.py says what each one means)."""

from __future__ import annotations

from gpufleet.base.platforms.contract.review import ReviewTraits


class ExistingReview(ReviewTraits):
    """An existing cluster is not a resource of the program: only the shared Kubernetes and Helm rows apply."""
