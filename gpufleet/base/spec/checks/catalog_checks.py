"""Checks of a stack against the catalog's availability, sale-option and lifecycle facts (issue 12).

Errors (`catalog_problems`, part of the spec's cross checks, exit 2):
- a GKE pool of a machine type Compute Engine does not sell on-demand, with `capacity: on-demand`
  (a3-highgpu-1g/2g/4g: spot or flex-start only): the error names the options that exist;
- a pool in a zone (GKE) or region (EKS) whose recorded offerings do not include its type: the error names
  the zones/regions that do. Only recorded locations are judged (gpufleet/base/catalog/offerings.py); EKS is
  judged per region, since AZ names differ per AWS account (aws_offerings.yaml explains).

Warnings (`catalog_warnings`, printed by the plan): a CUDA version that runs only through minor-version
compatibility (naming what breaks), a driver or CUDA version the catalog cannot compare (said, never skipped), every
lifecycle finding of gpufleet/base/spec/checks/lifecycle_checks.py (Kubernetes, GPU Operator, driver branch: past or near
the end of support, with what extended support costs), A3 Ultra / A4 on-demand without a specific reservation, and a
catalog older than 90 days.
"""

from __future__ import annotations

import datetime as dt
import os
from typing import Any, Optional

from gpufleet.base import catalog, platforms
from gpufleet.base.catalog import aws as aws_catalog
from gpufleet.base.catalog import gcp, offerings

from gpufleet.base.spec.errors import Problem, SpecError
from gpufleet.base.spec.platforms.gke import driver_branch_for
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


def _pool_types(pool: Any) -> list[str]:
    return [pool.instance_type] if pool.instance_type else list(pool.instance_types or [])


def catalog_problems(stack: str, spec: Any, config: Optional[dict] = None) -> list[Problem]:
    platform = spec.cluster.platform
    if platform == "gke":
        return _gke_problems(stack, spec)
    if platform == "eks":
        return _eks_problems(stack, spec, (config or {}).get("aws:region"))
    return []


def _gke_problems(stack: str, spec: Any) -> list[Problem]:
    out: list[Problem] = []
    gke = spec.cluster.gke
    for i, pool in enumerate(spec.node_pools):
        machine = gcp.machines().get(pool.machine_type or "")
        at = f"{NAMESPACE}:nodePools[{i}]"
        if machine and pool.capacity == "on-demand" and not machine.sold_on_demand and not machine.on_demand_needs_reservation:
            out.append(Problem(
                stack, f"{at}.capacity",
                f"{machine.name} is not sold on-demand (Compute Engine sells it as: {', '.join(machine.sale_options)}); "
                f"use capacity: spot" + (", or flex-start provisioning" if "flex-start" in machine.sale_options else ""),
                pool.capacity,
            ))
        if not pool.machine_type:
            continue
        accelerator = machine.accelerator if machine else None
        zones = list((pool.gke.zones if pool.gke else None) or gke.node_zones or ([gke.zone] if gke.zone else []))
        for zone in zones:
            if offerings.gcp_offered_in_zone(pool.machine_type, zone, accelerator) is False:
                where = offerings.gcp_zones_offering(pool.machine_type, accelerator)
                near = [z for z in where if z.startswith(gke.region + "-")]
                listed = ", ".join(near or where) or "none recorded"
                scope = f"zones in {gke.region} that offer it" if near else "zones that offer it"
                out.append(Problem(
                    stack, f"{at}.gke.zones" if pool.gke and pool.gke.zones else f"{NAMESPACE}:cluster.gke.nodeZones",
                    f"{pool.machine_type}{' with ' + accelerator if accelerator else ''} is not offered in {zone} "
                    f"({offerings.provenance('gcp', zone)}; {scope}: {listed})",
                    zone,
                ))
    return out


def _eks_problems(stack: str, spec: Any, region: Optional[str]) -> list[Problem]:
    if not region:
        return []
    out: list[Problem] = []
    for i, pool in enumerate(spec.node_pools):
        types = _pool_types(pool)
        for j, name in enumerate(types):
            if offerings.aws_offered_in_region(name, region) is False:
                key = "instanceType" if pool.instance_type else f"instanceTypes[{j}]"
                where = offerings.aws_regions_offering(name)
                out.append(Problem(
                    stack, f"{NAMESPACE}:nodePools[{i}].{key}",
                    f"{name} is not offered in {region} ({offerings.provenance('aws', region)}; regions that offer it: "
                    f"{', '.join(where) or 'none recorded'})",
                    name,
                ))
    return out


def catalog_warnings(stack: str, spec: Any, today: Optional[dt.date] = None) -> list[Problem]:
    day = plan_day(today)
    out = (_cuda_warnings(stack, spec) + _unknown_gke_driver_warnings(stack, spec)
           + lifecycle_warnings(stack, spec, day, _drivers) + _reservation_warnings(stack, spec))
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


def _drivers(spec: Any) -> list[tuple[str, str]]:
    """(what, driver version) of the drivers the stack's GPU nodes run, where the catalog knows them."""
    platform = spec.cluster.platform
    found: list[tuple[str, str]] = []
    if platform == "eks":
        for ami in sorted({p.ami for p in spec.node_pools if getattr(p, "ami", None)}):
            found.append((f"the {ami} AMI's driver {aws_catalog.ami(ami).driver_floor}", aws_catalog.ami(ami).driver_floor))
        return found
    if platform == "gke" and spec.cluster.gke.gpu_stack == "gke":
        for pool in spec.node_pools:
            branch = driver_branch_for(spec, pool)
            if branch is not None:
                version = gcp.gke_driver_floor(branch)
                found.append((f"pool '{pool.name}': GKE's driver {version} (branch {branch})", version))
        return found
    version = spec.gpu_operator.driver_version()
    if version:
        found.append((f"the GPU nodes' driver {version}", version))
    return found


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


def _unknown_gke_driver_warnings(stack: str, spec: Any) -> list[Problem]:
    """GKE's driver on a GKE version whose DEFAULT/LATEST branch the catalog does not record: neither CUDA alignment
    nor the driver branch's support calendar can be judged (said, not guessed)."""
    if spec.cluster.platform != "gke" or spec.cluster.gke.gpu_stack != "gke":
        return []
    out = []
    version = spec.cluster.kubernetes_version
    for i, pool in enumerate(spec.node_pools):
        if driver_branch_for(spec, pool) is None:
            choice = pool.gke.gpu_driver_version if pool.gke else "DEFAULT"
            out.append(Problem(
                stack, f"{NAMESPACE}:nodePools[{i}].gke.gpuDriverVersion",
                f"the catalog does not record which driver branch GKE {version} installs for {choice} "
                "(gcp_machines.yaml gke_driver_branches), so neither workloads.cudaVersions nor the branch's support "
                "calendar is checked against it",
                choice,
            ))
    return out


def _reservation_warnings(stack: str, spec: Any) -> list[Problem]:
    if spec.cluster.platform != "gke":
        return []
    out: list[Problem] = []
    for i, pool in enumerate(spec.node_pools):
        machine = gcp.machines().get(pool.machine_type or "")
        if not machine or pool.capacity != "on-demand" or not machine.on_demand_needs_reservation:
            continue
        reservation = pool.gke.reservation if pool.gke else None
        if reservation is None or reservation.type != "specific":
            out.append(Problem(
                stack, f"{NAMESPACE}:nodePools[{i}].capacity",
                f"{machine.name} is normally sold through reservations, flex-start or spot "
                f"({', '.join(machine.sale_options)}), not plain on-demand: name a specific reservation "
                "(gke.reservation) or use capacity: spot",
                pool.capacity,
            ))
    return out
