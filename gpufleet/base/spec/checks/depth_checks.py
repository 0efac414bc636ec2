"""Config values nested deeper than any stack needs, and more node pools than any cloud allows a cluster: refused
before anything else reads them.

`pulumi up` hands each config value to the program as JSON (the Pulumi CLI parsed the stack file itself), and
the checks that follow (pydantic, the string checks) walk values level by level: a value nested a few thousand
levels deep would end in a RecursionError, a traceback instead of the listed problems. The limit is
gpufleet.base.limits.CONFIG_VALUE_MAX_DEPTH, the stack-file limit less the document and `config:` around a value
(`gpufleet plan` refuses such a file while reading it: gpufleet.app.input_files).
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Optional

from gpufleet.base import limits
from gpufleet.base.spec.errors import Problem, SpecError


def refuse_deep(stack: str, config: dict[str, Any], namespace: str, skipped: Iterable[str] = ()) -> None:
    """Raise SpecError naming every `namespace:` key whose value nests deeper than the limit (`skipped` keys,
    the secrets, are never decoded)."""
    skipped = set(skipped)
    problems = []
    for full_key, value in config.items():
        space, _, key = full_key.partition(":")
        if space != namespace or key in skipped:
            continue
        if isinstance(value, str) and value[:1] in "[{":
            try:
                value = json.loads(value)
            except RecursionError:  # json's C decoder counts its levels against the recursion limit, and unwinds
                pass  # far deeper than the limit: reported below as such
            except ValueError:
                continue  # not JSON: a string, judged by the spec
            else:
                if limits.depth(value) <= limits.CONFIG_VALUE_MAX_DEPTH:
                    continue
            problems.append(_problem(stack, full_key))
        elif limits.depth(value) > limits.CONFIG_VALUE_MAX_DEPTH:
            problems.append(_problem(stack, full_key))
    if problems:
        raise SpecError(stack, problems)


def _problem(stack: str, key: str) -> Problem:
    return Problem(stack, key, f"maps and lists nest deeper than allowed (at most {limits.CONFIG_VALUE_MAX_DEPTH} levels "
                               f"in a config value, {limits.STACK_FILE_MAX_DEPTH} in the stack file)")


def too_many_pools(stack: str, data: dict[str, Any]) -> Optional[Problem]:
    """The problem of a `gpufleet:nodePools` listing more pools than limits.NODE_POOLS_MAX, judged before pydantic and
    the checks walk them (each pool costs the plan time and memory: the limit keeps a plan bounded, issue 48)."""
    pools = data.get("nodePools")
    if isinstance(pools, list) and len(pools) > limits.NODE_POOLS_MAX:
        return Problem(stack, "gpufleet:nodePools",
                       f"{len(pools)} pools; at most {limits.NODE_POOLS_MAX} (AKS allows 100 node pools per cluster, EKS "
                       "30 managed node groups by default: gpufleet/base/limits.py NODE_POOLS_MAX); split the fleet "
                       "into several stacks")
    return None
