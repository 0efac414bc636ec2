"""Progress lines for long commands (`plan --all`, `charts fetch`), on stderr and only when stderr is a terminal:
a pipe, a CI log or a redirected file gets the command's output alone, as before."""

from __future__ import annotations

import sys
from typing import Callable, Optional

Reporter = Callable[[int, int, str], None]


def reporter(verb: str, stream=None) -> Optional[Reporter]:
    """`report(done, total, name)` printing `[done/total] <name> <verb>` on a terminal; None elsewhere."""
    stream = stream or sys.stderr
    if not (hasattr(stream, "isatty") and stream.isatty()):
        return None

    def report(done: int, total: int, name: str) -> None:
        stream.write(f"[{done}/{total}] {name} {verb}\n")
        stream.flush()

    return report
