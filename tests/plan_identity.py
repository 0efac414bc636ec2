"""Plan every example stack with this checkout and with another revision, and say whether the plans are identical.

    .venv/bin/python -m tests.plan_identity --base REV [--format json --format text] [STACK ...]

A refactor that moves code (issue 30's layout) must not change what any stack plans: this runs `gpufleet plan` on each
stack in stacks/ (and examples/blueprints/) in both trees and compares the outputs byte for byte. The other revision
is checked out into a temporary git worktree and imported from there (its gpufleet/, with its components/ and
policies/ mapped in as pyproject.toml maps them), with this checkout's virtualenv. Exit 0 when every plan is
identical; 1 with the first differing lines of each plan that is not.
"""

from __future__ import annotations

import argparse
import difflib
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Runs one plan in a tree: the tree's own gpufleet first on sys.path, its CLI wherever that tree keeps it.
RUNNER = """
import importlib, sys
sys.path.insert(0, sys.argv[1])
for name in ("gpufleet.app.cli", "gpufleet.cli"):
    try:
        cli = importlib.import_module(name)
        break
    except ModuleNotFoundError:
        continue
sys.exit(cli.main(sys.argv[2:]))
"""


def stage(tree: Path, into: Path) -> Path:
    """A folder holding `gpufleet` as the wheel lays it out: the tree's gpufleet/ with components/ and policies/ in it."""
    package = into / "gpufleet"
    package.mkdir(parents=True)
    for child in (tree / "gpufleet").iterdir():
        (package / child.name).symlink_to(child)
    for mapped in ("components", "policies"):
        (package / mapped).symlink_to(tree / mapped)
    return into


def stacks(tree: Path) -> list[tuple[str, Path]]:
    files = sorted((tree / "stacks").glob("Pulumi.*.yaml")) + sorted((tree / "examples" / "blueprints").glob("Pulumi.*.yaml"))
    return [(f.name[len("Pulumi."):-len(".yaml")], f) for f in files]


def plan(tree: Path, path: Path, stack: str, file: Path, fmt: str) -> tuple[int, str]:
    run = subprocess.run(
        [sys.executable, "-c", RUNNER, str(path), "plan", stack, "--config", str(file), "--format", fmt],
        cwd=tree, capture_output=True, text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    return run.returncode, run.stdout + (f"\n[stderr]\n{run.stderr}" if run.returncode not in (0, 1) else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", required=True, help="the revision to compare with (e.g. the commit before a move)")
    parser.add_argument("--format", action="append", choices=["json", "text", "markdown"], dest="formats")
    parser.add_argument("stacks", nargs="*", help="stack names (default: every stack in stacks/ and examples/blueprints/)")
    args = parser.parse_args(argv)
    formats = args.formats or ["json", "text"]
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(base), args.base], cwd=ROOT, check=True)
        try:
            here, there = stage(ROOT, Path(tmp) / "here"), stage(base, Path(tmp) / "there")
            wanted = [(s, f) for s, f in stacks(ROOT) if not args.stacks or s in args.stacks]
            jobs = [(s, f.relative_to(ROOT), fmt) for s, f in wanted for fmt in formats]
            with ThreadPoolExecutor(2) as pool:
                now = list(pool.map(lambda j: plan(ROOT, here, j[0], ROOT / j[1], j[2]), jobs))
                before = list(pool.map(lambda j: plan(base, there, j[0], base / j[1], j[2]), jobs))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(base)], cwd=ROOT, check=False)
    differ = 0
    for (stack, _, fmt), (rc_now, out_now), (rc_before, out_before) in zip(jobs, now, before):
        same = (rc_now, out_now) == (rc_before, out_before)
        print(f"{'identical' if same else 'DIFFERENT'}  {stack} ({fmt}, exit {rc_now}, {len(out_now.encode())} bytes)")
        if not same:
            differ += 1
            if rc_now != rc_before:
                print(f"    exit {rc_before} at {args.base}, {rc_now} here")
            diff = difflib.unified_diff(out_before.splitlines(), out_now.splitlines(), args.base, "here", lineterm="", n=0)
            for line in list(diff)[:12]:
                print("    " + line[:200])
    print(f"{len(jobs) - differ} identical, {differ} different (against {args.base})")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
