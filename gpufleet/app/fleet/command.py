"""`gpufleet preview|up [STACK ...] [--all] [--changed-since REF] [--shard I/N] [--parallel N] [--refresh] [--yes]
[--list]`.

Exit codes: 0 every stack succeeded (a preview: without a mandatory verdict); 1 a stack failed, was locked or did
not start; 2 bad input (message on stderr naming the stack or flag, the value and what is allowed), or, for `up`, a
stack whose offline plan fails (invalid, or a mandatory violation), or, for both, a Kubernetes version move the cloud
refuses between a stack's deployed outputs and its plan (review/moves.py): then no stack's operation is started.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Callable, Optional

from gpufleet.app.fleet import changed, order, schedule, summary
from gpufleet.app.fleet.stacks import FleetStack, SelectionError, discover, parse_shard, shard, stack_dir

EXIT_INVALID = 2


def carried_over(args: argparse.Namespace, stacks: dict[str, FleetStack], project: Path, names: list[str]) -> list[str]:
    """--pushed-since REF (with --changed-since): the selected stacks that nothing since REF touches, i.e. those an
    earlier run left behind (cancelled, or stopped at a failure) and this one deploys."""
    if not getattr(args, "pushed_since", None):
        return []
    if not args.changed_since:
        raise SelectionError("--pushed-since without --changed-since: it names what this push changed, against the "
                             "last deployed commit --changed-since gives (allowed: both, or neither)")
    folder = stack_dir(project).resolve().relative_to(project.resolve()).as_posix()
    files = changed.changed_files(project, args.pushed_since)  # its merge base with HEAD: the push's own changes
    pushed = changed.affected(stacks, files, project, "" if folder == "." else folder)
    return [n for n in names if n not in pushed]


def select(args: argparse.Namespace, stacks: dict[str, FleetStack], project: Path) -> tuple[list[str], dict[str, list[str]]]:
    """The stacks to run, in dependency order, and why each was picked by --changed-since."""
    unknown = [n for n in args.stacks if n not in stacks]
    if unknown:
        raise SelectionError(f"stack '{unknown[0]}': no stack file {stack_dir(project) / f'Pulumi.{unknown[0]}.yaml'} "
                             f"(allowed: {', '.join(sorted(stacks)) or 'none: the project has no stack file'})")
    if args.stacks and args.all:
        raise SelectionError("--all with STACK names: give one or the other (allowed: STACK ..., or --all)")
    if not (args.stacks or args.all or args.changed_since):
        raise SelectionError("no stack named (allowed: STACK ..., --all, or --changed-since REF)")
    names = list(args.stacks) or sorted(stacks)
    reasons: dict[str, list[str]] = {}
    if args.changed_since:
        folder = stack_dir(project).resolve().relative_to(project.resolve()).as_posix()
        files = changed.changed_files(project, args.changed_since)
        reasons = changed.affected(stacks, files, project, "" if folder == "." else folder)
        names = [n for n in names if n in reasons]
    if args.shard:
        index, count = parse_shard(args.shard)
        names = shard(names, stacks, index, count)
    return order.order(stacks, names), {n: reasons[n] for n in names if n in reasons}


def plan_gate(stacks: dict[str, FleetStack], names: list[str], jobs: int,
              planned: Optional[dict[str, dict]] = None) -> list[str]:
    """Why each stack whose offline plan fails must not be updated (empty: all plan cleanly). Each plan made is put in
    `planned` (stack -> plan JSON) for the version gate."""
    from gpufleet.app.plan import fleet as plans

    problems = []
    for r in plans.plan_fleet([(n, stacks[n].path) for n in names], jobs=jobs, fmt="json"):
        if r.plan is not None and planned is not None:
            planned[r.stack] = r.plan
        if r.plan is None:
            problems.append(r.message)
        elif r.status != "ok":
            rules = sorted({v["policy"] for v in r.plan["violations"] if v["level"] == "mandatory"})
            problems.append(f"stack '{r.stack}': the offline plan has mandatory policy violations ({', '.join(rules)}); "
                            f"`gpufleet plan {r.stack}` shows them")
    return problems


def version_gate(deployed: Callable[[str], dict], planned: dict[str, dict]) -> list[str]:
    """The Kubernetes version moves the cloud refuses between what each stack runs (its outputs, `deployed(stack)`)
    and its offline plan (review/moves.py): the run stops before the engine starts, as `gpufleet diff` fails a pull
    request that makes them."""
    from gpufleet.app.review.moves import refused_from_deployed

    problems = []
    for stack, plan in planned.items():
        for move in refused_from_deployed(deployed(stack), plan.get("resources") or []):
            problems.append(f"stack '{stack}': will fail at `pulumi up`: {move.line()}")
    return problems


def confirm(operation: str, names: list[str], yes: bool, ask: Callable[[str], str] = input,
            tty: Optional[bool] = None) -> Optional[str]:
    """None when the run may go ahead, else why not. `up` asks on a terminal; without one it needs --yes."""
    if operation != "up" or yes:
        return None
    if not (sys.stdin.isatty() if tty is None else tty):
        return (f"up of {len(names)} stack(s) ({', '.join(names)}) needs a confirmation and stdin is not a terminal: "
                "pass --yes to update without asking")
    answer = ask(f"Update {len(names)} stack(s): {', '.join(names)}? [y/N] ")
    return None if answer.strip().lower() in ("y", "yes") else "not confirmed: nothing was updated"


def project_dir(given: Optional[str]) -> Path:
    if given:
        return Path(given).resolve()
    cwd = Path.cwd()
    return cwd if (cwd / "Pulumi.yaml").is_file() else Path(__file__).resolve().parents[3]


def run(args: argparse.Namespace) -> int:
    operation = args.command
    project = project_dir(args.project_dir)
    try:
        if args.parallel < 1:
            raise SelectionError(f"--parallel {args.parallel}: not allowed (allowed: 1 or more stacks at a time)")
        stacks = discover(project)
        order.check(stacks)
        names, reasons = select(args, stacks, project)
        carried = carried_over(args, stacks, project, names)
    except SelectionError as exc:
        print(f"gpufleet: {exc}", file=sys.stderr)
        return EXIT_INVALID
    if args.list:
        _emit(_listing(names, reasons, args.format), args.output)
        return 0
    from gpufleet.app.fleet.automation import AutomationRunner, policy_pack_dir

    pack = policy_pack_dir(project, args.policy_pack)
    if not (pack / "PulumiPolicy.yaml").is_file():
        print(f"gpufleet: --policy-pack {str(args.policy_pack or pack)!r}: no PulumiPolicy.yaml there (allowed: a "
              "CrossGuard policy pack folder; the policy pack is always on)", file=sys.stderr)
        return EXIT_INVALID
    if not names:
        print(f"gpufleet {operation}: no stack selected", file=sys.stderr)
        _emit(summary.render(operation, [], args.format), args.output)
        return 0
    if operation == "up" and not args.yes and not sys.stdin.isatty():
        print(f"gpufleet: {confirm(operation, names, args.yes, tty=False)}", file=sys.stderr)
        return EXIT_INVALID
    planned: dict[str, dict] = {}
    problems = plan_gate(stacks, names, jobs=args.parallel, planned=planned)
    if operation == "up" and problems:
        print("gpufleet: the offline plan fails, nothing was updated:\n" + "\n".join(f"  - {p}" for p in problems),
              file=sys.stderr)
        return EXIT_INVALID
    refusal = confirm(operation, names, args.yes)
    if refusal:
        print(f"gpufleet: {refusal}", file=sys.stderr)
        return EXIT_INVALID
    try:
        runner = AutomationRunner(project, operation, pack, refresh=args.refresh)
    except Exception as exc:  # noqa: BLE001 - no CLI, or one too old: one line, exit 2
        import shutil

        if shutil.which("pulumi") is None:
            print(f"gpufleet: gpufleet {operation} runs the Pulumi CLI, and there is no `pulumi` on PATH: install it "
                  "(`curl -fsSL https://get.pulumi.com | sh`, or `brew install pulumi`: pulumi.com/docs/install), "
                  "log in to your backend (`pulumi login`), and run again; `gpufleet plan` needs neither",
                  file=sys.stderr)
            return EXIT_INVALID
        print(f"gpufleet: the Pulumi CLI could not be started for {project}: {type(exc).__name__}: "
              f"{' '.join(str(exc).split())[:500]} (allowed: the `pulumi` CLI on PATH)", file=sys.stderr)
        return EXIT_INVALID
    refused = version_gate(runner.deployed_outputs, planned)
    if refused:
        print(f"gpufleet: a Kubernetes version move the cloud refuses, nothing was run ({operation}):\n"
              + "\n".join(f"  - {p}" for p in refused), file=sys.stderr)
        return EXIT_INVALID
    deps = order.within(stacks, names) if operation == "up" else {}
    outcomes = schedule.run(names, deps, args.parallel, with_progress(runner, len(names)),
                            stop_on_failure=operation == "up")
    _emit(summary.render(operation, outcomes, args.format, reasons, carried), args.output)
    return summary.exit_code(outcomes)


def with_progress(run_one: Callable, total: int, stream=None) -> Callable:
    """`run_one` that prints `[done/total] <stack> <result>` as each stack ends, on a terminal only
    (gpufleet/app/progress.py): an update of many stacks otherwise says nothing for minutes."""
    import threading

    from gpufleet.app import progress

    report = progress.reporter("finished", stream)
    if report is None:
        return run_one
    done, lock = [0], threading.Lock()

    def run(stack: str):
        outcome = run_one(stack)
        with lock:
            done[0] += 1
            report(done[0], total, f"{stack} ({outcome.result})")
        return outcome

    return run


def _listing(names: list[str], reasons: dict[str, list[str]], fmt: str) -> str:
    """--list: the selected stacks in the order they would run (and why --changed-since picked each)."""
    if fmt == "json":
        return json.dumps({"stacks": names, "selectedBecause": reasons}, indent=2) + "\n"
    return "".join(f"{n}" + (f"  ({', '.join(reasons[n])})" if n in reasons else "") + "\n" for n in names)


def _emit(text: str, output: Optional[str]) -> None:
    if output:
        Path(output).write_text(text)
    else:
        sys.stdout.write(text)


def add_parsers(sub: argparse._SubParsersAction, func: Callable[[argparse.Namespace], int]) -> None:
    for operation, what in (("preview", "preview"), ("up", "update")):
        p = sub.add_parser(operation, help=f"{what} many stacks through the real Pulumi engine, the policy pack always "
                                           "on (docs/fleet.md)")
        p.add_argument("stacks", nargs="*", metavar="STACK", help="stack names (or --all, or --changed-since)")
        p.add_argument("--all", action="store_true", help="every stack of the project")
        p.add_argument("--changed-since", metavar="REF",
                       help="only stacks a change since this git revision touches (the rule: docs/fleet.md)")
        p.add_argument("--pushed-since", metavar="REF",
                       help="with --changed-since LAST-DEPLOYED: the commit before this push; the summary names the "
                            "stacks selected only because an earlier run left them behind")
        p.add_argument("--shard", metavar="I/N", help="only shard I of N (deterministic; for CI matrices)")
        p.add_argument("--parallel", type=int, default=1, help="stacks run at a time (default 1)")
        p.add_argument("--refresh", action="store_true", help=f"refresh each stack's state before the {what}")
        p.add_argument("--policy-pack", help="the CrossGuard pack folder (default: the project's policies/)")
        p.add_argument("--project-dir", help="the Pulumi project folder (default: the working directory when it has a "
                                             "Pulumi.yaml, else this checkout)")
        p.add_argument("--list", action="store_true",
                       help="print the selected stacks in the order they would run, and stop (no plan, no engine)")
        if operation == "up":
            p.add_argument("--yes", action="store_true", help="update without asking (needed without a terminal)")
        p.add_argument("--format", choices=["text", "json", "markdown"], default="text")
        p.add_argument("--output", help="write the summary to this file instead of stdout")
        p.set_defaults(func=func, yes=False)
