"""eks: review traits (gpufleet/base/platforms/contract/review.py says what each one means)."""

from __future__ import annotations

from gpufleet.base.platforms.contract.review import ReviewTraits


class EksReview(ReviewTraits):
    pass
