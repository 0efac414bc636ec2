"""`--changed-since REF`: which stacks a change touches, from the files git says changed.

The files: `git diff --name-only --no-renames` between the merge base of REF and HEAD and the working tree (a
renamed file counts under its old and its new name), limited to the project folder. Each file touches stacks by
one rule, the first that matches (docs/fleet.md):

1. a stack file (`<stackConfigDir>/Pulumi.<name>.yaml`): that stack;
2. a platform plug-in, `components/<dir>/...` where `components/<dir>/platform.py` exists: the stacks whose
   `gpufleet:cluster.platform` is `<dir>` (only the chosen platform's package is imported by the program, DESIGN.md §1);
3. a platform's catalog facts, `gpufleet/base/catalog/<prefix>*` for a prefix of its `KeyTraits.catalog_files`: the
   stacks of that platform (EKS reads the AWS catalog, GKE the GCP one, AMD Instinct pools exist on k3s only);
4. what `pulumi up` never runs (docs, tests, benchmarks, examples, workflows, the component package, the CLI's own
   plan/review/verify/fleet code: every module of `gpufleet/app/` but PROGRAM_APP, the only ones the program imports
   (`program.py` judges its stack file with plan/stackfile.py, issue 48)): no stack;
5. anything else (the program, shared components, the rest of the catalog, the policy pack, which judges every
   stack, dependencies): every stack.

Then every selected stack's dependents (stacks whose `gpufleet:dependsOn` names it) are added: they read its outputs.
Unknown files fall under rule 5 on purpose: a stack updated for nothing costs a no-op `up`, a stack missed costs drift.
"""

from __future__ import annotations

import subprocess
from pathlib import Path, PurePosixPath

from gpufleet.app.fleet.stacks import FleetStack, SelectionError
from gpufleet.base import platforms

CATALOG = "gpufleet/base/catalog/"
NO_STACK = ("docs/", "tests/", "bench/", "examples/", ".github/", "package/", ".ci/")
NO_STACK_FILES = {"LICENSE", "Makefile", ".gitignore"}
PROGRAM_APP = {"gpufleet/app/__init__.py", "gpufleet/app/program.py", "gpufleet/app/plan/__init__.py",
               "gpufleet/app/plan/stackfile.py", "gpufleet/app/input_files.py"}


def _git(project: Path, *args: str) -> str:
    proc = subprocess.run(["git", "-C", str(project), *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip() or f"git {' '.join(args)} exited {proc.returncode}")
    return proc.stdout


def changed_files(project: Path, ref: str) -> list[str]:
    """Paths relative to the project folder that differ between merge-base(REF, HEAD) and the working tree."""
    if not ref or ref.startswith("-"):
        raise SelectionError(f"--changed-since {ref!r}: not allowed (allowed: a git revision, e.g. origin/main)")
    try:
        base = _git(project, "merge-base", ref, "HEAD").strip()
        out = _git(project, "diff", "--name-only", "--no-renames", "--relative", "-z", base, "--", ".")
    except (RuntimeError, OSError) as exc:
        raise SelectionError(f"--changed-since {ref!r}: git cannot compare {project} with it ({exc}); allowed: a "
                             "revision of the project's git repository (fetch it first in a shallow clone)") from None
    return sorted(p for p in out.split("\0") if p)


def _rule(path: str, project: Path, stack_folder: str) -> tuple[str, str]:
    """('stack', name) | ('platform', name) | ('none', '') | ('all', '') for one changed file."""
    p = PurePosixPath(path)
    folder = str(p.parent) if str(p.parent) != "." else ""
    if folder == stack_folder and p.name.startswith("Pulumi.") and p.name.endswith(".yaml") and p.name != "Pulumi.yaml":
        return "stack", p.name[len("Pulumi."):-len(".yaml")]
    parts = p.parts
    if len(parts) > 2 and parts[0] == "components" and (project / "components" / parts[1] / "platform.py").is_file():
        return "platform", parts[1]
    if path.startswith(CATALOG) and len(parts) == 4:
        for platform in platforms.names():
            if p.name.startswith(platforms.get(platform).keys.catalog_files):
                return "platform", platform
    if path.startswith(NO_STACK) or path in NO_STACK_FILES or p.suffix == ".md":
        return "none", ""
    if path.startswith("gpufleet/app/") and path not in PROGRAM_APP:
        return "none", ""
    return "all", ""


def affected(stacks: dict[str, FleetStack], files: list[str], project: Path, stack_folder: str) -> dict[str, list[str]]:
    """Stack -> why it is selected (the files, or the stack it depends on), for the stacks the files touch."""
    why: dict[str, list[str]] = {}
    for path in files:
        kind, name = _rule(path, project, stack_folder)
        if kind == "stack":
            hit = [name] if name in stacks else []  # a deleted stack file: nothing left to run
        elif kind == "platform":
            hit = [s for s, st in stacks.items() if st.platform == name]
        elif kind == "all":
            hit = list(stacks)
        else:
            hit = []
        for s in hit:
            why.setdefault(s, []).append(path)
    queue = sorted(why)
    while queue:  # dependents read the outputs of what changed
        name = queue.pop(0)
        for s, st in sorted(stacks.items()):
            if name in st.depends_on and s not in why:
                why[s] = [f"depends on {name}"]
                queue.append(s)
    return {s: why[s] for s in sorted(why)}
