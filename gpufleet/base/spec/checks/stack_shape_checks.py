"""A pool of a cloud shape the catalog lacks (a size released after the last refresh) plans with the facts the stack
gives, on every platform whose nodes traits say which of its shapes are uncatalogued (`NodeTraits.uncatalogued`:
EKS instance types, GKE machine types, AKS VM sizes; issue 49). Both `gpu` and `gpusPerNode` are needed (one alone
cannot size the pool); `pricePerNodeHour` prices it, else it is listed unpriced. The plan warns that no source confirms
these facts (catalog_checks.stack_shape_warnings). What each platform cannot wire on such a shape (EFA, GPUDirect,
InfiniBand) its own pool checks refuse; a pool without the facts keeps the platform's unknown-type refusal, which names
these keys."""

from __future__ import annotations

from typing import Any

from gpufleet.base import platforms
from gpufleet.base.spec.errors import Problem

NS = "gpufleet"


def check(stack: str, spec: Any) -> list[Problem]:
    nodes = platforms.of(spec).nodes
    problems = []
    for i, pool in enumerate(spec.node_pools):
        uncatalogued = nodes.uncatalogued(pool)
        if uncatalogued and (pool.gpu is None) != (pool.gpus_per_node is None):
            missing, given = ("gpusPerNode", "gpu") if pool.gpus_per_node is None else ("gpu", "gpusPerNode")
            problems.append(Problem(stack, f"{NS}:nodePools[{i}].{missing}", f"required with {given} for "
                                    f"{', '.join(uncatalogued)}, which gpufleet's catalog does not know"))
    return problems


def stack_facts(pool: Any, nodes: Any) -> bool:
    """Whether the pool is planned with the stack's own facts: a shape the catalog lacks, with `gpu` and `gpusPerNode`."""
    return bool(nodes.uncatalogued(pool)) and pool.gpu is not None and pool.gpus_per_node is not None
