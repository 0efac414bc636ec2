"""The k3s platform: a K3sCluster control plane and one K3sNodePool per GPU pool."""

from __future__ import annotations

import dataclasses

import pulumi

from gpufleet.components import e2e_seam
from gpufleet.components.k3s.cluster import K3sCluster, K3sClusterArgs
from gpufleet.components.k3s.node_pool import K3sNodePool, K3sNodePoolArgs, server_node_settings
from gpufleet.components.platform import PlatformBuild, PlatformInputs


def build(name: str, inputs: PlatformInputs, opts: pulumi.ResourceOptions) -> PlatformBuild:
    spec = inputs.spec
    # The e2e tier's seam (components/e2e_seam.py): an existing API server instead of hosts, so no pools to join.
    existing = e2e_seam.existing_kubeconfig()
    server_names = {h.name for h in spec.cluster.k3s.servers}
    gpu_servers = {h.name: server_node_settings(pool) for pool in spec.node_pools for h in pool.hosts if h.name in server_names}
    control_plane = K3sCluster(
        f"{name}-k3s",
        K3sClusterArgs(
            spec.cluster.k3s, spec.cluster.kubernetes_version, inputs.ssh_private_key,
            local_storage_path=spec.storage.local_path.path, gpu_servers=gpu_servers,
            existing_kubeconfig=existing,
        ),
        opts=opts,
    )
    pools = [] if existing is not None else [
        K3sNodePool(f"{name}-pool-{pool.name}", K3sNodePoolArgs(pool, control_plane.join), opts=opts)
        for pool in spec.node_pools
    ]
    access = dataclasses.replace(control_plane.access, ready=[*control_plane.access.ready, *pools])
    return PlatformBuild(control_plane=control_plane, access=access, node_pools=pools)
