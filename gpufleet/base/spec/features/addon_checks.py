"""Cross checks of gpufleet:addons against the node pools: queues naming pools that exist, one queue per team and
pool, Kueue and Volcano never scheduling the same pool. Called from `_cross_checks` in gpufleet/base/spec/__init__.py
once every block is valid on its own."""

from __future__ import annotations

from gpufleet.base.spec.features.addons import NAMESPACE
from gpufleet.base.spec.errors import Problem
from gpufleet.base.spec.stack import StackSpec

_AT = f"{NAMESPACE}:addons"


def _pool_names(spec: StackSpec) -> list[str]:
    return [p.name for p in spec.node_pools]


def check(stack: str, spec: StackSpec) -> list[Problem]:
    """Errors spanning addons and nodePools: unknown pools, duplicates, Kueue and Volcano on one pool."""
    problems: list[Problem] = []
    addons = spec.addons
    pools = _pool_names(spec)
    allowed = f"allowed: {', '.join(pools)}" if pools else "no pools are declared in gpufleet:nodePools"
    kueue_pools: dict[str, str] = {}
    if addons.kueue.enabled:
        seen_teams: dict[str, int] = {}
        seen_ns: dict[str, int] = {}
        for i, team in enumerate(addons.kueue.teams):
            at = f"{_AT}.kueue.teams[{i}]"
            if team.name in seen_teams:
                problems.append(Problem(stack, f"{at}.name", f"duplicate team name (also teams[{seen_teams[team.name]}])", team.name))
            seen_teams.setdefault(team.name, i)
            if team.namespace_name in seen_ns:
                problems.append(Problem(stack, f"{at}.namespace", f"namespace already used by teams[{seen_ns[team.namespace_name]}]", team.namespace_name))
            seen_ns.setdefault(team.namespace_name, i)
            seen_pools: set[str] = set()
            for j, queue in enumerate(team.queues):
                qat = f"{at}.queues[{j}].pool"
                if queue.pool not in pools:
                    problems.append(Problem(stack, qat, f"no node pool of that name ({allowed})", queue.pool))
                elif queue.pool in seen_pools:
                    problems.append(Problem(stack, qat, "the team already has a queue on this pool (one queue per team and pool)", queue.pool))
                seen_pools.add(queue.pool)
                kueue_pools.setdefault(queue.pool, qat)
    if addons.volcano.enabled:
        for i, pool in enumerate(addons.volcano.pools):
            vat = f"{_AT}.volcano.pools[{i}]"
            if pool not in pools:
                problems.append(Problem(stack, vat, f"no node pool of that name ({allowed})", pool))
            elif pool in kueue_pools:
                problems.append(Problem(
                    stack, vat,
                    f"pool is also claimed by Kueue ({kueue_pools[pool]}): one scheduler per pool "
                    "(allowed: remove it here or remove the Kueue queue)", pool,
                ))
            elif addons.volcano.pools.index(pool) != i:
                problems.append(Problem(stack, vat, "duplicate pool", pool))
    return problems
