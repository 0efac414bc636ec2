"""A pool's GPU shape on any platform: k3s pools state `gpu` and `gpusPerNode`; on EKS and GKE the
instance or machine type decides them (gpufleet/base/catalog). Sharing checks, the sharing configs and the
plan's capacity all read the shaped pool, so they agree on every platform."""

from __future__ import annotations

from gpufleet.base.spec.pools import NodePoolSpec


def shaped(pool: NodePoolSpec, platform: str) -> NodePoolSpec:
    """The pool with `gpu` and `gpus_per_node` filled in from the catalog where the platform derives them.
    An unknown instance or machine type leaves the pool as it is (the platform's checks report it)."""
    if platform == "eks":
        from gpufleet.base.catalog import aws
        from gpufleet.base.spec.eks import pool_instance_types

        types = pool_instance_types(pool)
        if not types or types[0] not in aws.instance_types():
            return pool
        t = aws.instance_type(types[0])
        return pool.model_copy(update={"gpu": t.gpu, "gpus_per_node": t.gpus})
    if platform == "gke" and pool.machine_type:
        from gpufleet.base.catalog import gcp

        if pool.machine_type not in gcp.machines():
            return pool
        m = gcp.machine(pool.machine_type)
        return pool.model_copy(update={"gpu": m.gpu, "gpus_per_node": pool.accelerator_count or m.fixed_count})
    return pool


def shaped_pools(spec) -> list[NodePoolSpec]:
    return [shaped(p, spec.cluster.platform) for p in spec.node_pools]
