"""Checks of Kueue Topology Aware Scheduling (`gpufleet:addons.kueue.topology`, `queues[].topology`).

Errors (exit 2): a TAS pool whose machines carry no topology labels (the platform's `topology_problems`: EKS instance
types EC2 gives no topology, k3s hosts without a declared rack), a level no node label of the pool provides, a Kueue
pin without TAS on by default, and a required topology larger than any domain of that level in the pool. Warnings: the
platform's `topology_warnings` (GKE machine families Google does not document the labels for, and GKE TAS pools
outside a reservation: Google says TAS works best on reserved capacity).
Facts and sources: gpufleet/base/catalog/topology.yaml."""

from __future__ import annotations

from typing import Any

from gpufleet.base import platforms, versions
from gpufleet.base.catalog import topology as facts
from gpufleet.base.spec.features import topology as tas
from gpufleet.base.spec.errors import Problem

NS = "gpufleet"
AT = f"{NS}:addons.kueue.topology"


def _minor(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.removeprefix("v").split(".")[:2])


def kueue_version_problems(stack: str, version: str) -> list[Problem]:
    """TopologyAwareScheduling is beta and on by default from Kueue 0.14 (alpha, off, from 0.9)."""
    if _minor(version) >= _minor(facts.kueue_tas_beta()):
        return []
    return [Problem(stack, AT, f"Kueue {version} schedules without topology (TopologyAwareScheduling is on by default "
                    f"from {facts.kueue_tas_beta()}; before that an alpha feature gate, off): pin kueue "
                    f">= {facts.kueue_tas_beta()} in gpufleet/base/versions.py (KUEUE)", version)]


def check(stack: str, spec: Any, kueue_version: str | None = None) -> list[Problem]:
    kueue = spec.addons.kueue
    if not kueue.enabled:
        return []
    platform = spec.cluster.platform
    pools = {p.name: p for p in spec.node_pools}
    queued = {q.pool for t in kueue.teams for q in t.queues}
    problems: list[Problem] = []
    seen: set[str] = set()
    for i, tp in enumerate(kueue.topology.pools):
        at = f"{AT}.pools[{i}]"
        if tp.name in seen:
            problems.append(Problem(stack, f"{at}.name", "pool listed twice", tp.name))
            continue
        seen.add(tp.name)
        pool = pools.get(tp.name)
        if pool is None:
            problems.append(Problem(stack, f"{at}.name", f"no such pool (pools: {', '.join(sorted(pools)) or 'none'})", tp.name))
            continue
        if tp.name not in queued:
            problems.append(Problem(stack, f"{at}.name", "no team queue uses this pool, so Kueue has no ResourceFlavor to "
                                    "make topology-aware: add a queue on it (kueue.teams[].queues[].pool)", tp.name))
        problems += _machine_problems(stack, at, tp, pool, platform)
        problems += _level_problems(stack, at, tp, pool, platform, tas.clique_labelled(spec))
    if kueue.topology.pools:
        problems += kueue_version_problems(stack, kueue_version or versions.KUEUE.app_version)
    problems += _dra_problems(stack, spec)
    problems += _queue_problems(stack, spec, platform)
    return problems


def _machine_problems(stack: str, at: str, tp: Any, pool: Any, platform: str) -> list[Problem]:
    """Why a pool without named levels has no topology (the platform's `topology_problems`)."""
    if tp.levels:
        return []
    return platforms.get(platform).scheduling.topology_problems(stack, at, pool)


def _dra_problems(stack: str, spec: Any) -> list[Problem]:
    """Kueue plans no topology for DRA pools: "No DRA + Topology Aware Scheduling (TAS): DRA resources are not accounted
    for in TAS capacity calculations" (kueue at the release versions.KUEUE pins (8eab6877) site/content/en/docs/concepts/dynamic_resource_allocation.md
    lines 268-270; the combination is kubernetes-sigs/kueue#10548, open)."""
    dra = {p.name for p in spec.node_pools if p.allocation == "dra"}
    return [Problem(stack, f"{AT}.pools[{i}].name", f"'{tp.name}' is a DRA pool: Kueue {versions.KUEUE.app_version} does "
                    "not support topology-aware scheduling with DRA (DRA resources are not counted in TAS capacity; "
                    "kueue docs concepts/dynamic_resource_allocation.md, kubernetes-sigs/kueue#10548). Leave it out of "
                    "kueue.topology.pools, or claim its GPUs through the device plugin (allocation: device-plugin, with "
                    "a ComputeDomain on the pool for IMEX channels)", tp.name)
            for i, tp in enumerate(spec.addons.kueue.topology.pools) if tp.name in dra]


def _level_problems(stack: str, at: str, tp: Any, pool: Any, platform: str, clique: bool = True) -> list[Problem]:
    if not tp.levels:
        return []
    out = []
    have = tas.provided_labels(pool, platform, clique)
    for j, level in enumerate(tp.levels):
        if level not in have:
            out.append(Problem(stack, f"{at}.levels[{j}]", "no node label of this pool provides this level (labels its "
                               f"nodes carry: {', '.join(sorted(have))}); add it to nodePools[].labels or name another",
                               level))
    dupes = sorted({lv for lv in tp.levels if list(tp.levels).count(lv) > 1})
    if dupes:
        out.append(Problem(stack, f"{at}.levels", "levels must be unique (Kueue's Topology CRD)", ", ".join(dupes)))
    host = facts.hostname_label()
    if host in tp.levels and tp.levels[-1] != host:
        out.append(Problem(stack, f"{at}.levels", f"{host} may only be the last level (Kueue's Topology CRD)", host))
    return out


def _queue_problems(stack: str, spec: Any, platform: str) -> list[Problem]:
    out = []
    pools = {p.name: p for p in spec.node_pools}
    tas_pools = tas.topology_pools(spec)
    for ti, team in enumerate(spec.addons.kueue.teams):
        for qi, queue in enumerate(team.queues):
            qt = queue.topology
            if qt is None:
                continue
            at = f"{NS}:addons.kueue.teams[{ti}].queues[{qi}].topology"
            tp = tas_pools.get(queue.pool)
            if tp is None or queue.pool not in pools:
                out.append(Problem(stack, at, f"pool {queue.pool} is not topology-aware: list it in "
                                   "gpufleet:addons.kueue.topology.pools", queue.pool))
                continue
            pool = pools[queue.pool]
            doms = {d.level: d for d in tas.domains(tp, pool, platform, tas.clique_labelled(spec))}
            for key in ("required", "preferred"):
                level = getattr(qt, key)
                if level is not None and level not in doms:
                    out.append(Problem(stack, f"{at}.{key}", f"not a level of pool {queue.pool}'s topology "
                                       f"(levels: {', '.join(doms)})", level))
            d = doms.get(qt.required) if qt.required else None
            if d is not None and qt.gpus_per_job is not None and qt.gpus_per_job > d.gpus:
                how = "the largest" if d.known else "the pool's whole size (no larger domain is known offline):"
                coarser = [lv for lv in doms if doms[lv].gpus >= qt.gpus_per_job]
                fix = f"require a coarser level ({', '.join(coarser)})" if coarser else "grow the pool or split the job"
                out.append(Problem(stack, f"{at}.gpusPerJob", f"a job of {qt.gpus_per_job} GPUs never fits one {qt.required} "
                                   f"domain: {how} holds {d.gpus} GPUs ({d.nodes} nodes); {fix}, or make it preferred",
                                   qt.gpus_per_job))
    return out


def warnings(stack: str, spec: Any) -> list[Problem]:
    """Findings that do not stop a plan (the platform's `topology_warnings` on pools without named levels)."""
    traits = platforms.get(spec.cluster.platform).scheduling
    pools = {p.name: p for p in spec.node_pools}
    out = []
    for i, tp in enumerate(spec.addons.kueue.topology.pools if spec.addons.kueue.enabled else []):
        pool = pools.get(tp.name)
        if pool is None or tp.levels:
            continue
        out += traits.topology_warnings(stack, f"{AT}.pools[{i}].name", pool)
    return out
