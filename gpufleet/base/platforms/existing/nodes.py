"""existing: nodes traits (gpufleet/base/platforms/contract/nodes.py says what each one means)."""

from __future__ import annotations

from typing import Any, Optional

from gpufleet.base.platforms.contract.nodes import GpuShape, NodeTraits


class ExistingNodes(NodeTraits):
    def gpu_shape(self, pool: Any) -> Optional[GpuShape]:
        """A pool with an `existing.offering`: the GPU model and count the pool states, else the GPU cloud offering's
        (gpufleet/base/catalog/gpu_clouds.yaml)."""
        if pool.existing is None or not pool.existing.offering:
            return None
        from gpufleet.base.spec.platforms.existing import offering

        found = offering(pool)
        return GpuShape(pool.gpu or found.gpu, pool.gpus_per_node or found.gpus)
