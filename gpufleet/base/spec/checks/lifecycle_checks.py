"""Lifecycle warnings (issue 32): every versioned component a stack runs, judged against its support calendar on a
date (`today`, injectable; default: now, UTC).

- Kubernetes on EKS and GKE (catalog kubernetes.yaml): past standard support, or leaving it within
  SUPPORT_WARNING_DAYS, with what extended support costs there (EKS: the extended cluster-hour price; GKE: the
  Extended channel's fee, or GKE's upgrade on the other channels);
- k3s (catalog lifecycle.yaml): upstream Kubernetes' end of life for the minor;
- the NVIDIA GPU Operator release (deprecated or end of support per NVIDIA's life-cycle policy);
- the NVIDIA driver branch GPU nodes run (end of life per NVIDIA's data center driver table): the operator's or the
  hosts' driver, or GKE's branch for the pool; not an EKS AMI's (the catalog records only a floor of its driver).

A version missing from a recorded calendar is warned about as unknown, never skipped silently. Components whose
upstream publishes no calendar (AMD GPU Operator, Helm charts) are recorded as such in lifecycle.yaml and not warned
about.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Callable

from gpufleet.base import catalog
from gpufleet.base.catalog import charges
from gpufleet.base.catalog import kubernetes as k8s_catalog
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
    return (_kubernetes(stack, spec, day) + _gpu_operator(stack, spec)
            + _driver_branches(stack, spec, day, drivers(spec)))


def _ending(days: int) -> str:
    return f"in {days} day{'s' if days != 1 else ''}"


def _kubernetes(stack: str, spec: Any, day: dt.date) -> list[Problem]:
    platform, version = spec.cluster.platform, spec.cluster.kubernetes_version
    at = f"{NAMESPACE}:cluster.kubernetesVersion"
    if platform == "k3s":
        return _support(stack, at, lifecycle.k3s_minor(version), day, version, "upgrade to a newer k3s minor")
    if platform == "aks":
        return _aks_kubernetes(stack, spec, day, at)
    if platform == "existing":
        return []  # the cluster's provider keeps its own support calendar; the catalog has none for it
    try:
        facts = (catalog.eks_kubernetes_version if platform == "eks" else catalog.gke_kubernetes_version)(version, day)
    except KeyError:
        return [Problem(stack, at, f"{platform.upper()} {version} is not in the catalog's support calendar "
                                   "(gpufleet/base/catalog/kubernetes.yaml): its end of standard support is not checked", version)]
    cost = _extended_cost(platform, spec)
    if facts.status == "standard":
        end = facts.end_of_standard_support
        if end is None:
            return []
        days = (dt.date.fromisoformat(end) - day).days
        if days > SUPPORT_WARNING_DAYS:
            return []
        return [Problem(stack, at, f"{platform.upper()} {version} leaves standard support {_ending(days)} ({end}; "
                                   f"{', '.join(facts.sources)}){cost}: upgrade before then", version)]
    until = f" until {facts.end_of_extended_support}" if facts.end_of_extended_support else ""
    since = f" since {facts.end_of_standard_support}" if facts.end_of_standard_support else ""
    return [Problem(stack, at, f"{platform.upper()} {version} is past standard support{since} ({facts.status} support"
                               f"{until}{cost}); upgrade to a version in standard support", version)]


def _aks_kubernetes(stack: str, spec: Any, day: dt.date, at: str) -> list[Problem]:
    """AKS: community support ends at the minor's end of life; with long-term support (Premium tier, AKSLongTermSupport)
    the LTS end of life follows. A version past both is refused by gpufleet/base/spec/platforms/aks_checks.py; here, a warning
    within SUPPORT_WARNING_DAYS of the end that applies, and one while the cluster runs on LTS."""
    aks, version = spec.cluster.aks, spec.cluster.kubernetes_version
    lts = aks.support_plan == "AKSLongTermSupport"
    try:
        facts = catalog.aks_kubernetes_version(version, day, lts=lts)
    except KeyError:
        return [Problem(stack, at, f"AKS {version} is not in the catalog's support calendar "
                                   "(gpufleet/base/catalog/kubernetes.yaml): its end of support is not checked", version)]
    if facts.status == "unsupported":
        return []
    if facts.status == "extended":
        end = facts.end_of_extended_support
        days = (dt.date.fromisoformat(end) - day).days
        return [Problem(stack, at, f"AKS {version} is past community support since {facts.end_of_standard_support} and runs "
                                   f"on long-term support until {end} ({_ending(days)}; {', '.join(facts.sources)}): the "
                                   "Premium tier's fee applies; upgrade before then", version)]
    end = facts.end_of_standard_support
    days = (dt.date.fromisoformat(end) - day).days
    if days > SUPPORT_WARNING_DAYS:
        return []
    after = ("long-term support follows (Premium tier)" if lts else "without long-term support (Premium tier, supportPlan "
             "AKSLongTermSupport) AKS then gives it platform support only")
    return [Problem(stack, at, f"AKS {version} leaves community support {_ending(days)} ({end}; {', '.join(facts.sources)}); "
                               f"{after}: upgrade before then", version)]


def _extended_cost(platform: str, spec: Any) -> str:
    if platform == "eks":
        return (f"; in extended support the control plane costs USD {k8s_catalog.eks_cluster_hourly_price('extended'):.2f} "
                f"per cluster-hour instead of {k8s_catalog.eks_cluster_hourly_price('standard'):.2f}")
    channel = spec.cluster.gke.release_channel
    extended = f"USD {charges.gke_extended_hourly():.2f} per cluster-hour instead of {charges.gke_cluster_fee().value:.2f}"
    if channel == "EXTENDED":
        return f"; in extended support the cluster management fee is {extended} (Extended channel)"
    return (f"; on the {channel} channel GKE upgrades the cluster at the end of standard support (only the Extended "
            f"channel keeps the minor, at {extended})")


def _support(stack: str, at: str, support: lifecycle.Support, day: dt.date, value: str, fix: str) -> list[Problem]:
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
    return [Problem(stack, at, f"{support.component} reaches the end of its support {_ending(days)} ({support.end}; "
                               f"{support.source}); {fix}", value)]


def _gpu_operator(stack: str, spec: Any) -> list[Problem]:
    if spec.cluster.platform == "gke" and spec.cluster.gke.gpu_stack == "gke":
        return []  # GKE's own GPU stack: no GPU Operator runs
    if spec.node_pools and all(is_amd(getattr(p, "gpu", None)) for p in spec.node_pools):
        return []  # AMD pools only: the NVIDIA GPU Operator is not installed
    version = spec.gpu_operator.version
    return _support(stack, f"{NAMESPACE}:gpuOperator.version", lifecycle.gpu_operator(version), dt.date.min, version,
                    "move to a supported release (gpuOperator.version)")


def _driver_branches(stack: str, spec: Any, day: dt.date, drivers: list[tuple[str, str]]) -> list[Problem]:
    if spec.cluster.platform == "eks":
        # An EKS GPU AMI's catalog driver is a floor (aws_instances.yaml amis), not the branch the AMI ships: AWS moves
        # the AMI's driver branch itself, so judging the floor's branch would warn about a driver the nodes may not run.
        return []
    out: list[Problem] = []
    seen: set[str] = set()
    for what, version in drivers:
        branch = version.split(".")[0]
        if branch in seen or not branch.isdigit():
            continue
        seen.add(branch)
        out += _support(stack, _driver_path(spec), lifecycle.driver_branch(int(branch)), day, version,
                        f"{what}: move to a supported driver branch")
    return out


def _driver_path(spec: Any) -> str:
    """Where the stack chooses the driver its GPU nodes run (as catalog_checks._drivers finds it)."""
    if spec.cluster.platform == "gke" and spec.cluster.gke.gpu_stack == "gke":
        return f"{NAMESPACE}:nodePools[*].gke.gpuDriverVersion"
    return f"{NAMESPACE}:gpuOperator.driver.version"
