"""What each team's Kueue quota commits: the nominal quota priced at its pool's rate per advertised unit
(a node's price over what one node advertises), and the most the team can hold when it borrows (nominal quota
plus borrowing limit, or the pool's whole size at maximum when borrowing is unlimited)."""

from __future__ import annotations

from gpufleet.base import labels
from gpufleet.base.capacity import PoolCapacity
from gpufleet.base.catalog.charges import Price, Rate
from gpufleet.app.plan.cost import TeamCost
from gpufleet.base.spec import StackSpec


def quota_resource(cap: PoolCapacity) -> tuple[str, int]:
    """The resource a queue's quota counts on a pool (its GPUs, time-slice replicas or MIG slices; never EFA),
    and how many of it one node advertises."""
    for resource, per_node in cap.advertised.items():
        if resource != labels.EFA_RESOURCE:
            return resource, per_node
    return labels.GPU_RESOURCE, cap.gpus_per_node


def team_costs(spec: StackSpec, capacity: list[PoolCapacity], pool_prices: dict[str, Price]) -> list[TeamCost]:
    if not spec.addons.kueue.enabled:
        return []
    caps = {c.pool: c for c in capacity}
    out = []
    for team in spec.addons.kueue.teams:
        for queue in team.queues:
            cap = caps.get(queue.pool)
            if cap is None:
                continue
            resource, per_node = quota_resource(cap)
            whole = per_node * cap.max_nodes
            nominal = whole if queue.nominal_quota is None else queue.nominal_quota
            most = whole if queue.borrowing_limit is None else min(whole, nominal + queue.borrowing_limit)
            most = max(most, nominal)
            price = pool_prices.get(queue.pool)
            if isinstance(price, Rate) and per_node:
                unit, source = price.value / per_node, f"{price.value:g} USD per node-hour / {per_node} {resource} per node: {price.source}"
            else:
                unit, source = None, getattr(price, "reason", f"pool {queue.pool} is unpriced")
            out.append(TeamCost(team.name, queue.pool, resource, nominal, most, unit, source))
    return out
