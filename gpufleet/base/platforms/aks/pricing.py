"""aks: pricing traits (gpufleet/base/platforms/contract/pricing.py says what each one means)."""

from __future__ import annotations

from typing import Any, Optional

from gpufleet.base.catalog import prices
from gpufleet.base.catalog.prices import PriceFact
from gpufleet.base.platforms.contract.pricing import PricingTraits
from gpufleet.base.spec.features.reservation import OWN_PRICES, unpriced_in_catalog


class AksPricing(PricingTraits):
    # AKS: on-demand and Spot (scaleSetPriority); capacity reservation groups are not wired (docs/aks.md).
    capacity_kinds = ("on-demand", "spot")
    catalog_files = ("drivers.yaml", "azure_vms.yaml", "kubernetes.yaml")

    def region(self, spec: Any, config: dict) -> Optional[str]:
        """The cluster's location (`cluster.aks.location`)."""
        return spec.cluster.aks.location

    def node_price(self, pool: Any, gpus_per_node: int, region: Optional[str]) -> tuple[Optional[float], Optional[PriceFact]]:
        """The VM size's price at the pool's capacity in the cluster's location: read by `gpufleet catalog refresh
        --azure` (dated), else the undated Retail Prices snapshot in gpufleet/base/catalog/azure_vms.yaml (`prices:`,
        which says why it has no date; the plan shows it "undated (snapshot)" and never flags it stale by age)."""
        fact = prices.azure_vm_price(pool.vm_size or "", pool.capacity, region)
        return (None, None) if fact is None else (fact.value, fact)

    def unpriced_reason(self, cap: Any) -> str:
        why = OWN_PRICES.get((cap.reservation or {}).get("type") or cap.capacity_type)
        if why:
            return unpriced_in_catalog(cap)
        return (f"pool {cap.pool}: no {cap.capacity_type} price for its VM size in the cluster's location "
                "(gpufleet/base/catalog/azure_vms.yaml `prices:` holds an undated snapshot for nine US regions, no "
                "Spot price for H100 sizes, none for ND H200 v5 and ND GB200 v6); declare pricePerNodeHour to price it")
