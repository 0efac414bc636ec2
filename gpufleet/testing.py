"""Test and plan your own Pulumi program offline, under the mocks `gpufleet plan` uses.

`gpufleet plan` runs gpufleet's stack program under mocks that answer in the clouds' own shapes (ids, ARNs, self
links, endpoints, the outputs later resources read: gpufleet/app/plan/mocks.py). This module runs *your* program
the same way, so a unit test of your infrastructure repository gets what `gpufleet plan` shows for a stack: every
registration, and, from `plan`, the GPU capacity, the hourly cost and the policy verdicts.

    from gpufleet import testing
    import infra                      # your module: def build() declares the resources

    result = testing.plan(infra.build, stack="dev", config={"aws:region": "us-east-1"})
    assert not result.has_mandatory_violation
    group = testing.one(result.resources, "aws:eks/nodeGroup:NodeGroup", "ml-pool-l4-ng")
    assert group.inputs["scalingConfig"]["minSize"] == 0

    result = testing.plan_directory("infra/", stack="dev")   # a project folder, as `gpufleet plan --program` plans it

A program that builds one `GpuCluster` is planned as a stack with that cluster's spec: capacity, cost and warnings
as `gpufleet plan` gives them. A program that composes the parts (docs/components.md) is listed and judged by the
policy pack; its cost lists what gpufleet could not price without a GpuCluster's spec.

The components also run under Pulumi's own unit-test mocks (`pulumi.runtime.set_mocks` with a `new_resource` that
returns the inputs): outputs those mocks leave out stay unset (components/known.py). Use this module when a test
should see the values a cloud would answer.

Every run gets a fresh mock monitor and preview=False (under preview=True an `apply` on an unknown value never
runs). Inputs arrive as Pulumi's wire shape: camelCase keys, numbers as floats. docs/testing-your-program.md has
the whole story.
"""

from __future__ import annotations

import contextlib
import datetime
import os
import runpy
import sys
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Optional, Union

import yaml

from gpufleet.app.plan.engine import PROJECT, Plan, plan_program, run_program
from gpufleet.app.plan.mocks import PlanMocks, RecordingMonitor, Registration
from gpufleet.app.plan.stackfile import read_stack_file

__all__ = [
    "Plan",
    "ProgramError",
    "Registration",
    "by_type",
    "load_directory",
    "mocked",
    "mocked_id",
    "mocked_output",
    "one",
    "plan",
    "plan_directory",
    "run",
]

Program = Callable[[], object]


class ProgramError(Exception):
    """A program folder gpufleet cannot run: no Pulumi.yaml, no such stack file, no `__main__.py`. str() is one line
    naming the folder, the file and what to do."""


def run(program: Program, stack: str = "test", config: Optional[Mapping[str, Any]] = None,
        secret_keys: Iterable[str] = (), project: str = PROJECT, stack_root: bool = True) -> RecordingMonitor:
    """Run `program` (a function that declares resources) under the plan's mocks, with `config` (full keys:
    `aws:region`, `myproject:vpcId`, `gpufleet:cluster`) as the stack's config and `secret_keys` among them as secrets.
    Returns the monitor: `registrations` (type, name, parent, inputs, options, in order) and `stack_outputs`.
    stack_root=False runs it as a component provider's Construct runs: no Stack resource in this process."""
    return run_program(program, stack, dict(config or {}), secret_keys, project, stack_root)


def plan(program: Program, stack: str = "test", config: Optional[Mapping[str, Any]] = None,
         secret_keys: Iterable[str] = (), project: str = PROJECT, policies: bool = True,
         today: Optional[datetime.date] = None) -> Plan:
    """The plan of `program`, as `gpufleet plan` makes one of a stack: `resources` (sorted by URN), `capacity`, `cost`,
    `warnings`, `violations` (the policy pack's verdicts, unless policies=False) and `outputs` (the exports).
    `today`: the date support calendars and price ages are judged on (default: today, UTC). Raises
    gpufleet.base.spec.SpecError when a custom resource would be refused by its CRD, or the program's own error."""
    return plan_program(program, stack, config, secret_keys, project, policies, today)


def load_directory(directory: Union[str, Path], stack: str) -> tuple[Program, str, dict[str, Any], frozenset[str]]:
    """(program, project, config, secret keys) of a Pulumi project folder, as the Pulumi CLI would run its stack
    `stack`: Pulumi.yaml's `name` and `stackConfigDir`, the config of `Pulumi.<stack>.yaml` (keys without a namespace
    are the project's, as the CLI reads them; `secure:` values become the secret placeholder `[secret]`), and a
    program that runs the folder's `__main__.py` with the folder as working directory and first on sys.path."""
    root = Path(directory)
    project_file = root / "Pulumi.yaml"
    if not project_file.is_file():
        raise ProgramError(f"{root}: no Pulumi.yaml (a Pulumi program's folder has one; `pulumi new python` "
                           "writes one)")
    try:
        project_doc = yaml.safe_load(project_file.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ProgramError(f"{project_file}: not readable YAML ({type(exc).__name__})") from None
    if not isinstance(project_doc, dict) or not isinstance(project_doc.get("name"), str):
        raise ProgramError(f"{project_file}: needs a `name:` (the Pulumi project's name)")
    project = project_doc["name"]
    main = project_doc.get("main")
    entry = root / (main if isinstance(main, str) else "") if main else root
    entry = entry / "__main__.py" if entry.is_dir() else entry
    if not entry.is_file():
        raise ProgramError(f"{root}: no {entry.relative_to(root) if entry.is_relative_to(root) else entry} "
                           "(the Python program Pulumi runs)")
    folder = project_doc.get("stackConfigDir")
    config_dir = root / folder if isinstance(folder, str) else root
    stack_file = config_dir / f"Pulumi.{stack}.yaml"
    if not stack_file.is_file():
        found = sorted(p.name[len("Pulumi."):-len(".yaml")] for p in config_dir.glob("Pulumi.*.yaml"))
        hint = f"stacks here: {', '.join(found)}" if found else f"create it with `pulumi stack init {stack}`"
        raise ProgramError(f"{root}: no stack file {stack_file.relative_to(root)} for stack '{stack}' ({hint})")
    read = read_stack_file(stack, stack_file)
    config = {(key if ":" in key else f"{project}:{key}"): value for key, value in read.config.items()}
    secrets = frozenset(key if ":" in key else f"{project}:{key}" for key in read.secret_keys)
    entry = entry.resolve()  # the program runs in its own folder

    def program() -> None:
        with _in_folder(entry.parent):
            runpy.run_path(str(entry), run_name="__main__")

    return program, project, config, secrets


def plan_directory(directory: Union[str, Path], stack: str = "dev", policies: bool = True,
                   today: Optional[datetime.date] = None) -> Plan:
    """The plan of the Pulumi project in `directory` for its stack `stack` (`gpufleet plan --program DIR STACK`)."""
    program, project, config, secrets = load_directory(directory, stack)
    return plan_program(program, stack, config, secrets, project, policies, today)


@contextlib.contextmanager
def _in_folder(folder: Path) -> Iterator[None]:
    """The program's folder as working directory and first on sys.path (its own modules import), as `pulumi up`
    runs it; both restored after."""
    cwd, path = os.getcwd(), list(sys.path)
    os.chdir(folder)
    sys.path.insert(0, str(folder.resolve()))
    try:
        yield
    finally:
        os.chdir(cwd)
        sys.path[:] = path


def by_type(resources: Iterable[Registration], type_: str) -> list[Registration]:
    """The registrations of one type token (`aws:eks/nodeGroup:NodeGroup`), in order."""
    return [r for r in resources if r.type == type_]


def one(resources: Iterable[Registration], type_: str, name: Optional[str] = None) -> Registration:
    """The one registration of `type_` (named `name`, when given); AssertionError naming what was found otherwise."""
    found = [r for r in by_type(resources, type_) if name is None or r.name == name]
    assert len(found) == 1, f"expected one {type_} {name or ''}, found {[r.name for r in found]}"
    return found[0]


def mocked(r: Registration) -> tuple[str, dict]:
    """The id and outputs the plan's mocks gave `r`: what inputs that read `r.id` or one of its outputs hold. Ids and
    auto-names are hashes of type and name, so a test compares with this, not a literal."""
    from pulumi.runtime.mocks import MockResourceArgs

    return PlanMocks().new_resource(MockResourceArgs(r.type, r.name, dict(r.inputs), r.provider, None, r.custom))


def mocked_id(r: Registration) -> str:
    """The id the plan's mocks gave `r`."""
    return mocked(r)[0]


def mocked_output(r: Registration, key: str) -> Any:
    """One output the plan's mocks gave `r`: its `arn`, its auto-`name` (logical name and Pulumi's random suffix)..."""
    return mocked(r)[1][key]
