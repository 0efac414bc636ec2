"""gke: nodes traits (gpufleet/base/platforms/contract/nodes.py says what each one means)."""

from __future__ import annotations

from typing import Any, Optional

from gpufleet.base import catalog
from gpufleet.base import labels as L
from gpufleet.base.catalog import gcp
from gpufleet.base.platforms.contract.nodes import GpuShape, NodeTraits


class GkeNodes(NodeTraits):
    def taints(self, pool: Any, declared: list[dict[str, str]]) -> list[dict[str, str]]:
        """The GPU taint has GKE's own value ("present"; GKE taints GPU node pools `nvidia.com/gpu=present:NoSchedule`
        itself), the others are gpufleet's."""
        return [{**t, "value": L.GKE_GPU_TAINT_VALUE} if t["key"] == L.GPU_TAINT_KEY else t for t in declared]

    def gpu_shape(self, pool: Any) -> Optional[GpuShape]:
        """A machine-type pool: the machine's GPU model (gpufleet/base/catalog/gcp_machines.yaml) and its
        acceleratorCount, else the machine's fixed GPU count."""
        if not pool.machine_type or pool.machine_type not in gcp.machines():
            return None
        m = gcp.machine(pool.machine_type)
        return GpuShape(m.gpu, pool.accelerator_count or m.fixed_count)

    def advertised(self, pool: Any) -> Optional[dict[str, int]]:
        """A machine-type pool: GKE's device plugin advertises one nvidia.com/gpu per MIG partition, times the clients
        per GPU when shared (gke.gpuPartitionSize, gke.gpuSharing). An unknown machine type advertises nothing (the
        GKE checks report it)."""
        if not pool.machine_type:
            return None
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
        return {L.GPU_RESOURCE: per_node}
