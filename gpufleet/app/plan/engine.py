"""Run the real Pulumi program under mocks (preview=False, a fresh monitor) and collect the plan."""

from __future__ import annotations

import datetime
import gc
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

import pulumi
import pulumi.runtime
from pulumi.runtime import settings as runtime_settings
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from gpufleet.base import catalog, gitops, platforms
from gpufleet.base.capacity import PoolCapacity, addons_warnings, capacity
from gpufleet.app.plan.cost import Cost, CostItem
from gpufleet.app.plan.cost_items import claim_items, items_for
from gpufleet.app.plan.chart_archives import charts_dir, unchecked_local_charts
from gpufleet.app.plan import kube_needs, upgrade_warnings
from gpufleet.base.spec.features import reservation_end
from gpufleet.app.plan.cr_check import check_custom_resources
from gpufleet.base.spec.checks import upkeep_checks
from gpufleet.base.spec.checks.catalog_checks import catalog_warnings, plan_day
from gpufleet.base.spec.features import dra_checks
from gpufleet.base.spec.checks import network_checks
from gpufleet.base.spec.features import image_checks
from gpufleet.app.plan.mocks import SECRET, PlanMocks, RecordingMonitor, Registration
from gpufleet.app.plan.policy_runner import Violation, evaluate
from gpufleet.app.plan.stackfile import StackFile
from gpufleet.app.program import config_value, main
from gpufleet.base.spec import Problem, SpecError, StackSpec, load_spec

PROJECT = "gpufleet"


@dataclass
class Plan:
    stack: str
    spec: Optional[StackSpec]
    """The stack's spec; None for a program that builds no GpuCluster, or several (plan_program)."""
    resources: list[Registration]
    outputs: dict
    capacity: list[PoolCapacity]
    violations: list[Violation] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)  # spec findings that do not stop a plan
    region: Optional[str] = None
    """The cloud region prices are looked up for (the platform's PricingTraits.region: `aws:region`, GKE's and AKS's own
    region); None where prices are not regional (k3s)."""
    cost: Optional[Cost] = None
    """Every hourly charge of what the plan registers (gpufleet.app.plan.cost)."""
    catalog_date: str = ""  # the oldest date of the catalog facts this stack's platform uses
    kubernetes: list = field(default_factory=list)
    """What the stack's Kubernetes minor needs from its charts and objects (gpufleet.app.plan.kube_needs Need)."""
    stack_file: dict = field(default_factory=dict)
    """What the review compares outside `gpufleet:` (StackFile.review_record): provider keys, secure-value and secrets
    settings fingerprints."""
    delegated: list = field(default_factory=list)
    """With gpufleet:gitops.engine other than pulumi: the delegated layer's objects (gpufleet.app.gitops.layer
    DelegatedObject), which `resources` leaves out and the checks and policies still judge. Empty otherwise."""

    @property
    def has_mandatory_violation(self) -> bool:
        return any(v.level == "mandatory" for v in self.violations)


def run_program(program: Callable[[], object], stack: str, config: Mapping[str, Any], secret_keys: Iterable[str] = (),
                project: str = PROJECT, stack_root: bool = True) -> RecordingMonitor:
    """Run `program` (a function that declares resources) under the plan's mocks: a fresh RecordingMonitor,
    preview=False, `config` (full keys, `gpufleet:cluster`, `aws:region`, ...) as the stack's config. Returns the
    monitor: its registrations in order, the stack's exports in `stack_outputs`. stack_root=False runs it as a
    component provider's Construct runs: no Stack resource in this process."""
    monitor = RecordingMonitor(PlanMocks())
    pulumi.runtime.set_all_config({k: config_value(v) for k, v in config.items()}, sorted(secret_keys))
    runtime_settings.ROOT.set(None)  # a fresh root Stack resource for every plan in this process
    pulumi.runtime.set_mocks(PlanMocks(), project=project, stack=stack, preview=False, monitor=monitor)
    if not stack_root:
        runtime_settings.ROOT.set(None)
    with no_source_positions():
        _sync_await(run_pulumi_func(program))
    if stack_root:
        monitor.stack_outputs = stack_exports()
    return monitor


@contextmanager
def no_source_positions():
    """The SDK's registrations without the program's stack trace, as it sends when it finds no user frame.

    For each resource the SDK walks the Python stack and turns every frame into a source position for the engine
    (pulumi/runtime/resource.py `_get_stack_trace`), which the engine shows in its diagnostics. A plan has no engine
    and records no position, and the walk was an eighth of a plan's time (cProfile over five example stacks,
    2026-12-05: 0.95 of 7.8 s). Under `pulumi up` the SDK is untouched: only a mocked run swaps the function, and
    puts it back."""
    from pulumi.runtime import resource as sdk_resource

    original = getattr(sdk_resource, "_get_stack_trace", None)
    if original is None:  # another SDK release: nothing to skip
        yield
        return
    sdk_resource._get_stack_trace = _empty_stack_trace
    try:
        yield
    finally:
        sdk_resource._get_stack_trace = original


def _empty_stack_trace():
    from pulumi.runtime.proto import source_pb2

    return source_pb2.StackTrace()


def register(stack_file: StackFile) -> tuple[StackSpec, RecordingMonitor]:
    """Validate the config (SpecError before anything registers), then run the program under mocks."""
    spec = load_spec(stack_file.stack, stack_file.config, stack_file.secret_keys)
    return spec, run_program(main, stack_file.stack, stack_file.config, stack_file.secret_keys)


@contextmanager
def collector_paused():
    """Python's cyclic garbage collector off for the block, as it was after.

    While the program runs it imports the platform's SDK modules and builds resources and outputs that live until
    the plan ends; each automatic full collection walks every object of the loaded SDKs again and finds next to
    nothing (a few thousand objects after a prod-eks plan). That was a quarter to a third of a plan's time
    (bench/plan.py). Garbage made meanwhile is collected by the next collection after the block."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def stack_exports() -> dict:
    """The program's `pulumi.export`s, secrets redacted. Under mocks the root Stack registered its
    outputs before the program ran, so they are read from the root resource itself."""
    out = {}
    for key, value in runtime_settings.get_root_resource().outputs.items():
        output = pulumi.Output.from_input(value)
        secret = _sync_await(output.is_secret())
        out[key] = SECRET if secret else _sync_await(output.future())
    return out


def plan(stack_file: StackFile, evaluate_policies: bool = True, today: Optional[datetime.date] = None) -> Plan:
    """`today`: the date support calendars and the catalog's age are judged on (default: now, UTC); tests pass one."""
    with collector_paused():
        return _plan(stack_file, evaluate_policies, today)


def _plan(stack_file: StackFile, evaluate_policies: bool, today: Optional[datetime.date]) -> Plan:
    spec, monitor = register(stack_file)
    # The objects a GitOps engine applies instead (gpufleet/base/gitops.py): judged as if Pulumi applied them.
    extra = _delegated_registrations(stack_file, spec, monitor.registrations)
    return assemble(stack_file.stack, spec, monitor, stack_file.config, evaluate_policies, today,
                    stack_file=stack_file.review_record(), delegated=extra)


def assemble(stack: str, spec: Optional[StackSpec], monitor: RecordingMonitor, config: Mapping[str, Any],
             evaluate_policies: bool, today: Optional[datetime.date], stack_file: Optional[dict] = None,
             delegated: Sequence[Registration] = ()) -> Plan:
    """The plan of what `monitor` recorded: custom resources checked, capacity, cost, warnings and policy verdicts.
    `spec` None: a program that builds no GpuCluster (or several), judged by its resources alone (program_cost).
    `delegated`: what a GitOps engine applies instead of Pulumi, checked and judged as if Pulumi applied it."""
    extra = list(delegated)
    # Custom resources the API server would refuse at `pulumi up` (CRD schema and CEL rules) are stack problems; those
    # this machine cannot check (no chart archive here, a CRD only the platform installs) are warnings.
    problems, cr_warnings = check_custom_resources(stack, spec, monitor.registrations + extra, charts_dir())
    if problems:
        raise SpecError(stack, problems)
    resources = sorted(monitor.registrations, key=lambda r: r.urn)
    if spec is None:
        result = Plan(stack=stack, spec=None, resources=resources, outputs=monitor.stack_outputs, capacity=[],
                      warnings=cr_warnings + upgrade_warnings.crds_not_applied(stack, monitor.registrations)
                      + upgrade_warnings.crds_deleted_on_uninstall(stack, monitor.registrations),
                      stack_file=stack_file or {})
        result.cost = program_cost(resources)
    else:
        day = plan_day(today)  # one date for support calendars, the catalog's age and price ages
        needs = kube_needs.kubernetes_needs(spec, monitor.registrations, charts_dir())
        pricing = platforms.of(spec).pricing
        region = pricing.region(spec, dict(config))  # where the cluster runs, for regional prices
        result = Plan(
            stack=stack,
            spec=spec,
            resources=resources,
            outputs=monitor.stack_outputs,
            capacity=capacity(spec, region),
            warnings=addons_warnings(stack, spec) + catalog_warnings(stack, spec, day)
            + upkeep_checks.warnings(stack, spec) + dra_checks.warnings(stack, spec)
            + network_checks.warnings(stack, spec) + image_checks.warnings(stack, spec) + cr_warnings
            + unchecked_local_charts(stack, spec, monitor.registrations)
            + upgrade_warnings.crds_not_applied(stack, monitor.registrations)
            + upgrade_warnings.crds_deleted_on_uninstall(stack, monitor.registrations)
            + reservation_end.warnings(stack, spec, day)
            + kube_needs.warnings(stack, spec, needs),
            kubernetes=needs,
            catalog_date=catalog.catalog_date(pricing.catalog_files),
            region=region,
            stack_file=stack_file or {},
        )
        result.cost = items_for(spec, result.resources, result.capacity, result.region, today=day)
    if extra:
        from gpufleet.app.gitops.layer import objects

        result.delegated = objects(stack, extra)
    if evaluate_policies:
        result.violations = evaluate(result.resources + extra, stack=stack)
    return result


def plan_program(program: Callable[[], object], stack: str = "dev", config: Optional[Mapping[str, Any]] = None,
                 secret_keys: Iterable[str] = (), project: str = PROJECT, evaluate_policies: bool = True,
                 today: Optional[datetime.date] = None) -> Plan:
    """The plan of a Pulumi program that is not gpufleet's stack program (a user's own `__main__`): run under the
    same mocks, its resources checked, priced and judged by the same code. A program that builds one GpuCluster is
    planned as a stack with that cluster's spec would be (capacity, cost, warnings); otherwise its resources are
    listed and judged, and the cost says what it could not price."""
    from gpufleet.components.gpu_cluster import BUILT

    config = dict(config or {})
    built: list = []
    token = BUILT.set(built)
    try:
        with collector_paused():
            monitor = run_program(program, stack, config, secret_keys, project)
    finally:
        BUILT.reset(token)
    spec = built[0][1] if len(built) == 1 else None
    with collector_paused():
        return assemble(stack, spec, monitor, config, evaluate_policies, today)


def program_cost(resources: list[Registration]) -> Cost:
    """What a program without one GpuCluster costs, as far as gpufleet can tell without a spec: storage claims, and
    one unpriced item that says why the rest is not priced (the totals then read "at least", never a silent zero)."""
    items = claim_items(resources, None)
    items.append(CostItem("the program's cloud resources", "overhead", 1, 1, None,
                          "not priced: gpufleet prices a cluster from a GpuCluster's spec, and this program builds "
                          "no GpuCluster (or several); plan a GpuCluster, or price the parts yourself"))
    return Cost(items=items, notes=["usage-billed charges are not in these figures"])


def _delegated_registrations(stack_file: StackFile, spec: StackSpec, kept: list[Registration]) -> list[Registration]:
    """What the `pulumi` path would register beyond `kept`, for a stack whose GitOps engine applies it; else none."""
    if not gitops.delegates(spec):
        return []
    from gpufleet.app.gitops.layer import as_engine

    _, monitor = register(as_engine(stack_file, gitops.PULUMI))
    urns = {r.urn for r in kept}
    return [r for r in monitor.registrations if r.urn not in urns]
