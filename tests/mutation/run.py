"""Mutation testing of the policy rules, the spec and the components that emit what runs on clusters, with cosmic-ray
(`make mutate`; not in CI, not in `make test`).

    .venv/bin/python -m tests.mutation.run [--sample N] [--seed S] [--only MODULE ...] [--keep DIR] [TREE ...]

TREE is the name of a cosmic-ray config beside this file (`<tree>.toml`, which names the modules it mutates and the
smallest set of tests that must kill their mutants): policies (policies/rules and the platforms' pool readers), spec
(gpufleet/base/spec), and the component trees dra, serving, cold_start, mirror, topology; default every tree.

cosmic-ray mutates files in place, so this never runs in your checkout: it checks HEAD out into a temporary git
worktree (commit first: uncommitted changes are not tested) and links that tree's components/ and policies/ into its
gpufleet/ as the wheel lays them out. pytest puts the tree first on sys.path, so `gpufleet.policies.rules...` is the
mutated copy there; without the links the editable install would answer those imports from your checkout, and every
mutant of policies/ would survive. Then `cosmic-ray init`, the sample filter below, `cosmic-ray exec`, and a summary: killed,
survived, incompetent (the mutant does not import) and the kill rate, with a diff of each survivor.

--sample N keeps N mutants per tree, drawn with a fixed seed from every mutation cosmic-ray found (the rest are marked
skipped in the session, as cosmic-ray's own filters do), so two runs of the same tree judge the same mutants. The full
run is thousands of mutants at ~10-40 s each on two cores: docs/testing.md gives the measured figures. --only keeps
the mutants of the modules whose path contains one of the given strings (e.g. stateful_resource_protection).
--recheck SUMMARY runs only the survivors of an earlier run (its --keep folder's summary.json): after adding tests,
the kill rate of the same sample is the earlier kills plus the survivors now killed (tests only added cannot revive
a killed mutant).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
TREES = {p.stem: p for p in sorted(HERE.glob("*.toml"))}
BIN = Path(sys.executable).parent


def _annotations(path: Path) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Where a module's type annotations are. A mutant inside one (`str | None` -> `str / None`) is either never
    evaluated (`from __future__ import annotations`: an equivalent mutant no test can kill) or breaks the import
    (pydantic evaluates field annotations): neither says anything about the tests, so the sample leaves them out."""
    spans = []
    for node in ast.walk(ast.parse(path.read_text())):
        notes = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            notes.append(node.returns)
            a = node.args
            notes += [x.annotation for x in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg] if x is not None]
        elif isinstance(node, ast.AnnAssign):
            notes.append(node.annotation)
        spans += [((n.lineno, n.col_offset), (n.end_lineno, n.end_col_offset)) for n in notes if n is not None]
    return spans


def _in_annotation(mutation, tree: Path, cache: dict) -> bool:
    path = tree / mutation.module_path
    if path not in cache:
        cache[path] = _annotations(path)
    start, end = tuple(mutation.start_pos), tuple(mutation.end_pos)
    return any(a <= start and end <= b for a, b in cache[path])


def _sample(session: Path, tree: Path, n: int | None, seed: int, only: list[str], recheck: set | None = None) -> int:
    """Mark all but the chosen mutants skipped in the session (cosmic-ray's filter API: WorkDB.set_result)."""
    from cosmic_ray.work_db import use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult

    cache: dict = {}
    with use_db(str(session)) as db:
        items = sorted(db.pending_work_items, key=lambda i: i.job_id)
        wanted = [i for i in items if not only or any(o in str(m.module_path) for m in i.mutations for o in only)]
        wanted = [i for i in wanted if not any(_in_annotation(m, tree, cache) for m in i.mutations)]
        if recheck is not None:  # only the survivors of an earlier run (--recheck)
            wanted = [i for i in wanted if any((str(m.module_path), m.operator_name, m.occurrence) in recheck for m in i.mutations)]
            n = None
        # The draw is over (module, operator, occurrence), not job ids (random per session), so it is repeatable.
        wanted.sort(key=lambda i: [(str(m.module_path), m.operator_name, m.occurrence) for m in i.mutations])
        keep = wanted if n is None or n >= len(wanted) else random.Random(seed).sample(wanted, n)
        kept = {i.job_id for i in keep}
        for item in items:
            if item.job_id not in kept:
                db.set_result(item.job_id, WorkResult(output="not in the sample", worker_outcome=WorkerOutcome.SKIPPED))
        return len(items)


def _summary(session: Path) -> dict:
    from cosmic_ray.work_db import use_db
    from cosmic_ray.work_item import TestOutcome, WorkerOutcome

    out = {"killed": 0, "survived": 0, "incompetent": 0, "other": 0, "survivors": [], "modules": {}}
    with use_db(str(session)) as db:
        for item, result in db.completed_work_items:
            if result.worker_outcome == WorkerOutcome.SKIPPED:
                continue
            m = item.mutations[0]
            module = out["modules"].setdefault(str(m.module_path), {"killed": 0, "survived": 0})
            if result.worker_outcome != WorkerOutcome.NORMAL:
                out["other"] += 1
            elif result.test_outcome == TestOutcome.KILLED:
                out["killed"] += 1
                module["killed"] += 1
            elif result.test_outcome == TestOutcome.INCOMPETENT:
                out["incompetent"] += 1
            else:
                out["survived"] += 1
                module["survived"] += 1
                out["survivors"].append({"module": str(m.module_path), "operator": m.operator_name,
                                         "occurrence": m.occurrence, "line": m.start_pos[0], "diff": result.diff})
    judged = out["killed"] + out["survived"]
    out["kill_rate"] = round(out["killed"] / judged, 3) if judged else None
    return out


def _check_imports(tree: Path) -> None:
    """The tests must import the tree's copies (the ones cosmic-ray mutates), not the editable install's."""
    probe = ("import gpufleet.policies.rules, gpufleet.base.spec as s, gpufleet.components.image_mirror as m; "
             "print(gpufleet.policies.rules.__file__, s.__file__, m.__file__)")
    out = subprocess.run([sys.executable, "-c", probe], cwd=tree, capture_output=True, text=True, check=True).stdout.split()
    outside = [f for f in out if not Path(f).resolve().is_relative_to(tree.resolve())]
    if outside:
        raise SystemExit(f"the tests would import {outside}, not the mutated tree {tree}")


def run_tree(tree: str, work: Path, n: int | None, seed: int, only: list[str], recheck: set | None = None) -> dict:
    config = TREES[tree]
    session = work / f"{tree}.sqlite"
    env = {**os.environ, "PYTHONWARNINGS": "ignore",
           "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    subprocess.run([str(BIN / "cosmic-ray"), "init", str(config), str(session)], cwd=work / "tree", env=env, check=True)
    found = _sample(session, work / "tree", n, seed, only, recheck)
    subprocess.run([str(BIN / "cosmic-ray"), "exec", str(config), str(session)], cwd=work / "tree", env=env, check=True)
    return {"tree": tree, "mutations_found": found, **_summary(session)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trees", nargs="*", help=f"{', '.join(TREES)} (default: every tree)")
    parser.add_argument("--sample", type=int, default=None, help="mutants per tree (default: all)")
    parser.add_argument("--seed", type=int, default=33)
    parser.add_argument("--only", action="append", default=[], help="keep mutants of modules whose path contains this")
    parser.add_argument("--keep", type=Path, help="keep the sessions and write summary.json in this folder")
    parser.add_argument("--rev", default="HEAD", help="the revision to mutate (default: HEAD)")
    parser.add_argument("--recheck", type=Path, help="run only the survivors listed in an earlier run's summary.json")
    args = parser.parse_args(argv)
    args.trees = args.trees or list(TREES)
    if unknown := set(args.trees) - set(TREES):
        parser.error(f"unknown tree(s) {sorted(unknown)}: choose from {sorted(TREES)}")
    work = Path(tempfile.mkdtemp(prefix="gpufleet-mutate-"))
    subprocess.run(["git", "worktree", "add", "--detach", "-q", str(work / "tree"), args.rev], cwd=ROOT, check=True)
    try:
        for mapped in ("components", "policies"):
            (work / "tree" / "gpufleet" / mapped).symlink_to(Path("..") / mapped)
        # The upstream reference data sits beside the checkout (tests/helpers.py REFERENCE: ../shared/reference); beside
        # the temporary tree there is none, and every test reading it would skip and kill nothing.
        shared = ROOT.parent / "shared"
        if shared.is_dir() and "GPUFLEET_REFERENCE" not in os.environ:
            (work / "shared").symlink_to(shared)
        _check_imports(work / "tree")
        recheck = None
        if args.recheck:
            recheck = {(s["module"], s["operator"], s["occurrence"]) for r in json.loads(args.recheck.read_text())
                       for s in r["survivors"]}
        results = [run_tree(t, work, args.sample, args.seed, args.only, recheck) for t in args.trees]
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(work / "tree")], cwd=ROOT, check=False)
    for r in results:
        print(f"{r['tree']}: {r['mutations_found']} mutations found; judged {r['killed'] + r['survived']}: "
              f"killed {r['killed']}, survived {r['survived']}, kill rate {r['kill_rate']}; "
              f"incompetent {r['incompetent']}, other {r['other']}")
        for module, m in sorted(r["modules"].items()):
            print(f"  {module}: killed {m['killed']} of {m['killed'] + m['survived']}")
        for s in r["survivors"]:
            print(f"  survived: {s['module']}:{s['line']} {s['operator']} #{s['occurrence']}")
            print("    " + "\n    ".join(s["diff"].splitlines()[2:]))
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        for session in work.glob("*.sqlite"):
            shutil.copy(session, args.keep / session.name)
        (args.keep / "summary.json").write_text(json.dumps(results, indent=1))
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
