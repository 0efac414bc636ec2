"""The review's rows per resource type come from every registered platform (ReviewTraits) plus the shared Kubernetes
and Helm rows: a platform only tests know plugs in with no shared edit, and one that declares nothing adds no rows."""

from __future__ import annotations

from gpufleet.app.review import deltas, replacement
from gpufleet.base import platforms
from gpufleet.base.platforms.contract import PlatformTraits, ProgramTraits, ReviewTraits
from gpufleet.base.platforms.contract.review import ReplaceTable

TOY_POOL = "toycloud:index/gpuPool:GpuPool"


class ToyReview(ReviewTraits):
    replace_tables = {TOY_POOL: ReplaceTable(paths=("zone",), source="toycloud docs", checked=False)}
    disruptive_kinds = {TOY_POOL: "node pool"}
    stateful = {"toycloud:index/disk:Disk": "the disk's data"}

    def versions(self, type_, inputs):
        return [("toycloud image", inputs.get("image"))] if type_ == TOY_POOL else []


def test_a_test_only_platform_s_rows_are_asked():
    platforms.register(PlatformTraits("toyfleet", ProgramTraits(components="toyfleet.platform", extra="toyfleet"),
                                      review=ToyReview()))
    try:
        assert replacement.forcing_rule(TOY_POOL, "zone") == ("zone", "toycloud docs", True)
        assert replacement.disruptive_kind(TOY_POOL) == "node pool"
        assert replacement.data_held("toycloud:index/disk:Disk", {}) == "the disk's data"
        assert deltas.versions_of([{"type": TOY_POOL, "inputs": {"image": "v2"}}]) == {"toycloud image": {"v2"}}
    finally:
        platforms.unregister("toyfleet")
    assert replacement.forcing_rule(TOY_POOL, "zone") is None and replacement.disruptive_kind(TOY_POOL) is None


def test_a_platform_that_declares_nothing_adds_no_rows():
    review = platforms.get("existing").review
    assert (dict(review.replace_tables), dict(review.disruptive_kinds), dict(review.stateful)) == ({}, {}, {})
    assert review.versions("aws:eks/cluster:Cluster", {"version": "1.33"}) == []


def test_no_two_platforms_declare_the_same_type():
    for area in ("replace_tables", "disruptive_kinds", "stateful"):
        seen: dict[str, str] = {}
        for name in platforms.names():
            for token in getattr(platforms.get(name).review, area):
                assert token not in seen, f"{token} in {area} of both {seen[token]} and {name}"
                assert token not in replacement.SHARED_TABLES, token
                seen[token] = name
