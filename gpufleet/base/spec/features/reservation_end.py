"""Reservations that end (issue 51, docs/upgrades.md): `nodePools[*].reservation.endDate` against the plan's date.

A reservation ends on a day the cloud fixes: an EC2 Capacity Block's instances are terminated as it ends ("Forty
minutes before your Capacity Block reservation ends ... any instances running in the reservation will begin to
terminate in 10 minutes", EC2 User Guide, capacity-blocks-monitor.html); an expired On-Demand Capacity Reservation
"is released and you can no longer launch instances into it" (EC2 API CreateCapacityReservation EndDate); a GCE
reservation past its end no longer holds capacity. A pool on a reservation that has ended can launch nothing there
(targeted reservations by id or name) and is refused; one that ends within RESERVATION_END_WARNING_DAYS of the plan's
day (GPUFLEET_TODAY in tests, else today UTC) is a warning, early enough to extend the block or move the pool.

Capacity of a platform's own kinds that ends on a recorded day (KeyTraits.capacity_ends: GKE DWS runs, whose nodes
live at most their maximum run duration) is judged the same way, with its own warning lead: warned from
`warning_days` before its last day, refused once that day has passed.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Optional

from gpufleet.base import platforms
from gpufleet.base.spec.checks.catalog_checks import plan_day
from gpufleet.base.spec.errors import Problem

NS = "gpufleet"
RESERVATION_END_WARNING_DAYS = 14
"""Two weeks: a Capacity Block extension or a new reservation can be arranged in that time, and a weekly plan in CI
cannot miss the window."""


def _ends(spec: Any) -> list[tuple[int, Any, dt.date]]:
    out = []
    for i, pool in enumerate(spec.node_pools):
        r = pool.reservation
        if pool.capacity == "reserved" and r is not None and r.end_date:
            out.append((i, pool, dt.date.fromisoformat(r.end_date)))
    return out


def _platform_ends(spec: Any) -> list:
    return platforms.of(spec).keys.capacity_ends(spec)


def check(stack: str, spec: Any, config: Optional[dict] = None, today: Optional[dt.date] = None) -> list[Problem]:
    """A pool on a reservation that has ended (its endDate is the plan's day or before) is refused, and one whose
    platform capacity has ended (the plan's day after its last day)."""
    day = plan_day(today)
    return [
        Problem(stack, f"{NS}:nodePools[{e.pool}].{e.key}",
                f"pool '{spec.node_pools[e.pool].name}': {e.what} were gone by the end of {e.last_day.isoformat()} (plan "
                f"date {day.isoformat()}): {e.then}; record the current request's day, or remove {e.key}", e.value)
        for e in _platform_ends(spec) if e.last_day < day
    ] + [
        Problem(stack, f"{NS}:nodePools[{i}].reservation.endDate",
                f"pool '{pool.name}' is on a {pool.reservation.type} reservation that ended on {end.isoformat()} (plan "
                f"date {day.isoformat()}): its nodes cannot launch into it; move the pool to a new reservation or to "
                "on-demand or spot capacity", end.isoformat())
        for i, pool, end in _ends(spec) if end <= day
    ]


def warnings(stack: str, spec: Any, today: Optional[dt.date] = None) -> list[Problem]:
    """A pool whose reservation ends within RESERVATION_END_WARNING_DAYS of the plan's day."""
    day = plan_day(today)
    return [
        Problem(stack, f"{NS}:nodePools[{i}].reservation.endDate",
                f"pool '{pool.name}': its {pool.reservation.type} reservation ends on {end.isoformat()}, in "
                f"{(end - day).days} day{'s' if (end - day).days != 1 else ''}"
                + (": EC2 terminates the block's instances as it ends" if pool.reservation.type == "capacity-block" else
                   ": after that no node launches into it")
                + "; extend it or move the pool before then", end.isoformat())
        for i, pool, end in _ends(spec) if day < end <= day + dt.timedelta(days=RESERVATION_END_WARNING_DAYS)
    ] + [
        Problem(stack, f"{NS}:nodePools[{e.pool}].{e.key}",
                f"pool '{spec.node_pools[e.pool].name}': {e.what} end by the end of {e.last_day.isoformat()}, "
                + ("today" if e.last_day == day else f"in {(e.last_day - day).days} day{'s' if (e.last_day - day).days != 1 else ''}")
                + f": {e.then}; checkpoint the jobs on them before then", e.value)
        for e in _platform_ends(spec) if day <= e.last_day <= day + dt.timedelta(days=e.warning_days)
    ]
