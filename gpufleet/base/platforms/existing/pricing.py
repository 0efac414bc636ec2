"""existing: pricing traits (gpufleet/base/platforms/contract/pricing.py says what each one means)."""

from __future__ import annotations

from typing import Any, Optional

from gpufleet.base.catalog.charges import Charge, Missing, Price, Rate
from gpufleet.base.catalog.prices import PriceFact
from gpufleet.base.platforms.contract.pricing import PricingTraits


class ExistingPricing(PricingTraits):
    # An existing cluster's nodes: bought on demand or as interruptible capacity from its provider (a contract's
    # discount is the pool's own pricePerGpuHour, not a reservation gpufleet consumes).
    capacity_kinds = ("on-demand", "spot")
    # The serving Gateway's proxy is a ClusterIP Service here (SchedulingTraits.gateway_service, the contract's default
    # for an internal Gateway): no load balancer is asked for. An external Gateway's LoadBalancer is the provider's,
    # billed outside anything gpufleet knows of the cluster.
    gateway_load_balancer_billed = False

    def node_price(self, pool: Any, gpus_per_node: int, region: Optional[str]) -> tuple[Optional[float], Optional[PriceFact]]:
        """The pool's pricePerGpuHour times its GPUs, else its GPU cloud offering's public list price with its source
        and date (gpufleet/base/catalog/gpu_clouds.yaml: one figure, not per region)."""
        from gpufleet.base.spec.platforms.existing import offering

        own = pool.existing.price_per_gpu_hour if pool.existing else None
        if own is not None:
            return own * gpus_per_node, None
        found = offering(pool)
        if found is None:
            return None, None
        return found.node_hour, PriceFact(found.node_hour, found.source, found.as_of, "hand-entered", "list")

    def unpriced_reason(self, cap: Any) -> str:
        return f"pool {cap.pool} has no price: declare existing.pricePerGpuHour or an existing.offering"

    def declared_price(self, pool: Any, cap: Any) -> Optional[Rate]:
        """pricePerNodeHour, else pricePerGpuHour times the pool's GPUs."""
        declared = super().declared_price(pool, cap)
        if declared is not None or pool.existing is None or pool.existing.price_per_gpu_hour is None:
            return declared
        return Rate(cap.price_per_node_hour, f"pricePerGpuHour {pool.existing.price_per_gpu_hour} declared in the stack "
                    f"for pool {cap.pool}, x {cap.gpus_per_node} GPUs per node", origin="stack")

    def catalog_rate(self, cap: Any, region: Optional[str]) -> Price:
        """A GPU cloud's public list price (gpufleet/base/catalog/gpu_clouds.yaml): one figure, not per region."""
        fact = cap.price_fact
        return Rate(fact.value, f"{cap.capacity_type} list price of one node: {fact.source}", fact.as_of, fact.origin)

    def overhead(self, spec: Any) -> list[Charge]:
        """The cluster's control plane, CPU nodes and storage (what the stack cannot see): existing.overheadPerHour,
        unpriced when the stack does not declare it."""
        overhead = spec.cluster.existing.overhead_per_hour if spec.cluster.existing else None
        price: Price = (Rate(overhead, "existing.overheadPerHour declared in the stack: control plane, CPU nodes, storage",
                             origin="stack") if overhead is not None else
                        Missing("the cluster's control plane, CPU nodes and storage: declare cluster.existing.overheadPerHour"))
        return [Charge("cluster beyond its GPU pools (existing.overheadPerHour)", "overhead", price, "existing")]
