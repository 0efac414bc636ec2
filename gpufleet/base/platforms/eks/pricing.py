"""eks: pricing traits (gpufleet/base/platforms/contract/pricing.py says what each one means)."""

from __future__ import annotations

from typing import Any, Optional

from gpufleet.base.catalog import aws, prices
from gpufleet.base.catalog.prices import PriceFact
from gpufleet.base.platforms.contract.pricing import PricingTraits
from gpufleet.base.spec.features.reservation import billed_as, unpriced_in_catalog


class EksPricing(PricingTraits):
    capacity_kinds = ("on-demand", "spot", "reserved")
    # EC2 Capacity Blocks for ML and On-Demand Capacity Reservations (gpufleet/base/spec/features/reservation.py).
    reservation_types = ("capacity-block", "odcr")
    catalog_files = ("drivers.yaml", "aws_instances.yaml", "kubernetes.yaml")

    def region(self, spec: Any, config: dict) -> Optional[str]:
        """The AWS provider's region (`aws:region`)."""
        return config.get("aws:region")

    def node_price(self, pool: Any, gpus_per_node: int, region: Optional[str]) -> tuple[Optional[float], Optional[PriceFact]]:
        """The first instance type's price at the pool's billing (reservation.billed_as): the region's refreshed one,
        else the hand-entered us-east-1 figure (which the cost section then refuses for another region:
        PricingTraits.catalog_rate). A pool on an EC2 Capacity Block: the block's published effective hourly rate
        for the type and region (aws_instances.yaml capacity_block_prices), else unpriced."""
        from gpufleet.base.spec.platforms.eks import pool_instance_types

        t = aws.instance_types().get(pool_instance_types(pool)[0])
        if t is not None and pool.capacity == "reserved" and pool.reservation is not None \
                and pool.reservation.type == "capacity-block":
            fact = prices.aws_capacity_block_price(t.name, region)
            return (fact.value, fact) if fact else (None, None)
        billed = billed_as(pool)
        if not billed or t is None:  # a type the catalog lacks: the stack's pricePerNodeHour, else unpriced
            return None, None
        fact = prices.aws_instance_price(t.name, billed, region) or prices.aws_instance_price(t.name, billed, None)
        return (fact.value, fact) if fact else (None, None)

    def unpriced_reason(self, cap: Any) -> str:
        if (cap.reservation or {}).get("type") == "capacity-block":
            # The Capacity Blocks pricing page publishes an effective hourly rate per instance type and location, updated
            # with supply and demand (aws.amazon.com/ec2/capacityblocks/pricing/). The catalog holds the rates a dated
            # reading of it gave (aws_instances.yaml capacity_block_prices: P6e-GB200 in us-east-1, issue 49); for any
            # other type or region the block's own price is the one to give.
            held = ", ".join(f"{name} in {row['region']}" for name, row in aws.capacity_block_rates().items())
            return (f"pool {cap.pool}: an EC2 Capacity Block is paid upfront at the rate of its offering "
                    "(aws.amazon.com/ec2/capacityblocks/pricing/ lists each type's effective hourly rate; gpufleet's "
                    f"catalog holds it only for {held}); declare pricePerNodeHour = the offering's UpfrontFee / its "
                    "hours / its instances (aws ec2 describe-capacity-block-offerings)")
        return unpriced_in_catalog(cap)
