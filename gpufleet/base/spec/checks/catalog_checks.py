"""Checks of a stack against the catalog's availability, sale-option and lifecycle facts (issue 12).

Errors (`check`, part of the spec's cross checks, exit 2): the platform's scheduling trait
`catalog_problems` (gpufleet/base/platforms/<name>/scheduling.py):
- a GKE pool of a machine type Compute Engine does not sell on-demand, with `capacity: on-demand`
  (a3-highgpu-1g/2g/4g: spot or flex-start only): the error names the options that exist;
- a pool in a zone (GKE) or region (EKS) whose recorded offerings do not include its type: the error names
  the zones/regions that do. Only recorded locations are judged (gpufleet/base/catalog/offerings.py); EKS is
  judged per region, since AZ names differ per AWS account (aws_offerings.yaml explains).

Warnings (`catalog_warnings`, printed by the plan): a CUDA version that runs only through minor-version
compatibility (naming what breaks), a driver or CUDA version the catalog cannot compare (said, never skipped; a
platform-installed driver: the platform's `driver_warnings`), every lifecycle finding of
gpufleet/base/spec/checks/lifecycle_checks.py (Kubernetes, GPU Operator, driver branch: past or near the end of
support, with what extended support costs), capacity the platform normally sells otherwise (its `capacity_warnings`:
A3 Ultra / A4 on-demand without a specific reservation), and a catalog older than 90 days.
"""

from __future__ import annotations

import datetime as dt
import os
from typing import Any, Optional

from gpufleet.base import catalog, platforms
from gpufleet.base.spec.errors import Problem, SpecError
from gpufleet.base.spec.checks.lifecycle_checks import lifecycle_warnings

NAMESPACE = "gpufleet"
STALE_AFTER_DAYS = 90


# The date plans judge support calendars and the catalog's age on, when none is passed: reproducible plans in CI and
# tests (tests/conftest.py pins it), like SOURCE_DATE_EPOCH for builds. Unset: today, UTC.
TODAY_ENV = "GPUFLEET_TODAY"


def plan_day(today: Optional[dt.date] = None) -> dt.date:
    """The date a plan judges calendars and price ages on: `today` if given, else GPUFLEET_TODAY, else now (UTC)."""
    if today:
        return today
    pinned = os.environ.get(TODAY_ENV)
    if pinned:
        try:
            return dt.date.fromisoformat(pinned)
        except ValueError:
            raise SpecError("environment", [Problem("environment", TODAY_ENV, "not a date; write it as YYYY-MM-DD "
                                                                          "(e.g. 2027-01-31), or unset it for today", pinned)])
    return dt.datetime.now(dt.timezone.utc).date()


def check(stack: str, spec: Any, config: Optional[dict] = None) -> list[Problem]:
    """The pools' cloud shapes against the catalog's offerings and sale options (the platform's `catalog_problems`)."""
    return platforms.of(spec).scheduling.catalog_problems(stack, spec, config or {})


def catalog_warnings(stack: str, spec: Any, today: Optional[dt.date] = None) -> list[Problem]:
    day = plan_day(today)
    traits = platforms.of(spec).scheduling
    out = (_cuda_warnings(stack, spec) + traits.driver_warnings(stack, spec)
           + lifecycle_warnings(stack, spec, day, _drivers) + traits.capacity_warnings(stack, spec)
           + stack_shape_warnings(stack, spec))
    date = catalog.catalog_date(platforms.of(spec).pricing.catalog_files)
    age = (day - dt.date.fromisoformat(date)).days
    if age > STALE_AFTER_DAYS:
        files = ", ".join(f"{f} {d}" for f, d in catalog.catalog_dates(platforms.of(spec).pricing.catalog_files).items())
        out.append(Problem(
            stack, "catalog",
            f"the catalog's facts are {age} days old (over {STALE_AFTER_DAYS}: prices and offerings drift; {files}); "
            "refresh them with `gpufleet catalog refresh`",
            date,
        ))
    return out


def stack_shape_warnings(stack: str, spec: Any) -> list[Problem]:
    """A pool whose cloud shape (instance or machine type) the catalog lacks, planned with the GPU model, count and
    price the stack gives (`gpu`, `gpusPerNode`, `pricePerNodeHour`; the platform's key checks accept them only then):
    said, since nothing checked those facts against a source (issue 49)."""
    traits = platforms.of(spec)
    if traits.scheduling.machine_key == "gpu":  # the stack always states the GPU there (k3s, existing)
        return []
    out = []
    for i, pool in enumerate(spec.node_pools):
        machine = traits.scheduling.nvlink_machine(pool)
        if not machine or pool.gpu is None or not traits.nodes.uncatalogued(pool):
            continue
        price = (f"pricePerNodeHour {pool.price_per_node_hour:g}" if pool.price_per_node_hour is not None
                 else "no price: the pool is listed unpriced")
        out.append(Problem(stack, f"{NAMESPACE}:nodePools[{i}].{traits.scheduling.machine_key}",
                           f"{machine} is not in gpufleet's catalog: pool '{pool.name}' is planned with the facts the stack "
                           f"gives ({pool.gpus_per_node} x {pool.gpu}, {price}), which no source confirms; "
                           f"{traits.nodes.stack_shape_unknowns}", machine))
    return out


def _drivers(spec: Any) -> list[tuple[str, str]]:
    """(what, driver version) of the drivers the stack's GPU nodes run, where the catalog knows them: the platform's
    (`catalog_drivers`: an EKS AMI's, GKE's own installation's), else the GPU Operator's."""
    found = platforms.of(spec).scheduling.catalog_drivers(spec)
    if found is not None:
        return found
    version = spec.gpu_operator.driver_version()
    return [(f"the GPU nodes' driver {version}", version)] if version else []


def _cuda_warnings(stack: str, spec: Any) -> list[Problem]:
    out: list[Problem] = []
    for what, version in _drivers(spec):
        for j, cuda in enumerate(spec.workloads.cuda_versions):
            try:
                support = catalog.cuda_support(version, cuda)
            except ValueError as exc:
                out.append(Problem(stack, f"{NAMESPACE}:workloads.cudaVersions[{j}]", f"{what} cannot be checked against "
                                   f"CUDA {cuda} ({exc}): the catalog has no row to compare them", cuda))
                continue
            if support.limited:
                out.append(Problem(stack, f"{NAMESPACE}:workloads.cudaVersions[{j}]", f"{what} passes for CUDA {cuda} only by "
                                   f"minor-version compatibility: {support.why}", cuda))
    return out
