"""Run the real Pulumi program under mocks (preview=False, a fresh monitor) and collect the plan."""

from __future__ import annotations

import datetime
import gc
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Optional

import pulumi
import pulumi.runtime
from pulumi.runtime import settings as runtime_settings
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from gpufleet.base import catalog, platforms
from gpufleet.base.capacity import PoolCapacity, addons_warnings, capacity
from gpufleet.app.plan.cost import Cost
from gpufleet.app.plan.cost_items import items_for
from gpufleet.app.plan.chart_archives import charts_dir, unchecked_local_charts
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
    spec: StackSpec
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
    stack_file: dict = field(default_factory=dict)
    """What the review compares outside `gpufleet:` (StackFile.review_record): provider keys, secure-value and secrets
    settings fingerprints."""

    @property
    def has_mandatory_violation(self) -> bool:
        return any(v.level == "mandatory" for v in self.violations)


def register(stack_file: StackFile) -> tuple[StackSpec, RecordingMonitor]:
    """Validate the config (SpecError before anything registers), then run the program under mocks."""
    spec = load_spec(stack_file.stack, stack_file.config, stack_file.secret_keys)

    monitor = RecordingMonitor(PlanMocks())
    pulumi.runtime.set_all_config(
        {k: config_value(v) for k, v in stack_file.config.items()}, sorted(stack_file.secret_keys)
    )
    runtime_settings.ROOT.set(None)  # a fresh root Stack resource for every plan in this process
    pulumi.runtime.set_mocks(PlanMocks(), project=PROJECT, stack=stack_file.stack, preview=False, monitor=monitor)
    _sync_await(run_pulumi_func(main))
    monitor.stack_outputs = stack_exports()
    return spec, monitor


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
    # Custom resources the API server would refuse at `pulumi up` (CRD schema and CEL rules) are stack problems; those
    # this machine cannot check (no chart archive here, a CRD only the platform installs) are warnings.
    problems, cr_warnings = check_custom_resources(stack_file.stack, spec, monitor.registrations, charts_dir())
    if problems:
        raise SpecError(stack_file.stack, problems)
    day = plan_day(today)  # one date for support calendars, the catalog's age and price ages
    pricing = platforms.of(spec).pricing
    region = pricing.region(spec, stack_file.config)  # where the cluster runs, for regional prices
    result = Plan(
        stack=stack_file.stack,
        spec=spec,
        resources=sorted(monitor.registrations, key=lambda r: r.urn),
        outputs=monitor.stack_outputs,
        capacity=capacity(spec, region),
        warnings=addons_warnings(stack_file.stack, spec) + catalog_warnings(stack_file.stack, spec, day)
        + upkeep_checks.warnings(stack_file.stack, spec) + dra_checks.warnings(stack_file.stack, spec)
        + network_checks.warnings(stack_file.stack, spec) + image_checks.warnings(stack_file.stack, spec) + cr_warnings
        + unchecked_local_charts(stack_file.stack, spec, monitor.registrations),
        catalog_date=catalog.catalog_date(pricing.catalog_files),
        region=region,
        stack_file=stack_file.review_record(),
    )
    result.cost = items_for(spec, result.resources, result.capacity, result.region, today=day)
    if evaluate_policies:
        result.violations = evaluate(result.resources, stack=stack_file.stack)
    return result
