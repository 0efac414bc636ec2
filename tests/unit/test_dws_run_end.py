"""DWS runs that end (issue 51, docs/upgrades.md): a flex-start or queued pool's `gke.runStartDate` plus its maximum run
duration (7 days unless `maxRunDurationSeconds` is shorter) is the last day its nodes live; the plan warns two days
before and refuses the record once that day has passed, judged on GPUFLEET_TODAY."""

from __future__ import annotations

import datetime as dt

from gpufleet.base.spec.features import reservation_end
from tests.helpers import example_config, load_config, spec_problems

STACK = "dws-gke"
FLEX = "gpufleet:nodePools[0].gke.runStartDate"  # h100-flex: flex-start, maxRunDurationSeconds 86400
QUEUED = "gpufleet:nodePools[1].gke.runStartDate"  # a3mega-queued: queued, the 7-day default
DELETES = "GKE deletes DWS nodes at their maximum run duration, whatever runs on them"


def _started(flex: str | None = None, queued: str | None = None) -> dict:
    config = example_config(STACK)
    assert [p["name"] for p in config["gpufleet:nodePools"][:2]] == ["h100-flex", "a3mega-queued"]
    for i, day in ((0, flex), (1, queued)):
        if day:
            config["gpufleet:nodePools"][i]["gke"]["runStartDate"] = day
    return config


def _warnings(config: dict, today: str) -> list[str]:
    spec = load_config(config, STACK)
    return [str(w) for w in reservation_end.warnings(STACK, spec, dt.date.fromisoformat(today))]


def test_a_queued_run_warns_two_days_before_its_seventh_day_ends():
    config = _started(queued="2026-12-01")
    assert _warnings(config, "2026-12-05") == []  # last day 2026-12-08: three days left
    assert _warnings(config, "2026-12-06") == [
        f"stack '{STACK}': {QUEUED}: pool 'a3mega-queued': its queued nodes (started 2026-12-01, each for at most 7 "
        f"days) end by the end of 2026-12-08, in 2 days: {DELETES}; checkpoint the jobs on them before then "
        "(got '2026-12-01')"]
    assert ", today: " in _warnings(config, "2026-12-08")[0]


def test_a_shorter_max_run_duration_moves_the_end():
    # One day, rounded up: a node started late on the 3rd lives into the 4th.
    assert _warnings(_started(flex="2026-12-03"), "2026-12-04") == [
        f"stack '{STACK}': {FLEX}: pool 'h100-flex': its flex-start nodes (started 2026-12-03, each for at most 1 day) "
        f"end by the end of 2026-12-04, today: {DELETES}; checkpoint the jobs on them before then (got '2026-12-03')"]


def test_a_run_that_has_ended_is_refused_on_gpufleet_today(monkeypatch):
    monkeypatch.setenv("GPUFLEET_TODAY", "2026-12-09")
    assert spec_problems(_started(queued="2026-12-01"), stack=STACK) == [
        f"stack '{STACK}': {QUEUED}: pool 'a3mega-queued': its queued nodes (started 2026-12-01, each for at most 7 "
        f"days) were gone by the end of 2026-12-08 (plan date 2026-12-09): {DELETES}; record the current request's "
        "day, or remove gke.runStartDate (got '2026-12-01')"]
    monkeypatch.setenv("GPUFLEET_TODAY", "2026-12-08")
    assert load_config(_started(queued="2026-12-01"), STACK).node_pools[1].gke.run_start_date == "2026-12-01"


def test_run_start_only_on_dws_pools():
    config = _started()
    assert config["gpufleet:nodePools"][2]["capacity"] == "reserved"
    config["gpufleet:nodePools"][2]["gke"]["runStartDate"] = "2026-12-01"
    assert spec_problems(config, stack=STACK) == [
        f"stack '{STACK}': gpufleet:nodePools[2].gke.runStartDate: only used with capacity flex-start or queued (this "
        "pool is reserved; a reservation's end is reservation.endDate) (got '2026-12-01')"]
