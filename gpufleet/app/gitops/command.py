"""`gpufleet export argocd|flux STACK DIR`: write a stack's delegated layer for its GitOps engine (docs/gitops.md).

The export is a plan first (gpufleet/app/plan/engine.py): the stack file is validated, every object judged against
its CRD and by the policy pack, as `gpufleet plan` does. Exit codes as `gpufleet plan`: 0 written; 1 a mandatory
policy is violated (nothing written); 2 the stack is invalid, its engine is not the one asked for, or DIR is not a
directory (nothing written).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

EXIT_OK, EXIT_POLICY, EXIT_INVALID = 0, 1, 2


def add_parsers(sub, project_dir) -> None:
    """`export` and its engines, under the CLI's subcommands; `project_dir`: where stacks/ is (the CLI's)."""
    export = sub.add_parser("export", help="write a stack's delegated layer (team namespaces, queues, priorities, "
                                           "models, alerts, dashboards) for its GitOps engine (docs/gitops.md)")
    engines = export.add_subparsers(dest="export_engine", required=True)
    for engine, what in (("argocd", "plain manifests per cluster with sync waves, an Argo CD Application and AppProject"),
                         ("flux", "the same manifests with a Flux GitRepository and Kustomization")):
        p = engines.add_parser(engine, help=what)
        p.add_argument("stack", metavar="STACK", help="stack name: stacks/Pulumi.<STACK>.yaml")
        p.add_argument("dir", metavar="DIR", help="a checkout of the repository gpufleet:gitops names")
        p.add_argument("--config", help="read this stack file instead, under the stack name")
        p.set_defaults(func=lambda args, engine=engine: run(args, engine, project_dir()))


def run(args: argparse.Namespace, engine: str, project: Path) -> int:
    from gpufleet.app.gitops import argocd, flux
    from gpufleet.app.plan.engine import plan
    from gpufleet.app.plan.stackfile import StackFileError, read_stack_file, stack_path
    from gpufleet.base.spec import SpecError, load_spec

    from gpufleet.base.spec.errors import printable

    root = Path(args.dir)
    if not root.is_dir():
        print(f"gpufleet: DIR {printable(repr(str(root)))}: not a directory (give a checkout of the repository "
              "gpufleet:gitops names)", file=sys.stderr)
        return EXIT_INVALID
    path = Path(args.config) if args.config else stack_path(project, args.stack)
    try:
        stack_file = read_stack_file(args.stack, path)
        spec = load_spec(stack_file.stack, stack_file.config, stack_file.secret_keys)
        if spec.gitops.engine != engine:
            print(f"gpufleet: stack '{printable(args.stack)}': gpufleet:gitops.engine: {engine} is not the stack's engine "
                  f"(got {spec.gitops.engine!r}); set `engine: {engine}` to export for it", file=sys.stderr)
            return EXIT_INVALID
        result = plan(stack_file)
    except (StackFileError, SpecError) as exc:
        print(f"gpufleet: {exc}", file=sys.stderr)
        return EXIT_INVALID
    if result.has_mandatory_violation:
        for v in result.violations:
            if v.level == "mandatory":
                print(f"gpufleet: {v.policy}: {v.message}", file=sys.stderr)
        print(f"gpufleet: stack '{printable(args.stack)}': mandatory policies are violated: nothing written",
              file=sys.stderr)
        return EXIT_POLICY
    exported = argocd.export(spec, stack_file.stack, result.delegated)
    extra = {}
    if engine == "flux":
        exported = argocd.Export(exported.cluster_dir, exported.manifests, {})
        extra = {flux.FLUX: flux.objects(spec, stack_file.stack)}
    files = argocd.write(exported, root, extra)
    waves = sorted({o.wave for o in result.delegated})
    span = f"waves {waves[0]}-{waves[-1]}" if waves else "no objects"
    print(f"gpufleet: {len(result.delegated)} objects ({span}) and {len(files) - len(result.delegated)} {engine} "
          f"objects written under {root / exported.cluster_dir}")
    return EXIT_OK
