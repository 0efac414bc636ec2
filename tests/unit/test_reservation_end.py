"""Reservations that end (issue 51, docs/upgrades.md): a reservation's endDate drives a plan warning two weeks before
and a refusal from that day; the plan's day is GPUFLEET_TODAY (tests/conftest.py pins 2026-12-04)."""

from __future__ import annotations

import datetime as dt

import pytest

from gpufleet.base.spec.features import reservation_end
from tests.helpers import example_config, load_config, spec_problems

STACK = "karpenter-eks"
AT = "gpufleet:nodePools[1].reservation.endDate"


def _ending(day: str) -> dict:
    config = example_config(STACK)
    assert config["gpufleet:nodePools"][1]["name"] == "h100-block"
    config["gpufleet:nodePools"][1]["reservation"]["endDate"] = day
    return config


def _warnings(day: str, today: str = "2026-12-04") -> list[str]:
    spec = load_config(_ending(day), STACK)
    return [str(w) for w in reservation_end.warnings(STACK, spec, dt.date.fromisoformat(today))]


def test_a_capacity_block_ending_within_two_weeks_is_a_warning():
    assert _warnings("2026-12-18") == [
        f"stack '{STACK}': {AT}: pool 'h100-block': its capacity-block reservation ends on 2026-12-18, in 14 days: EC2 "
        "terminates the block's instances as it ends; extend it or move the pool before then (got '2026-12-18')"]
    assert _warnings("2026-12-19") == []  # 15 days: not yet
    assert "ends on 2026-12-05, in 1 day:" in _warnings("2026-12-05")[0]


def test_a_pool_on_a_reservation_that_has_ended_is_refused():
    assert spec_problems(_ending("2026-12-04"), stack=STACK) == [
        f"stack '{STACK}': {AT}: pool 'h100-block' is on a capacity-block reservation that ended on 2026-12-04 (plan date "
        "2026-12-04): its nodes cannot launch into it; move the pool to a new reservation or to on-demand or spot "
        "capacity (got '2026-12-04')"]
    assert load_config(_ending("2026-12-05"), STACK).node_pools[1].reservation.end_date == "2026-12-05"


@pytest.mark.parametrize("day", ["2026-13-01", "next week"])
def test_an_end_date_that_is_not_a_day_is_refused(day):
    [problem] = spec_problems(_ending(day), stack=STACK)
    assert problem.startswith(f"stack '{STACK}': gpufleet:nodePools[1].reservation")


def test_the_plan_carries_the_warning_and_the_end_date():
    from tests.helpers import plan_config

    p = plan_config(_ending("2026-12-10"), stack=STACK, policies=False)
    assert [w.message for w in p.warnings if w.path == AT] == [
        "pool 'h100-block': its capacity-block reservation ends on 2026-12-10, in 6 days: EC2 terminates the block's "
        "instances as it ends; extend it or move the pool before then"]
    [block] = [c for c in p.capacity if c.pool == "h100-block"]
    assert block.reservation["endDate"] == "2026-12-10"  # in the plan JSON's capacity, for the review
