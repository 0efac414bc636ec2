"""aks: nodes traits (gpufleet/base/platforms/contract/nodes.py says what each one means)."""

from __future__ import annotations

from typing import Any, Optional

from gpufleet.base import catalog
from gpufleet.base import labels as L
from gpufleet.base.catalog import azure
from gpufleet.base.platforms.contract.nodes import GpuShape, NodeTraits


def vm_of(pool: Any) -> Optional[azure.AzureVm]:
    """The pool's VM size as the node pool is built from it: the catalog's row, or for a size the catalog lacks, one
    made of the facts the stack gives (issue 49: `gpu`, `gpusPerNode`; no InfiniBand, regions or catalog price; the CPU
    architecture the GPU fixes, else x86_64). None: neither."""
    if not pool.vm_size:
        return None
    if pool.vm_size in azure.vms():
        return azure.vm(pool.vm_size)
    model = catalog.gpu_models().get(pool.gpu or "")
    if model is None or pool.gpus_per_node is None:
        return None
    return azure.AzureVm(name=pool.vm_size, gpu=model.name, gpus=pool.gpus_per_node, vcpus=0, memory_gib=0,
                         arch=model.host_arch or "x86_64", infiniband=None, regions=None,
                         sources=("stack",))


class AksNodes(NodeTraits):
    def taints(self, pool: Any, declared: list[dict[str, str]]) -> list[dict[str, str]]:
        """gpufleet's taints, and on Spot pools AKS's own Spot taint (labels.AKS_SPOT_KEY says where AKS documents it)."""
        if pool.capacity != "spot":
            return declared
        # AKS taints every Spot pool itself; declared too, so the node pool's taints match what the nodes carry.
        return [*declared, {"key": L.AKS_SPOT_KEY, "value": L.AKS_SPOT_VALUE, "effect": "NoSchedule"}]

    stack_shape_unknowns = "its InfiniBand, regions and driver family are unknown (RDMA is not offered)"

    def uncatalogued(self, pool: Any) -> list[str]:
        return [pool.vm_size] if pool.vm_size and pool.vm_size not in azure.vms() else []

    def gpu_shape(self, pool: Any) -> Optional[GpuShape]:
        """The VM size's GPU model and count (gpufleet/base/catalog/azure_vms.yaml)."""
        vm = azure.vms().get(pool.vm_size) if pool.vm_size else None
        return None if vm is None else GpuShape(vm.gpu, vm.gpus)
