"""Cron schedules as k3s reads them: parsed field by field, not counted.

k3s schedules etcd snapshots with `cron.New()` of github.com/robfig/cron/v3 (k3s pkg/etcd/etcd.go, NewETCD;
`e.cron.AddFunc(e.config.EtcdSnapshotCron, ...)`), whose default parser is the standard one: five fields (minute,
hour, day of month, month, day of week) or a descriptor (robfig/cron v3 parser.go, `standardParser =
NewParser(Minute | Hour | Dom | Month | Dow | Descriptor)`). A field is a comma-separated list of `*` or `?`, a
number, a range `a-b`, each optionally followed by `/step`; months and weekdays also by their three-letter English
names, in any case (parser.go `months`, `days`; bounds in `bounds`). Descriptors: @yearly, @annually, @monthly,
@weekly, @daily, @midnight, @hourly and `@every <duration>` (a Go duration, time.ParseDuration). A schedule robfig
would refuse fails `pulumi up` only when k3s starts, on the host; gpufleet refuses it in the stack file instead.
`TZ=`/`CRON_TZ=` prefixes are not accepted: snapshots run in the servers' local time.
"""

from __future__ import annotations

import re

# (name, low, high, names) per field, robfig/cron v3 spec.go `seconds ... dow` bounds.
_MONTHS = {m: i for i, m in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1)}
_DAYS = {d: i for i, d in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))}
FIELDS = (
    ("minute", 0, 59, {}),
    ("hour", 0, 23, {}),
    ("day of month", 1, 31, {}),
    ("month", 1, 12, _MONTHS),
    ("day of week", 0, 6, _DAYS),
)
DESCRIPTORS = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")
# A Go duration (time.ParseDuration): one or more decimal numbers with a unit, e.g. 1h30m; positive.
_DURATION = re.compile(r"(?:\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h))+")
_NUMBER = re.compile(r"\d{1,2}")


def _value(text: str, field: tuple) -> int:
    name, low, high, names = field
    if text.lower() in names:
        return names[text.lower()]
    if not _NUMBER.fullmatch(text):
        allowed = f"{low}-{high}" + (f" or a name ({', '.join(n.upper() for n in names)})" if names else "")
        raise ValueError(f"{name}: '{text}' is not a number {allowed}")
    value = int(text)
    if not low <= value <= high:
        raise ValueError(f"{name}: {value} is outside {low}-{high}")
    return value


def _field(text: str, field: tuple) -> None:
    name, low, high, _ = field
    for part in text.split(","):
        span, slash, step = part.partition("/")
        if slash:
            if not step.isdigit() or int(step) == 0:
                raise ValueError(f"{name}: the step in '{part}' must be a positive number")
        if span in ("*", "?"):
            continue
        first, dash, last = span.partition("-")
        start = _value(first, field)
        if dash:
            end = _value(last, field)
            if end < start:
                raise ValueError(f"{name}: the range '{span}' runs backwards")


def check_cron(value: str) -> str:
    """A schedule robfig/cron's standard parser accepts (as k3s's etcd-snapshot-schedule-cron), else ValueError
    saying which field is wrong."""
    if value.startswith("@"):
        if value in DESCRIPTORS:
            return value
        word, _, duration = value.partition(" ")
        if word == "@every" and _DURATION.fullmatch(duration) and any(c in "123456789" for c in duration):
            return value
        raise ValueError(f"'{value}' is not a cron descriptor ({', '.join(DESCRIPTORS)}, or '@every <duration>' "
                         "such as '@every 6h')")
    fields = value.split()  # robfig splits with strings.Fields
    if len(fields) != len(FIELDS):
        raise ValueError(f"'{value}' is not a 5-field cron spec (minute hour day month weekday), "
                         "e.g. '0 */6 * * *'")
    for text, field in zip(fields, FIELDS):
        try:
            _field(text, field)
        except ValueError as exc:
            raise ValueError(f"'{value}': {exc}") from None
    return value


__all__ = ["check_cron"]
