"""Spec problems: each names the stack, the key path, the bad value and what is allowed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

_MISSING = object()


@dataclass(frozen=True)
class Problem:
    stack: str
    path: str  # e.g. gpufleet:nodePools[1].sharing.profile
    message: str
    value: Any = _MISSING

    @property
    def has_value(self) -> bool:
        """Whether the problem names a value (shown as `(got ...)`): one about a whole block may name none."""
        return self.value is not _MISSING

    def __str__(self) -> str:
        got = "" if self.value is _MISSING else f" (got {self.value!r})"
        return f"stack '{self.stack}': {self.path}: {self.message}{got}"


class SpecError(Exception):
    """A stack config with one or more problems; str() lists them all, one per line."""

    def __init__(self, stack: str, problems: list[Problem]):
        self.stack = stack
        self.problems = problems
        lines = [f"invalid gpufleet config for stack '{stack}' ({len(problems)} problem{'s' if len(problems) != 1 else ''}):"]
        lines += [f"  - {p}" for p in problems]
        super().__init__("\n".join(lines))


def format_path(namespace: str, loc: tuple) -> str:
    """('nodePools', 1, 'sharing') -> 'gpufleet:nodePools[1].sharing'."""
    out = namespace
    for i, part in enumerate(loc):
        if isinstance(part, int):
            out += f"[{part}]"
        elif i == 0:
            out += f":{part}"
        else:
            out += f".{part}"
    return out
