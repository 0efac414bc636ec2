"""gke: pricing traits (gpufleet/base/platforms/contract/pricing.py says what each one means)."""

from __future__ import annotations

from typing import Any, Optional

from gpufleet.base.catalog import gcp, prices
from gpufleet.base.catalog.prices import PriceFact
from gpufleet.base.platforms.contract.pricing import PricingTraits
from gpufleet.base.spec.features.reservation import billed_as, unpriced_in_catalog


class GkePricing(PricingTraits):
    # Compute Engine reservations, and Dynamic Workload Scheduler flex-start and queued provisioning
    # (gpufleet/base/spec/features/reservation.py; ../shared/reference/gcp/dws.md).
    capacity_kinds = ("on-demand", "spot", "reserved", "flex-start", "queued")
    reservation_types = ("specific", "any")
    catalog_files = ("drivers.yaml", "gcp_machines.yaml", "kubernetes.yaml")

    def region(self, spec: Any, config: dict) -> Optional[str]:
        """The cluster's own region (`cluster.gke.region`)."""
        return spec.cluster.gke.region

    def node_price(self, pool: Any, gpus_per_node: int, region: Optional[str]) -> tuple[Optional[float], Optional[PriceFact]]:
        """A machine-type pool: the machine's price with its GPUs at the pool's billing (reservation.billed_as), from
        gpufleet/base/catalog/gcp_machines.yaml and the refreshed prices (the catalog's default region)."""
        billed = billed_as(pool)
        if not pool.machine_type or not billed or pool.machine_type not in gcp.machines():
            return None, None  # a machine type the catalog lacks: the stack's pricePerNodeHour, else unpriced
        fact = prices.gcp_machine_price(gcp.machine(pool.machine_type).name, billed, gpus_per_node, None)
        return (fact.value, fact) if fact else (None, None)

    def unpriced_reason(self, cap: Any) -> str:
        return unpriced_in_catalog(cap)
