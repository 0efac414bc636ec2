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
        from gpufleet.base.spec.platforms.eks import pool_instance_types

        types = pool_instance_types(pool)
        if not types or types[0] not in aws.instance_types():
            return pool
        t = aws.instance_type(types[0])
        return pool.model_copy(update={"gpu": t.gpu, "gpus_per_node": t.gpus})
    if platform == "aks" and pool.vm_size:
        from gpufleet.base.catalog import azure

        vm = azure.vms().get(pool.vm_size)
        return pool if vm is None else pool.model_copy(update={"gpu": vm.gpu, "gpus_per_node": vm.gpus})
    if platform == "gke" and pool.machine_type:
        from gpufleet.base.catalog import gcp

        if pool.machine_type not in gcp.machines():
            return pool
        m = gcp.machine(pool.machine_type)
        return pool.model_copy(update={"gpu": m.gpu, "gpus_per_node": pool.accelerator_count or m.fixed_count})
    if platform == "existing" and pool.existing is not None and pool.existing.offering:
        from gpufleet.base.spec.platforms.existing import offering

        found = offering(pool)
        return pool.model_copy(update={"gpu": pool.gpu or found.gpu, "gpus_per_node": pool.gpus_per_node or found.gpus})
    return pool


def shaped_pools(spec) -> list[NodePoolSpec]:
    return [shaped(p, spec.cluster.platform) for p in spec.node_pools]


def advertised(pool: NodePoolSpec, platform: str) -> dict[str, int]:
    """Extended resource -> count one node of the pool advertises for its GPUs. GKE machine pools: GKE's device plugin
    advertises one nvidia.com/gpu per MIG partition, times the clients per GPU when shared (gke.gpuPartitionSize,
    gke.gpuSharing); elsewhere the GPU Operator's device plugin or the AMD GPU Operator, per the pool's `sharing`
    (gpufleet/base/sharing.py). An unknown machine type advertises nothing (the platform's checks report it).
    The plan's capacity (gpufleet/base/capacity.py) and the spec's quota checks both read this."""
    if platform == "gke" and pool.machine_type:
        from gpufleet.base import catalog, labels
        from gpufleet.base.catalog import gcp

        if pool.machine_type not in gcp.machines():
            return {}
        machine = gcp.machine(pool.machine_type)
        per_node = pool.accelerator_count or machine.fixed_count or 0
        opts = pool.gke
        mig = catalog.gpu(machine.gpu).mig
        if opts is not None and opts.gpu_partition_size:
            per_node *= mig.profiles.get(opts.gpu_partition_size, 0) if mig is not None else 0
        if opts is not None and opts.gpu_sharing is not None:
            per_node *= opts.gpu_sharing.max_shared_clients_per_gpu
        return {labels.GPU_RESOURCE: per_node}
    from gpufleet.base import sharing

    return sharing.advertised(shaped(pool, platform))


def most_nodes(pool: NodePoolSpec, platform: str) -> int:
    """The most nodes the pool can have: a k3s pool's hosts, a cloud pool's maxNodes."""
    return len(pool.hosts) if platform == "k3s" else pool.max_nodes
