"""Reviewing infrastructure changes: plan diffs and preview reports with capacity, cost, versions and policies."""

from __future__ import annotations

import json

from gpufleet.app.review.diff import ReviewInputError, load_plan
from gpufleet.app.review.summary import Review, marker, review_plans

FORMATS = ("markdown", "text", "json")


def render(review: Review, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(review.to_json(), indent=2, sort_keys=True) + "\n"
    if fmt == "text":
        from gpufleet.app.review.text import render as text

        return text(review)
    from gpufleet.app.review.markdown import render as markdown

    return markdown(review)


__all__ = ["FORMATS", "Review", "ReviewInputError", "load_plan", "marker", "render", "review_plans"]
