"""aks: pricing traits (gpufleet/base/platforms/contract/pricing.py says what each one means)."""

from __future__ import annotations

from typing import Any, Optional

from gpufleet.base.catalog import azure
from gpufleet.base.catalog.prices import PriceFact
from gpufleet.base.platforms.contract.pricing import PricingTraits
from gpufleet.base.spec.features.reservation import unpriced_in_catalog


class AksPricing(PricingTraits):
    # AKS: on-demand and Spot (scaleSetPriority); capacity reservation groups are not wired (docs/aks.md).
    capacity_kinds = ("on-demand", "spot")
    catalog_files = ("drivers.yaml", "azure_vms.yaml", "kubernetes.yaml")

    def region(self, spec: Any, config: dict) -> Optional[str]:
        """The cluster's location (`cluster.aks.location`)."""
        return spec.cluster.aks.location

    def node_price(self, pool: Any, gpus_per_node: int, region: Optional[str]) -> tuple[Optional[float], Optional[PriceFact]]:
        """The VM size's price at the pool's capacity where gpufleet/base/catalog/azure_vms.yaml holds one (it says
        why most are not read)."""
        vm = azure.vms().get(pool.vm_size or "")
        price = vm.price(pool.capacity) if vm is not None else None
        if price is None:
            return None, None
        return price, PriceFact(price, f"{vm.name} {pool.capacity}: {azure.source_text(vm.sources)}", azure.as_of(),
                                "hand-entered", "")

    def unpriced_reason(self, cap: Any) -> str:
        return unpriced_in_catalog(cap)
