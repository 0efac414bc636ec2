"""The shape of a plan JSON as `gpufleet diff` reads it (`gpufleet plan --format json`, DESIGN.md §5).

A plan file may come from anywhere (a pull request's artifact, a file edited by hand): before any part of the review
reads a value, every key it reads is checked for its type here, so a string where a price belongs or a list where a
pool name belongs is one line naming the file, the key and what was expected (exit 2), never a traceback in the
middle of rendering. Keys the review does not read, and keys a newer gpufleet adds, are allowed and left alone.
"""

from typing import Any, Optional

import pydantic
from pydantic import BaseModel, ConfigDict, StrictBool, StrictFloat, StrictStr

# A JSON number, int or float (StrictFloat takes both, and refuses true/false and numeric strings).
Number = StrictFloat


class _Part(BaseModel):
    model_config = ConfigDict(extra="allow")


class Options(_Part):
    protect: Optional[StrictBool] = None


class Resource(_Part):
    urn: StrictStr
    type: StrictStr
    name: Optional[StrictStr] = None
    parent: Optional[StrictStr] = None
    inputs: Optional[dict[str, Any]] = None
    options: Optional[Options] = None
    secretDigests: Optional[dict[StrictStr, dict[StrictStr, StrictStr]]] = None


class Capacity(_Part):
    pool: StrictStr
    gpu: Optional[StrictStr] = None
    capacityType: Optional[StrictStr] = None
    capacitySource: Optional[StrictStr] = None
    sharing: Optional[StrictStr] = None
    gpusPerNode: Optional[Number] = None
    minNodes: Optional[Number] = None
    maxNodes: Optional[Number] = None
    minGpus: Optional[Number] = None
    maxGpus: Optional[Number] = None
    reservedNodes: Optional[Number] = None
    pricePerNodeHour: Optional[Number] = None
    advertisedPerNode: Optional[dict[StrictStr, Number]] = None


class CostItem(_Part):
    key: StrictStr
    kind: Optional[StrictStr] = None
    name: Optional[StrictStr] = None
    source: Optional[StrictStr] = None
    count: Optional[Number] = None
    countMin: Optional[Number] = None
    unitHourly: Optional[Number] = None
    hourlyMin: Optional[Number] = None
    hourlyMax: Optional[Number] = None
    unpriced: Optional[StrictBool] = None
    team: Optional[StrictStr] = None


class TeamCost(_Part):
    team: StrictStr
    pool: StrictStr
    resource: Optional[StrictStr] = None
    nominalQuota: Optional[Number] = None
    maxWithBorrowing: Optional[Number] = None
    unitHourly: Optional[Number] = None
    hourlyNominal: Optional[Number] = None
    hourlyMax: Optional[Number] = None


class Cost(_Part):
    currency: Optional[StrictStr] = None
    atLeast: Optional[StrictBool] = None
    hourlyMin: Optional[Number] = None
    hourlyMax: Optional[Number] = None
    monthlyMin: Optional[Number] = None
    monthlyMax: Optional[Number] = None
    hoursPerMonth: Optional[Number] = None
    items: list[CostItem] = []
    notes: list[StrictStr] = []
    unpricedPools: list[StrictStr] = []
    unpriced: list[StrictStr] = []
    teams: list[TeamCost] = []


class Violation(_Part):
    policy: StrictStr
    urn: StrictStr
    message: StrictStr
    level: Optional[StrictStr] = None


class Warning_(_Part):
    message: StrictStr
    path: Optional[StrictStr] = None


class StackFileRecord(_Part):
    """What the plan records of its stack file outside `gpufleet:` (StackFile.review_record)."""
    config: dict[StrictStr, Any] = {}
    secure: dict[StrictStr, StrictStr] = {}
    settings: dict[StrictStr, StrictStr] = {}


class Plan(_Part):
    stack: StrictStr
    catalogDate: Optional[StrictStr] = None
    resources: list[Resource]
    capacity: list[Capacity] = []
    cost: Optional[Cost] = None
    violations: list[Violation] = []
    warnings: list[Warning_] = []
    outputs: Optional[dict[str, Any]] = None
    stackFile: Optional[StackFileRecord] = None


_PLAN = pydantic.TypeAdapter(Plan)
_SHOWN = 3  # problems listed before "and N more"


def problems(doc: Any) -> list[str]:
    """What is wrong with a plan document's shape, each as `key.path: what was expected (got ...)`; [] when fine."""
    try:
        _PLAN.validate_python(doc)
    except pydantic.ValidationError as exc:
        return [_describe(err) for err in exc.errors()]
    return []


def _describe(err: dict) -> str:
    path = ""
    for part in err["loc"]:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    expected = {
        "missing": "a required key is missing",
        "string_type": "expected a string", "int_type": "expected a number", "float_type": "expected a number",
        "bool_type": "expected true or false", "list_type": "expected a list", "dict_type": "expected a map",
        "model_type": "expected a map", "model_attributes_type": "expected a map",
    }.get(err["type"], err["msg"])
    got = "" if err["type"] == "missing" else f" (got {_short(err.get('input'))})"
    return f"{path or 'the document'}: {expected}{got}"


def _short(value: Any) -> str:
    text = repr(value) if not isinstance(value, (dict, list)) else type(value).__name__
    return text if len(text) <= 40 else text[:40] + "..."


def summary(doc: Any) -> Optional[str]:
    """One line for the first problems of a plan document, or None when its shape is fine."""
    found = problems(doc)
    if not found:
        return None
    more = f"; and {len(found) - _SHOWN} more" if len(found) > _SHOWN else ""
    return "; ".join(found[:_SHOWN]) + more


__all__ = ["problems", "summary"]
