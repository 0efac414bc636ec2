"""The `gpufleet` command: `plan` (offline plan of a stack, or of every stack with --all), `schema` (JSON Schema of stack files),
`diff` (review two plans), `report` (review a real `pulumi preview --json` and its event log),
`images` (every image, chart and binary a stack pulls), `catalog show|refresh` (the facts catalog), `charts fetch` (the pinned chart archives the plan reads CRDs from),
`verify` (check a deployed stack's cluster), `export argocd|flux` (a stack's delegated layer for its GitOps engine), `preview`/`up` (many stacks through the real engine), `k3s restore-commands` (restore a k3s stack's etcd from a snapshot) and `aks migrate-state` (move an AKS stack's state from the classic Azure provider to Azure Native).

Exit codes (contract): 0 clean or advisory findings only; 1 a mandatory policy is violated;
2 the stack config is invalid (message on stderr, no traceback, nothing registered).
"""

from __future__ import annotations

import argparse
import atexit
import datetime
import functools
import gc
import json
import os
import sys
from pathlib import Path
from typing import Optional

EXIT_OK, EXIT_POLICY, EXIT_INVALID = 0, 1, 2
CHECKOUT = Path(__file__).resolve().parents[2]  # gpufleet/app/cli.py -> the source checkout, or site-packages


class OutsideProject(Exception):
    """No stacks/ folder where gpufleet looks for one; str() says where it looked and what to do."""


def _project_dir() -> Path:
    """The project whose stacks/ we read: the working directory or the nearest folder above it with a Pulumi.yaml and
    a stacks/ folder, else this source checkout (an editable install, where the example stacks are). An installed
    wheel has no stacks/ beside it: OutsideProject then, rather than a path into site-packages."""
    cwd = Path.cwd()
    for folder in (cwd, *cwd.parents):
        if (folder / "stacks").is_dir() and (folder is cwd or (folder / "Pulumi.yaml").is_file()):
            return folder
    if (CHECKOUT / "stacks").is_dir() and (CHECKOUT / "pyproject.toml").is_file():
        return CHECKOUT
    raise OutsideProject(
        f"no stacks/ folder in {cwd} or above it: run gpufleet in your infrastructure repository (the folder with "
        "Pulumi.yaml and stacks/Pulumi.<stack>.yaml), or give a stack file (--config FILE) or a program (--program "
        "DIR); `gpufleet init DIR` creates a repository")


def _stack_for(stack: Optional[str], config: Optional[str]) -> str:
    """The stack name: as given; else, with --config, the name in its file name (`Pulumi.<stack>.yaml`, as the Pulumi
    CLI names stack files); else dev. StackNameError when --config's file is not named so."""
    if stack:
        return stack
    if config:
        name = Path(config).name
        if name.startswith("Pulumi.") and name.endswith(".yaml") and len(name) > len("Pulumi..yaml"):
            return name[len("Pulumi."):-len(".yaml")]
        raise StackNameError(f"--config {config!r}: name the stack (`gpufleet plan STACK --config FILE`); the file is "
                             "not named Pulumi.<stack>.yaml, the name the stack could be read from")
    return "dev"


class StackNameError(Exception):
    """--config FILE without a stack name, and a file name that does not give one."""


def cmd_plan_all(args: argparse.Namespace) -> int:
    """Every stack in stacks/ (or those matching the STACK globs), SDKs imported once per worker."""
    from gpufleet.app import progress
    from gpufleet.app.plan import fleet

    patterns = args.stacks or ["*"]
    try:
        stacks = fleet.discover(_project_dir() / "stacks", patterns)
    except OutsideProject as exc:
        print(f"gpufleet: {exc}", file=sys.stderr)
        return EXIT_INVALID
    if not stacks:
        print(f"gpufleet: no stack file in {_project_dir() / 'stacks'} matches {' '.join(patterns)}", file=sys.stderr)
        return EXIT_INVALID
    if args.jobs < 0:
        print(f"gpufleet: --jobs {args.jobs}: must be 0 (one per core) or more", file=sys.stderr)
        return EXIT_INVALID
    results = fleet.plan_fleet(stacks, jobs=args.jobs, fmt=args.format, progress=progress.reporter("planned"))
    for r in results:
        if r.plan is None:
            print(f"gpufleet: {r.message}", file=sys.stderr)
    _emit(fleet.render(results, args.format, details=args.details), args.output)
    return fleet.exit_code(results)


def cmd_plan(args: argparse.Namespace) -> int:
    from gpufleet.app.plan.stackfile import StackFileError, read_stack_file, stack_path

    today = None
    pinned = os.environ.get("GPUFLEET_TODAY")  # catalog_checks.TODAY_ENV
    if args.today or pinned:
        given = f"--today {args.today!r}" if args.today else f"GPUFLEET_TODAY={pinned!r}"
        try:
            today = datetime.date.fromisoformat(args.today or pinned)
        except ValueError:
            print(f"gpufleet: {given}: not a date; write it as YYYY-MM-DD (e.g. 2027-01-31)", file=sys.stderr)
            return EXIT_INVALID
        if args.all and args.today:
            print("gpufleet: --today applies to one STACK, not --all (set GPUFLEET_TODAY for every stack)", file=sys.stderr)
            return EXIT_INVALID
    if args.all:
        return cmd_plan_all(args)
    if args.program:
        return cmd_plan_program(args, today)
    if len(args.stacks) > 1:
        print("gpufleet: plan takes one STACK (or --all with any number of STACK globs)", file=sys.stderr)
        return EXIT_INVALID
    if args.jobs:
        print("gpufleet: --jobs applies to --all only", file=sys.stderr)
        return EXIT_INVALID
    from gpufleet.base.spec import SpecError

    try:
        args.stack = _stack_for(args.stacks[0] if args.stacks else None, args.config)
        path = Path(args.config) if args.config else stack_path(_project_dir(), args.stack)
    except (StackNameError, OutsideProject) as exc:
        print(f"gpufleet: {exc}", file=sys.stderr)
        return EXIT_INVALID
    try:
        stack_file = read_stack_file(args.stack, path)
        from gpufleet.app.plan.engine import plan
        from gpufleet.app.plan.render import render

        result = plan(stack_file, today=today)
    except (StackFileError, SpecError) as exc:
        print(f"gpufleet: {exc}", file=sys.stderr)
        return EXIT_INVALID
    text = render(result, args.format)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return EXIT_POLICY if result.has_mandatory_violation else EXIT_OK


def cmd_plan_program(args: argparse.Namespace, today: Optional[datetime.date]) -> int:
    """`gpufleet plan --program DIR [STACK]`: a Pulumi program that is not a stack file (gpufleet.testing)."""
    from gpufleet import testing
    from gpufleet.app.plan.render import render
    from gpufleet.app.plan.stackfile import StackFileError
    from gpufleet.base.spec import SpecError

    if len(args.stacks) > 1 or args.config:
        print("gpufleet: plan --program DIR takes one STACK (its Pulumi.<STACK>.yaml) and no --config", file=sys.stderr)
        return EXIT_INVALID
    directory = Path(args.program)
    stack = args.stacks[0] if args.stacks else program_stack(directory)
    try:
        result = testing.plan_directory(directory, stack, today=today)
    except (testing.ProgramError, StackFileError, SpecError) as exc:
        print(f"gpufleet: {exc}", file=sys.stderr)
        return EXIT_INVALID
    except Exception as exc:  # noqa: BLE001 - the user's program failed: say where, without our traceback
        print(f"gpufleet: program {directory} stack '{stack}' failed: {program_failure(exc, directory)}", file=sys.stderr)
        return EXIT_INVALID
    _emit(render(result, args.format), args.output)
    return EXIT_POLICY if result.has_mandatory_violation else EXIT_OK


def program_stack(directory: Path) -> str:
    """The stack of a program folder when none is named: its only `Pulumi.<stack>.yaml`, else `dev`."""
    found = sorted(p.name[len("Pulumi."):-len(".yaml")] for p in directory.glob("Pulumi.*.yaml"))
    return found[0] if len(found) == 1 else "dev"


def program_failure(exc: BaseException, directory: Path) -> str:
    """One line: the exception, at the last line of the user's program it passed through (if any)."""
    import traceback

    where = ""
    root = str(directory.resolve())
    for frame in traceback.extract_tb(exc.__traceback__):
        if str(Path(frame.filename).resolve()).startswith(root):
            where = f" at {frame.filename}:{frame.lineno}"
    message = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {message}{where}"


def cmd_images(args: argparse.Namespace) -> int:
    """Every image, chart and binary the stack would pull (gpufleet/app/images.py), read from its offline plan."""
    from gpufleet.app.plan.stackfile import StackFileError, read_stack_file, stack_path
    from gpufleet.base.spec import SpecError

    try:
        args.stack = _stack_for(args.stack, args.config)
        path = Path(args.config) if args.config else stack_path(_project_dir(), args.stack)
    except (StackNameError, OutsideProject) as exc:
        print(f"gpufleet: {exc}", file=sys.stderr)
        return EXIT_INVALID
    try:
        stack_file = read_stack_file(args.stack, path)
        from gpufleet.app import images
        from gpufleet.app.plan.engine import plan

        found = images.image_list(plan(stack_file, evaluate_policies=False))
    except (StackFileError, SpecError) as exc:
        print(f"gpufleet: {exc}", file=sys.stderr)
        return EXIT_INVALID
    _emit(images.dumps(found) if args.format == "json" else images.text(found), args.output)
    for item in found.unlisted:
        print(f"gpufleet: not listed: {item}", file=sys.stderr)
    return EXIT_OK


def cmd_schema(args: argparse.Namespace) -> int:
    from gpufleet.base.spec import json_schema

    sys.stdout.write(json.dumps(json_schema(), indent=2) + "\n")
    return EXIT_OK


def _emit(text: str, output: Optional[str]) -> None:
    if output:
        Path(output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)


def cmd_diff(args: argparse.Namespace) -> int:
    from gpufleet.app.review import ReviewInputError, load_plan, render, review_plans
    from gpufleet.app.review import fleet

    try:
        base, head = load_plan(args.base), load_plan(args.head)
    except ReviewInputError as exc:
        print(f"gpufleet: {exc}", file=sys.stderr)
        return EXIT_INVALID
    if fleet.is_fleet(base) != fleet.is_fleet(head):
        print("gpufleet: diff needs two stack plans or two fleet plans (`gpufleet plan --all`), not one of each",
              file=sys.stderr)
        return EXIT_INVALID
    if fleet.is_fleet(head):
        review = fleet.review_fleet(base, head)
        if args.output_dir:
            out = Path(args.output_dir)
            out.mkdir(parents=True, exist_ok=True)
            for name, body in fleet.comments(review, args.format).items():
                (out / name).write_text(body, encoding="utf-8")
        else:
            _emit(fleet.render_fleet(review, args.format), args.output)
        return review.exit_code
    try:
        review = review_plans(base, head)
    except ReviewInputError as exc:  # a head stack name that cannot be a comment marker
        print(f"gpufleet: {exc}", file=sys.stderr)
        return EXIT_INVALID
    _emit(render(review, args.format), args.output)
    return EXIT_POLICY if review.fails else EXIT_OK


def cmd_report(args: argparse.Namespace) -> int:
    from gpufleet.app.review import ReviewInputError, render
    from gpufleet.app.review.preview import review_preview

    try:
        review = review_preview(args.preview_json, args.event_log, stack=args.stack)
    except ReviewInputError as exc:
        print(f"gpufleet: {exc}", file=sys.stderr)
        return EXIT_INVALID
    _emit(render(review, args.format), args.output)
    return EXIT_POLICY if review.has_mandatory else EXIT_OK


def cmd_catalog_show(args: argparse.Namespace) -> int:
    from gpufleet.base.catalog.show import show

    try:
        text = show(args.name)
    except KeyError as exc:
        print(f"gpufleet: {exc.args[0]}", file=sys.stderr)
        return EXIT_INVALID
    sys.stdout.write(text)
    return EXIT_OK


def cmd_catalog_refresh(args: argparse.Namespace) -> int:
    from gpufleet.base.catalog import refresh

    if not args.aws and not args.gcp and not args.azure:
        print("gpufleet: catalog refresh needs --aws REGION[,REGION], --gcp PROJECT[:REGION,...] and/or --azure "
              "REGION[,REGION]", file=sys.stderr)
        return EXIT_INVALID
    aws_regions = [r for r in (args.aws or "").split(",") if r]
    azure_regions = [r for r in (args.azure or "").split(",") if r]
    import re

    from gpufleet.base.spec.checks.stack_keys import PROVIDER_KEYS

    shape = re.compile(PROVIDER_KEYS["azure:location"].pattern)  # the location names a stack's azure:location takes
    bad = [r for r in azure_regions if not shape.fullmatch(r)]
    if bad:
        print(f"gpufleet: catalog refresh --azure: {bad[0][:60]!r} is not an Azure region name (lower-case letters and "
              "digits, as `az account list-locations` prints them: eastus, westeurope)", file=sys.stderr)
        return EXIT_INVALID
    directory = Path(args.output) if args.output else refresh.CATALOG_DIR
    try:
        result = refresh.build(aws_regions, refresh.parse_gcp(args.gcp or ""), base=directory, azure_regions=azure_regions)
    except refresh.MissingSdk as exc:
        print(f"gpufleet: {exc}", file=sys.stderr)
        return EXIT_INVALID
    sys.stdout.write(refresh.report(result))
    if result.errors:
        return EXIT_INVALID
    if args.check:
        drifted = refresh.drift(result, directory)
        for name in drifted:
            print(f"drift: {directory / name} differs from the APIs", file=sys.stderr)
        return EXIT_POLICY if drifted else EXIT_OK
    for path in refresh.write(result, directory):
        print(f"wrote {path}")
    return EXIT_OK


def cmd_charts_fetch(args: argparse.Namespace) -> int:
    """Download the pinned chart archives whose CRDs the plan validates against: 0 all there, 1 some missing."""
    from gpufleet.app import charts_fetch
    from gpufleet.app.plan.chart_archives import charts_dir

    directory = Path(args.dir).expanduser() if args.dir else charts_dir()
    pins = charts_fetch.crd_charts()
    if args.stack:  # every chart the stack installs, for gpufleet:registry.charts (docs/air-gapped.md)
        from gpufleet.app.plan.engine import plan
        from gpufleet.app.plan.stackfile import StackFileError, read_stack_file, stack_path
        from gpufleet.base.spec import SpecError

        try:
            path = Path(args.config) if args.config else stack_path(_project_dir(), args.stack)
            pins = charts_fetch.stack_charts(plan(read_stack_file(args.stack, path), evaluate_policies=False))
        except (StackFileError, SpecError, OutsideProject) as exc:
            print(f"gpufleet: {exc}", file=sys.stderr)
            return EXIT_INVALID
    from gpufleet.app import progress

    try:
        results = charts_fetch.fetch(pins, directory, progress=progress.reporter("fetched"))
    except OSError as exc:
        print(f"gpufleet: cannot create {directory}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_INVALID
    sys.stdout.write(charts_fetch.report(results, directory))
    return EXIT_OK if all(r.ok for r in results) else EXIT_POLICY


def cmd_k3s_restore(args: argparse.Namespace) -> int:
    from gpufleet.app.plan.stackfile import StackFileError, read_stack_file, stack_path
    from gpufleet.base.spec import SpecError, load_spec
    from gpufleet.components.k3s.restore import RestoreError, render_steps, restore_steps

    path = Path(args.config) if args.config else stack_path(_project_dir(), args.stack)
    try:
        stack_file = read_stack_file(args.stack, path)
        spec = load_spec(stack_file.stack, stack_file.config, stack_file.secret_keys)
        if spec.cluster.k3s is None:  # only a k3s stack has a k3s block (its etcd is gpufleet's)
            raise RestoreError(f"stack '{args.stack}' runs on {spec.cluster.platform}, not k3s: its etcd is the cloud's")
        steps = restore_steps(args.stack, spec.cluster.k3s, args.snapshot, args.server)
    except (StackFileError, SpecError, RestoreError) as exc:
        print(f"gpufleet: {exc}", file=sys.stderr)
        return EXIT_INVALID
    sys.stdout.write(render_steps(args.stack, args.snapshot, steps))
    return EXIT_OK


def cmd_aks_migrate_state(args: argparse.Namespace) -> int:
    """Rewrite a classic-provider AKS stack's export for Azure Native (docs/aks.md): 0 written, 2 unreadable input."""
    from gpufleet.app.input_files import InputFileError, parse_json, read_text
    from gpufleet.components.aks.migration import MigrationError, migrate, steps

    try:
        export = parse_json(read_text(args.state, "stack export"), f"stack export {args.state}")
        after, imports, moved = migrate(export)
    except (InputFileError, MigrationError) as exc:
        print(f"gpufleet: aks migrate-state: {exc}", file=sys.stderr)
        return EXIT_INVALID
    if not moved:
        print(f"gpufleet: aks migrate-state: {args.state[:200]!r} holds no classic pulumi-azure AKS resource: nothing to move",
              file=sys.stderr)
        return EXIT_INVALID
    Path(args.out).write_text(json.dumps(after, indent=2) + "\n")
    Path(args.import_file).write_text(json.dumps(imports, indent=2) + "\n")
    for m in moved:
        print(f"moves {m.name}: {m.urn.rsplit('::', 2)[-2].rsplit('$', 1)[-1]} -> {m.native_type} ({m.id})")
    sys.stdout.write(steps(args.out, args.import_file))
    return EXIT_OK


def cmd_verify(args: argparse.Namespace) -> int:
    """Check a deployed stack's cluster (docs/verify.md): 0 all pass, 1 a check failed, 2 usage/connection/stack."""
    from gpufleet.app.plan.stackfile import StackFileError, read_stack_file, stack_path
    from gpufleet.base.spec import SpecError, load_spec

    if args.timeout <= 0:
        print(f"gpufleet: --timeout {args.timeout:g}: must be more than 0 seconds", file=sys.stderr)
        return EXIT_INVALID
    try:
        from gpufleet.app import verify
        from gpufleet.app.verify import kubeconfig
        from kubernetes import config as kube_config  # noqa: F401 - the client verify needs: fail here if absent
    except ImportError as exc:
        print(f"gpufleet: verify needs the Kubernetes client: pip install 'gpufleet[verify]' ({exc})", file=sys.stderr)
        return EXIT_INVALID
    path = Path(args.config) if args.config else stack_path(_project_dir(), args.stack)
    try:
        stack_file = read_stack_file(args.stack, path)
        spec = load_spec(stack_file.stack, stack_file.config, stack_file.secret_keys)
        targets = verify.targets(args.stack, spec)
        pools = verify.select_pools(targets, [p for p in (args.pools or "").split(",") if p])
    except (StackFileError, SpecError, verify.VerifyUsageError) as exc:
        print(f"gpufleet: {exc}", file=sys.stderr)
        return EXIT_INVALID
    try:
        api = kubeconfig.api_client(args.kubeconfig, args.context, allow_exec=not args.no_exec_plugins)
    except kubeconfig.KubeconfigError as exc:
        print(f"gpufleet: {exc}", file=sys.stderr)
        return EXIT_INVALID
    try:
        result = verify.verify(api, targets, pools, level=args.level, timeout=args.timeout, namespace=args.namespace)
        _gitops_check(api, stack_file, spec, result)
    except verify.ConnectionProblem as exc:
        print(f"gpufleet: {exc}", file=sys.stderr)
        return EXIT_INVALID
    _emit(verify.render(result, args.format), args.output)
    return EXIT_OK if result.ok else EXIT_POLICY


def _gitops_check(api, stack_file, spec, result) -> None:
    """Where a GitOps engine applies the delegated layer: its synced state against the export (gpufleet/app/gitops/verify.py)."""
    from gpufleet.base import gitops

    if not gitops.delegates(spec):
        return
    from kubernetes import client

    from gpufleet.app.gitops.verify import check
    from gpufleet.app.plan.engine import plan

    objects = plan(stack_file, evaluate_policies=False).delegated
    result.checks.append(check(client.CustomObjectsApi(api), spec, stack_file.stack, objects))


def cmd_fleet(args: argparse.Namespace) -> int:
    """`gpufleet preview|up`: many stacks through the real engine (gpufleet/app/fleet/command.py)."""
    from gpufleet.app.fleet import command

    return command.run(args)


def version() -> str:
    """The installed distribution's version (pyproject.toml's), as `pip show gpufleet` gives it."""
    from importlib import metadata

    try:
        return metadata.version("gpufleet")
    except metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown (not installed)"


def cmd_init(args: argparse.Namespace) -> int:
    """`gpufleet init DIR`: a separate infrastructure repository pinned to this release (gpufleet/app/init.py)."""
    from gpufleet.app import init

    directory = Path(args.dir)
    try:
        written = init.init(directory, args.platform, args.stack, version())
    except init.InitError as exc:
        print(f"gpufleet: {exc}", file=sys.stderr)
        return EXIT_INVALID
    for path in written:
        print(f"wrote {path}")
    print(f"next: cd {directory} && python -m venv venv && venv/bin/pip install -r requirements.txt && "
          f"venv/bin/gpufleet plan {args.stack}")
    return EXIT_OK


def cmd_completion(args: argparse.Namespace) -> int:
    """`gpufleet completion bash|zsh|fish`: the shell's completion script on stdout (gpufleet/app/completion.py)."""
    from gpufleet.app import completion

    sys.stdout.write(completion.script(args.shell, parser()))
    return EXIT_OK


class UsageError(Exception):
    """A command line argparse refuses; main() prints it as argparse would (usage, then the message), or as JSON."""

    def __init__(self, message: str, usage: str):
        super().__init__(message)
        self.usage = usage


class _Parser(argparse.ArgumentParser):
    """argparse's parser, raising UsageError instead of exiting, so that `--format json` reports it as JSON too."""

    def error(self, message: str):  # type: ignore[override]
        raise UsageError(message, self.format_usage())


@functools.cache
def parser() -> argparse.ArgumentParser:
    """gpufleet's argument parser, built once per process: it is only read (parse_args returns a new namespace each
    call), and building its ~20 subcommands cost more than refusing a bad stack file (a fleet or the tests call main
    thousands of times)."""
    p = _Parser(prog="gpufleet", description="GPU Kubernetes clusters on Pulumi, planned offline.")
    p.add_argument("--version", action="version", version=f"gpufleet {version()}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    plan = sub.add_parser("plan", help="plan a stack offline (no Pulumi CLI or credentials needed)")
    plan.add_argument("stacks", nargs="*", metavar="STACK",
                      help="stack name: stacks/Pulumi.<STACK>.yaml (default: dev); with --all, glob patterns (default: *)")
    plan.add_argument("--config", help="plan this stack file instead, under the stack name (default: the name in "
                                       "its file name, Pulumi.<STACK>.yaml)")
    plan.add_argument("--program", metavar="DIR",
                      help="plan the Pulumi program in DIR (its Pulumi.yaml, __main__.py and Pulumi.<STACK>.yaml) "
                           "instead of a gpufleet stack file; STACK defaults to its only stack file, else dev")
    plan.add_argument("--all", action="store_true", help="plan every stack in stacks/ (or those matching STACK globs)")
    plan.add_argument("--jobs", type=int, default=0, help="with --all: worker processes (default 0: one per core)")
    plan.add_argument("--details", action="store_true",
                      help="with --all (text, markdown): each stack's whole plan after the fleet summary (default: the "
                           "summary only; --format json always carries every plan)")
    plan.add_argument("--format", choices=["text", "json", "markdown"], default="text")
    plan.add_argument("--output", help="write to this file instead of stdout")
    plan.add_argument("--today", metavar="YYYY-MM-DD",
                      help="judge support calendars and the catalog's age on this date instead of today (UTC): "
                           "reproducible plans, or a look ahead at what will need upgrading")
    plan.set_defaults(func=cmd_plan)
    imgs = sub.add_parser("images", help="list every image, chart and binary a stack would pull, for a mirroring tool")
    imgs.add_argument("stack", nargs="?", metavar="STACK",
                      help="stack name (default: the one --config's Pulumi.<STACK>.yaml names, else dev)")
    imgs.add_argument("--config", help="read this stack file instead, under the stack name")
    imgs.add_argument("--format", choices=["text", "json"], default="text")
    imgs.add_argument("--output", help="write to this file instead of stdout")
    imgs.set_defaults(func=cmd_images)
    schema = sub.add_parser("schema", help="print the JSON Schema of stack files")
    schema.set_defaults(func=cmd_schema)
    diff = sub.add_parser("diff", help="review the change between two offline plans (gpufleet plan --format json)")
    diff.add_argument("base", help="plan JSON of the base (e.g. main)")
    diff.add_argument("head", help="plan JSON of the head (the pull request)")
    diff.add_argument("--format", choices=["markdown", "text", "json"], default="markdown")
    diff.add_argument("--output", help="write to this file instead of stdout")
    diff.add_argument("--output-dir", help="fleet plans: one file per changed stack plus fleet.<ext> (PR comments)")
    diff.set_defaults(func=cmd_diff)
    report = sub.add_parser("report", help="review a real `pulumi preview --json` (+ its --event-log for policies)")
    report.add_argument("--preview-json", required=True, help="output of `pulumi preview --json`")
    report.add_argument("--event-log", help="file written by `pulumi preview --event-log` (policy violations)")
    report.add_argument("--stack", help="stack name for the heading and marker (default: read from the URNs)")
    report.add_argument("--format", choices=["markdown", "text", "json"], default="markdown")
    report.add_argument("--output", help="write to this file instead of stdout")
    report.set_defaults(func=cmd_report)
    catalog = sub.add_parser("catalog", help="the GPU/cloud facts catalog: show facts with their sources, refresh them")
    catalog_sub = catalog.add_subparsers(dest="catalog_command", required=True)
    show = catalog_sub.add_parser("show", help="print catalog facts with their sources (an instance/machine type or GPU)")
    show.add_argument("name", nargs="?", help="EC2 instance type, GCP machine type or GPU model; none: an overview")
    show.set_defaults(func=cmd_catalog_show)
    ref = catalog_sub.add_parser("refresh", help="read offerings, machine facts and prices from the AWS/GCP/Azure APIs and merge them into the "
                                   "catalog (AWS and GCP need credentials and the catalog extra; Azure's Retail Prices API needs neither)")
    ref.add_argument("--aws", help="AWS regions, comma-separated (e.g. us-east-1,us-west-2)")
    ref.add_argument("--gcp", help="GCP PROJECT[:REGION,...], several separated by ';'")
    ref.add_argument("--azure", help="Azure regions, comma-separated (e.g. eastus,westus3): GPU VM prices from the Retail Prices API")
    ref.add_argument("--output", help="directory of the generated catalog files to merge into (default: the installed catalog)")
    ref.add_argument("--check", action="store_true", help="compare without writing; exit 1 when the files drifted from the APIs")
    ref.set_defaults(func=cmd_catalog_refresh)
    charts = sub.add_parser("charts", help="the pinned Helm chart archives `gpufleet plan` reads CRDs from")
    charts_sub = charts.add_subparsers(dest="charts_command", required=True)
    fetch = charts_sub.add_parser("fetch", help="download the pinned chart archives that hold the CRDs of the custom "
                                                "resources gpufleet creates, checking their sha256 (OCI charts through "
                                                "`helm pull` when helm is on PATH, else it prints the command)")
    fetch.add_argument("--dir", help="directory to fill (default: $GPUFLEET_CHARTS_DIR, else "
                                     "$XDG_CACHE_HOME/gpufleet/charts or ~/.cache/gpufleet/charts)")
    fetch.add_argument("--stack", help="instead, every chart this stack installs (for gpufleet:registry.charts: a "
                                       "directory the releases read, or to `helm push` into an OCI registry)")
    fetch.add_argument("--config", help="with --stack: plan this stack file under that name")
    fetch.set_defaults(func=cmd_charts_fetch)
    k3s = sub.add_parser("k3s", help="k3s operations for a stack's hosts").add_subparsers(dest="k3s_command", required=True)
    restore = k3s.add_parser("restore-commands", help="print the commands that restore a stack's k3s cluster from an etcd snapshot")
    restore.add_argument("stack", help="stack name: stacks/Pulumi.<STACK>.yaml")
    restore.add_argument("snapshot", help="snapshot name (as `k3s etcd-snapshot ls` lists it) or an absolute path on the server")
    restore.add_argument("--config", help="read this stack file instead, under the stack name")
    restore.add_argument("--server", help="the server that restores (default: the one that took the snapshot, else the first)")
    restore.set_defaults(func=cmd_k3s_restore)
    aks = sub.add_parser("aks", help="AKS operations").add_subparsers(dest="aks_command", required=True)
    move = aks.add_parser("migrate-state", help="move a stack's state from the classic pulumi-azure provider to "
                                                "pulumi-azure-native (docs/aks.md)")
    move.add_argument("--state", required=True, help="`pulumi stack export` of the stack, taken before the upgrade")
    move.add_argument("--out", required=True, help="the export without the classic AKS resources, for `pulumi stack import`")
    move.add_argument("--import-file", required=True, help="the `pulumi import --file` document that adopts their Azure objects")
    move.set_defaults(func=cmd_aks_migrate_state)
    ver = sub.add_parser("verify", help="check a deployed stack's cluster: operators, scheduling, capacity, DCGM, NCCL")
    ver.add_argument("stack", help="stack name: stacks/Pulumi.<STACK>.yaml")
    ver.add_argument("--config", help="read this stack file instead, under the stack name")
    ver.add_argument("--kubeconfig", help="kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
    ver.add_argument("--context", help="kubeconfig context (default: the current one)")
    ver.add_argument("--no-exec-plugins", action="store_true",
                     help="refuse a kubeconfig whose users run a command (exec, auth-provider): a kubeconfig is code")
    ver.add_argument("--pools", help="comma-separated GPU pools to check (default: every GPU pool)")
    ver.add_argument("--level", choices=["quick", "full"], default="quick",
                     help="quick: DCGM diag level 1; full: level 2 plus the NCCL all-reduce on RDMA pools")
    ver.add_argument("--timeout", type=float, default=600, help="seconds each wait may take (default 600)")
    ver.add_argument("--namespace", default="default", help="namespace of the probe pods and diag Jobs (default: default)")
    ver.add_argument("--format", choices=["text", "json", "markdown"], default="text")
    ver.add_argument("--output", help="write to this file instead of stdout")
    ver.set_defaults(func=cmd_verify)
    from gpufleet.app.fleet.command import add_parsers
    from gpufleet.app.gitops import command as gitops_command

    add_parsers(sub, cmd_fleet)
    new = sub.add_parser("init", help="create a separate infrastructure repository that uses this gpufleet release")
    new.add_argument("dir", metavar="DIR", help="the new repository's folder (created; nothing in it is overwritten)")
    from gpufleet.app.init import starter_platforms

    new.add_argument("--platform", choices=starter_platforms(), default="k3s",
                     help="the platform of its first stack (default: k3s)")
    new.add_argument("--stack", default="dev", help="its first stack's name (default: dev)")
    new.set_defaults(func=cmd_init)
    comp = sub.add_parser("completion", help="print the shell completion script for bash, zsh or fish")
    comp.add_argument("shell", choices=["bash", "zsh", "fish"], help="the shell (see gpufleet/app/completion.py)")
    comp.set_defaults(func=cmd_completion)
    gitops_command.add_parsers(sub, _project_dir)
    return p


def main(argv: Optional[list[str]] = None) -> int:
    from gpufleet.app import json_errors

    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        args = parser().parse_args(argv)
    except UsageError as exc:
        if json_errors.wants_json(argv):
            return json_errors.usage_error(str(exc))
        sys.stderr.write(f"{exc.usage}gpufleet: error: {exc}\n")
        return EXIT_INVALID
    if getattr(args, "format", None) == "json":
        return json_errors.run_as_json(_guarded, args)
    return _guarded(args)


def _guarded(args: argparse.Namespace) -> int:
    try:
        return args.func(args)
    except OutsideProject as exc:  # any command that reads stacks/ outside a project
        print(f"gpufleet: {exc}", file=sys.stderr)
        return EXIT_INVALID


def run() -> None:
    """The `gpufleet` command (the console script and `python -m gpufleet.app.cli`): main() in a process that ends
    with it.

    Such a process lives for one command, so it skips two things the interpreter does for long-lived ones, together
    a third of a plan's time or more (bench/plan.py): the cyclic garbage collector, which walks every object of the
    loaded Pulumi SDKs again and again and finds next to nothing (peak memory grows by 1 to 3 %), and the teardown
    that frees those objects one by one at exit. The exit handlers still run and the output is flushed; code that
    calls main() itself (the tests, the e2e harness) keeps the interpreter's defaults."""
    gc.disable()
    code = main()
    atexit._run_exitfuncs()  # what a normal exit runs: logging's flush, multiprocessing's finalizers
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    run()
