"""How a platform's pools are counted and priced, and what its cluster costs beyond them.

Asked by gpufleet/base/capacity.py (a pool's nodes and price), gpufleet/base/spec/features/reservation.py (the
capacity kinds it offers), gpufleet/app/plan/engine.py and cost_items.py (the region prices are read for, the
catalog files a plan uses, what the cost section lists besides what the plan registers) and the observability
pools. `pool` is a gpufleet.base.spec.pools.NodePoolSpec, `spec` a StackSpec, `cap` a
gpufleet.base.capacity.PoolCapacity (not imported here: they import the platforms' registry).

A platform that declares nothing: its pools counted from minNodes..maxNodes and priced from their
`pricePerNodeHour` (unpriced otherwise, which makes the plan's totals "at least"), on-demand capacity only, no
cluster-level cost items.
"""

from __future__ import annotations

from typing import Any, Optional

from gpufleet.base.catalog.charges import Charge, Missing, Price, Rate
from gpufleet.base.catalog.prices import PriceFact


class PricingTraits:
    """Defaults: a platform that declares nothing here."""

    autoscaled: bool = True
    """Its pools grow and shrink between minNodes and maxNodes (an autoscaler owns their size). False: a pool is a
    fixed set of machines (k3s: its hosts), so there is no maximum to reach."""

    capacity_kinds: tuple[str, ...] = ("on-demand",)
    """The capacity kinds (`nodePools[*].capacity`) its pools may use; others are refused naming these. Default:
    on-demand only."""

    reservation_types: tuple[str, ...] = ()
    """The reservation types (`nodePools[*].reservation.type`) a `capacity: reserved` pool may consume. Default: none."""

    capacity_refused_elsewhere: tuple[str, ...] = ()
    """Capacity kinds the platform's own key checks refuse with a message of their own (k3s: spot), so the shared
    capacity check says nothing more about them. Default: none."""

    catalog_files: Optional[tuple[str, ...]] = None
    """The catalog files (gpufleet/base/catalog/*.yaml) whose facts a plan on it uses: the oldest of their dates is
    the plan's catalog date. Default None: every dated file."""

    gateway_load_balancer_billed: bool = True
    """A Gateway's controller asks for a load balancer the cloud bills (listed unpriced: not in the catalog). False:
    the platform serves it on its own nodes at no charge (k3s' ServiceLB). Default: billed."""

    default_storage_on_hosts: Optional[str] = None
    """What a claim on the cluster's default StorageClass (one the stack does not create) is, when that class puts it
    on the hosts' own disks at no charge beyond the hosts (k3s: local-path). None: such a claim is listed unpriced.
    Default: None."""

    def node_count(self, pool: Any) -> tuple[int, int]:
        """(fewest, most) nodes the pool has. Default: minNodes, maxNodes."""
        return pool.min_nodes, pool.max_nodes

    def region(self, spec: Any, config: dict) -> Optional[str]:
        """Where the cluster runs, for regional prices (`config`: the stack file's config, provider keys included).
        Default None: no regional prices."""
        return None

    def node_price(self, pool: Any, gpus_per_node: int, region: Optional[str]) -> tuple[Optional[float], Optional[PriceFact]]:
        """(USD per node-hour, the catalog fact it comes from) of a pool that declares no pricePerNodeHour (a declared
        price always wins: gpufleet/base/capacity.py). The fact is None for a price the stack states some other way.
        Default (None, None): unpriced."""
        return None, None

    def unpriced_reason(self, cap: Any) -> str:
        """Why a pool has no price, as the cost section says it. Default: it declares no pricePerNodeHour."""
        return f"pool {cap.pool} has no pricePerNodeHour"

    def declared_price(self, pool: Any, cap: Any) -> Optional[Rate]:
        """The price of one of the pool's nodes as the stack declares it, saying where (None: the price is the
        catalog's, `cap.price_fact`). Default: the pool's pricePerNodeHour."""
        if pool.price_per_node_hour is None:
            return None
        return Rate(cap.price_per_node_hour, f"pricePerNodeHour declared in the stack for pool {cap.pool}", origin="stack")

    def catalog_rate(self, cap: Any, region: Optional[str]) -> Price:
        """The cost section's price of one node from the catalog fact behind it (`cap.price_fact`). Default: the fact
        where it holds for the plan's region, else unpriced saying which region it holds for."""
        fact = cap.price_fact
        if region != fact.region:
            return Missing(f"the catalog's {cap.capacity_type} price for pool {cap.pool} is a {fact.region} figure; none for {region}")
        return Rate(fact.value, f"{cap.capacity_type} price of one node: {fact.source}", fact.as_of, fact.origin)

    def hosts(self, spec: Any) -> list[Charge]:
        """The machines the stack itself lists and prices besides its GPU pools (k3s' servers and CPU agents). Default:
        none (a cloud's own machines are read from what the plan registers: gpufleet/app/plan/cost_items.py)."""
        return []

    def overhead(self, spec: Any) -> list[Charge]:
        """What the cluster costs beyond anything the plan can see, as the stack declares it (an overheadPerHour).
        Default: none."""
        return []
