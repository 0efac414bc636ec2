"""Lifecycle warnings (issue 32): every versioned component a stack runs, judged against its support calendar on a
date (`today`, injectable; default: now, UTC).

- Kubernetes, by the platform's own calendar (VersionTraits.kubernetes_warnings, gpufleet/base/platforms/<name>/
  versions.py): on EKS and GKE (catalog kubernetes.yaml, `calendar_warnings` here) past standard support, or leaving
  it within SUPPORT_WARNING_DAYS, with what extended support costs there; on AKS community and long-term support;
  on k3s upstream Kubernetes' end of life for the minor (catalog lifecycle.yaml); none on an existing cluster;
- node images the platform pins, older than its threshold (VersionTraits.node_image_warnings: EKS AMI releases);
- the NVIDIA GPU Operator release (deprecated or end of support per NVIDIA's life-cycle policy);
- the NVIDIA driver branch GPU nodes run (end of life per NVIDIA's data center driver table), as the platform reads it
  (VersionTraits.node_drivers): the operator's or the hosts' driver, GKE's branch for the pool, or the driver of the
  AMI release an EKS pool runs (its amiRelease, else gpufleet's pin), each at the key where its fix goes.

A version missing from a recorded calendar is warned about as unknown, never skipped silently. Components whose
upstream publishes no calendar (AMD GPU Operator, Helm charts) are recorded as such in lifecycle.yaml and not warned
about.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Callable

from gpufleet.base import platforms
from gpufleet.base.catalog import lifecycle
from gpufleet.base.spec.features.amd_operator import is_amd
from gpufleet.base.spec.errors import Problem

NAMESPACE = "gpufleet"
# Warn this many days before standard support ends. gpufleet's own choice, not a vendor rule: a quarter, time to plan,
# test and roll out one minor upgrade of the cluster or of the GPU stack before the date.
SUPPORT_WARNING_DAYS = 90


def lifecycle_warnings(stack: str, spec: Any, day: dt.date,
                       drivers: Callable[[Any], list[tuple[str, str]]]) -> list[Problem]:
    """Warnings for the stack's components on `day`. `drivers(spec)` lists (what, driver version) of the GPU nodes."""
    traits = platforms.of(spec).versions
    return (traits.kubernetes_warnings(stack, spec, day) + traits.node_image_warnings(stack, spec, day)
            + _gpu_operator(stack, spec) + _driver_branches(stack, spec, day, drivers(spec)))


def ending(days: int) -> str:
    return f"in {days} day{'s' if days != 1 else ''}"


def calendar_warnings(stack: str, spec: Any, day: dt.date, cloud: str,
                      lookup: Callable[[str, dt.date], Any], cost: str) -> list[Problem]:
    """A cloud's Kubernetes minor against its calendar (catalog kubernetes.yaml, `lookup`: the cloud's
    `catalog.<cloud>_kubernetes_version`): past standard support, or leaving it within SUPPORT_WARNING_DAYS, with
    what extended support costs there (`cost`, from the platform's versions traits)."""
    version = spec.cluster.kubernetes_version
    at = f"{NAMESPACE}:cluster.kubernetesVersion"
    try:
        facts = lookup(version, day)
    except KeyError:
        return [Problem(stack, at, f"{cloud} {version} is not in the catalog's support calendar "
                                   "(gpufleet/base/catalog/kubernetes.yaml): its end of standard support is not checked", version)]
    if facts.status == "standard":
        end = facts.end_of_standard_support
        if end is None:
            return []
        days = (dt.date.fromisoformat(end) - day).days
        if days > SUPPORT_WARNING_DAYS:
            return []
        return [Problem(stack, at, f"{cloud} {version} leaves standard support {ending(days)} ({end}; "
                                   f"{', '.join(facts.sources)}){cost}: upgrade before then", version)]
    since = f" since {facts.end_of_standard_support}" if facts.end_of_standard_support else ""
    if facts.status == "unsupported":  # past extended support too, or a cloud without it
        ended = f" (since {facts.end_of_extended_support})" if facts.end_of_extended_support else ""
        return [Problem(stack, at, f"{cloud} {version} is past standard support{since} and out of support{ended}: "
                                   f"{', '.join(facts.sources)}; upgrade to a version in standard support", version)]
    until = f" until {facts.end_of_extended_support}" if facts.end_of_extended_support else ""
    return [Problem(stack, at, f"{cloud} {version} is past standard support{since} ({facts.status} support"
                               f"{until}{cost}); upgrade to a version in standard support", version)]


def support_warnings(stack: str, at: str, support: lifecycle.Support, day: dt.date, value: str, fix: str) -> list[Problem]:
    """A warning for a component past, or within SUPPORT_WARNING_DAYS of, the end of its support; or unknown."""
    if support.status == "unknown":
        return [Problem(stack, at, f"{support.component}: no support calendar entry ({support.source}), so the end of "
                                   "its support is not checked", value)]
    if support.status == "end_of_support":
        return [Problem(stack, at, f"{support.component} is past the end of its support ({support.source}); {fix}", value)]
    if support.status == "deprecated":
        return [Problem(stack, at, f"{support.component} is deprecated: critical bug and CVE fixes only until the next "
                                   f"major is released, then end of support ({support.source}); {fix}", value)]
    days = support.days_left(day)
    if days is None or days > SUPPORT_WARNING_DAYS:
        return []
    if days < 0:
        return [Problem(stack, at, f"{support.component} reached the end of its support on {support.end} "
                                   f"({support.source}); {fix}", value)]
    return [Problem(stack, at, f"{support.component} reaches the end of its support {ending(days)} ({support.end}; "
                               f"{support.source}); {fix}", value)]


def _gpu_operator(stack: str, spec: Any) -> list[Problem]:
    if platforms.of(spec).addons.own_gpu_stack(spec) is not None:
        return []  # the platform's own GPU stack (GKE's): no GPU Operator runs
    if spec.node_pools and all(is_amd(getattr(p, "gpu", None)) for p in spec.node_pools):
        return []  # AMD pools only: the NVIDIA GPU Operator is not installed
    version = spec.gpu_operator.version
    return support_warnings(stack, f"{NAMESPACE}:gpuOperator.version", lifecycle.gpu_operator(version), dt.date.min, version,
                    "move to a supported release (gpuOperator.version)")


def _driver_branches(stack: str, spec: Any, day: dt.date, drivers: list[tuple[str, str]]) -> list[Problem]:
    """Each driver the platform says its GPU nodes run (VersionTraits.node_drivers: by default `drivers` at
    `driver_key`; on EKS each pool's AMI release), at the key where its fix goes."""
    out: list[Problem] = []
    for driver in platforms.of(spec).versions.node_drivers(spec, drivers):
        branch = driver.version.split(".")[0]
        if not branch.isdigit():
            continue
        out += support_warnings(stack, f"{NAMESPACE}:{driver.at}", lifecycle.driver_branch(int(branch)), day,
                                driver.value, driver.fix)
    return out
