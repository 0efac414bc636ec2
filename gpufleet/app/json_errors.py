"""`--format json`: every outcome is JSON on stdout, errors included, with the exit code unchanged.

A command that fails (an invalid stack, a file it cannot read, a refused flag) says why in a line on stderr and writes
nothing on stdout; a script reading stdout as JSON then got nothing to parse. Under `--format json` the command runs
as usual, its stderr still goes to stderr, and when it exits non-zero without writing anything on stdout, stdout gets

    {"error": {"exitCode": 2, "messages": ["invalid gpufleet config for stack 'dev': ..."]}}

(the messages are its stderr lines, without the `gpufleet: ` prefix). A command that wrote its JSON (a plan with a
mandatory violation, exit 1) keeps it: that document is the outcome.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from typing import Callable

EXIT_INVALID = 2
PREFIX = "gpufleet: "


def wants_json(argv: list[str]) -> bool:
    """The command line asks for JSON (`--format json` or `--format=json`), read before argparse accepted it."""
    return any(a == "--format=json" or (a == "--format" and i + 1 < len(argv) and argv[i + 1] == "json")
               for i, a in enumerate(argv))


def document(code: int, messages: list[str]) -> str:
    lines = [m[len(PREFIX):] if m.startswith(PREFIX) else m for m in messages if m.strip()]
    return json.dumps({"error": {"exitCode": code, "messages": lines}}, indent=2) + "\n"


def usage_error(message: str) -> int:
    """A refused command line under --format json: the message on stderr, the JSON error on stdout, exit 2."""
    sys.stderr.write(f"gpufleet: error: {message}\n")
    sys.stdout.write(document(EXIT_INVALID, [message]))
    return EXIT_INVALID


class _Tee(io.TextIOBase):
    """Writes through to `target`, keeping a copy."""

    def __init__(self, target):
        self.target, self.copy = target, io.StringIO()

    def write(self, text: str) -> int:
        self.copy.write(text)
        return self.target.write(text)

    def flush(self) -> None:
        self.target.flush()


def run_as_json(func: Callable, args) -> int:
    """Run the command; on a non-zero exit with nothing on stdout, its stderr lines as the JSON error document."""
    out, err = _Tee(sys.stdout), _Tee(sys.stderr)
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = func(args)
    if code != 0 and not out.copy.getvalue().strip():
        sys.stdout.write(document(code, err.copy.getvalue().splitlines()))
    return code
