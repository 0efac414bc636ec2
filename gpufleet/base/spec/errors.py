"""Spec problems: each names the stack, the key path, the bad value and what is allowed.

A problem's text is printed to a terminal and to CI logs, and it echoes what a stack file holds (`aws:region`, a key,
a value), so `str(problem)` is one line of printable text: every control, bidirectional and invisible character of
the stack name, the path and the message (gpufleet.base.spec.text.CONTROL) is written as its Python escape (`\\n`,
`\\x1b`, `\\u202e`). No terminal escape sequence reaches the terminal, and no value starts a line of its own, so
none reads as a CI workflow command (GitHub Actions' `::error::`, `::set-output`, which the runner acts on only at
the start of a line: docs.github.com, "Workflow commands for GitHub Actions"). The value itself is shown with repr(),
which escapes the same characters. The runner also acts on a line whose text, after leading whitespace, starts with
`::` (actions/runner src/Runner.Common/ActionCommand.cs `TryParseV2`: `message.TrimStart()` then
`StartsWith("::")`), and on the legacy `##[command]` anywhere in a line (`TryParse`: `message.IndexOf("##[")`), so
`printable` also writes such text inert (`\\::`, `#\\#[`): see `inert`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from gpufleet.base.spec.text import CONTROL

_MISSING = object()


# What makes a CI log line a GitHub Actions workflow command (see the module docstring).
_COMMAND_START = re.compile(r"^(\s*)::")
_LEGACY_COMMAND = "##["


def inert(line: str) -> str:
    """A line a CI runner does not act on: a `::` that starts it after whitespace becomes `\\::`, and every `##[`
    becomes `#\\#[`. Everything else is kept as it is."""
    return _COMMAND_START.sub(r"\1\\::", line, count=1).replace(_LEGACY_COMMAND, "#\\#[")


def escaped(text: object) -> str:
    """`text` with every character of CONTROL written as its Python escape: one line, no terminal escapes. For a part
    of a line; the whole line then goes through `inert`."""
    return CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), str(text))


def printable(text: object) -> str:
    """`text` as a line of its own: `escaped`, and no workflow command a CI runner would act on (`inert`)."""
    return inert(escaped(text))


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
        got = "" if self.value is _MISSING else f" (got {escaped(repr(self.value))})"
        # Each part escaped, the line made inert once: a message may start with `::` (an IPv6 block) mid-line.
        return inert(f"stack '{escaped(self.stack)}': {escaped(self.path)}: {escaped(self.message)}{got}")


class SpecError(Exception):
    """A stack config with one or more problems; str() lists them all, one per line."""

    def __init__(self, stack: str, problems: list[Problem]):
        self.stack = stack
        self.problems = problems
        lines = [inert(f"invalid gpufleet config for stack '{escaped(stack)}' ({len(problems)} problem{'s' if len(problems) != 1 else ''}):")]
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
