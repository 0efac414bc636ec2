"""k3s: pricing traits (gpufleet/base/platforms/contract/pricing.py says what each one means)."""

from __future__ import annotations

from typing import Any

from gpufleet.base.catalog.charges import Charge, Missing, Price, Rate
from gpufleet.base.platforms.contract.pricing import PricingTraits


class K3sPricing(PricingTraits):
    # A pool is its hosts: no autoscaler, no maximum to reach.
    autoscaled = False
    # k3s hosts are bought however you like: on-demand.
    capacity_kinds = ("on-demand",)
    # The k3s key checks refuse spot with why ("spot capacity needs a cloud platform").
    capacity_refused_elsewhere = ("spot",)
    catalog_files = ("drivers.yaml", "amd_gpus.yaml")
    # Envoy Gateway's LoadBalancer Service for its proxy is served by k3s' own ServiceLB on the nodes, at no charge.
    gateway_load_balancer_billed = False
    # k3s' bundled local-path provisioner is the cluster's default StorageClass: volumes on the hosts' own disks.
    default_storage_on_hosts = "k3s local-path, storage on your own hosts"

    def node_count(self, pool: Any) -> tuple[int, int]:
        """A pool is its hosts, all of them always."""
        return len(pool.hosts), len(pool.hosts)

    def hosts(self, spec: Any) -> list[Charge]:
        """The servers and CPU agents at the pricePerHour the stack declares (unpriced without one); a server that is
        also a GPU host is priced by its pool."""
        k3s = spec.cluster.k3s
        gpu_hosts = {h.name for p in spec.node_pools for h in p.hosts}
        out = []
        for role, hosts in (("server", k3s.servers), ("CPU agent", k3s.agents)):
            for h in hosts:
                if h.name in gpu_hosts:
                    continue
                price: Price = (Rate(h.price_per_hour, f"pricePerHour declared in the stack for {role} {h.name}", origin="stack")
                                if h.price_per_hour is not None else
                                Missing(f"{role} {h.name} has no pricePerHour in the stack"))
                out.append(Charge(f"{role} {h.name}", "host", price, h.name))
        return out

    def overhead(self, spec: Any) -> list[Charge]:
        """k3s.overheadPerHour, when the stack declares it."""
        overhead = spec.cluster.k3s.overhead_per_hour
        if overhead is None:
            return []
        return [Charge("overhead declared in the stack (k3s.overheadPerHour)", "overhead",
                       Rate(overhead, "k3s.overheadPerHour: what the stack cannot see (load balancer, NFS server, network, "
                            "support)", origin="stack"), "k3s")]
