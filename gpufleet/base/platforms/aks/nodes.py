"""aks: nodes traits (gpufleet/base/platforms/contract/nodes.py says what each one means)."""

from __future__ import annotations

from typing import Any, Optional

from gpufleet.base import labels as L
from gpufleet.base.catalog import azure
from gpufleet.base.platforms.contract.nodes import GpuShape, NodeTraits


class AksNodes(NodeTraits):
    def taints(self, pool: Any, declared: list[dict[str, str]]) -> list[dict[str, str]]:
        """gpufleet's taints, and on Spot pools AKS's own Spot taint (labels.AKS_SPOT_KEY says where AKS documents it)."""
        if pool.capacity != "spot":
            return declared
        # AKS taints every Spot pool itself; declared too, so the node pool's taints match what the nodes carry.
        return [*declared, {"key": L.AKS_SPOT_KEY, "value": L.AKS_SPOT_VALUE, "effect": "NoSchedule"}]

    def gpu_shape(self, pool: Any) -> Optional[GpuShape]:
        """The VM size's GPU model and count (gpufleet/base/catalog/azure_vms.yaml)."""
        vm = azure.vms().get(pool.vm_size) if pool.vm_size else None
        return None if vm is None else GpuShape(vm.gpu, vm.gpus)
