"""The nodes and pricing traits (gpufleet/base/platforms/contract/{nodes,pricing}.py): a platform that declares
nothing gets its pools counted from minNodes..maxNodes, priced from pricePerNodeHour (unpriced otherwise), its taints
as gpufleet declares them and no cluster-level cost items; the built-in platforms declare what differs."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from gpufleet.app.plan.cost_items import _pool_price, capacity_pool_items
from gpufleet.base import labels as L
from gpufleet.base import platforms
from gpufleet.base.capacity import pool_capacity
from gpufleet.base.catalog.charges import Missing, Rate
from gpufleet.base.node_labels import node_taints, pool_taints
from gpufleet.base.platforms.contract import PlatformTraits, ProgramTraits
from gpufleet.base.spec import shape
from gpufleet.base.spec.features.reservation import check as reservation_checks
from gpufleet.base.spec.pools import NodePoolSpec

TOY = "toy-pricing"


@pytest.fixture
def toy():
    """A platform that declares nothing but its program."""
    traits = PlatformTraits(name=TOY, program=ProgramTraits(components="toy.platform", extra=TOY))
    platforms.register(traits)
    yield traits
    platforms.unregister(TOY)


def pool(**extra) -> NodePoolSpec:
    return NodePoolSpec.model_validate({"name": "a100", "gpu": "A100-80GB", "gpusPerNode": 8, "minNodes": 1,
                                        "maxNodes": 3, **extra})


def stack(platform: str, *pools: NodePoolSpec) -> SimpleNamespace:
    """As much of a StackSpec as pricing reads."""
    return SimpleNamespace(cluster=SimpleNamespace(platform=platform), node_pools=list(pools))


def test_a_platform_that_declares_nothing_counts_min_to_max_at_the_declared_price(toy):
    p = pool(pricePerNodeHour=20.0)
    cap = pool_capacity(p, TOY)
    assert (cap.gpu, cap.gpus_per_node, cap.min_nodes, cap.max_nodes) == ("A100-80GB", 8, 1, 3)
    assert (cap.price_per_node_hour, cap.price_fact, cap.hourly_min, cap.hourly_max) == (20.0, None, 20.0, 60.0)
    assert cap.advertised == {L.GPU_RESOURCE: 8}
    [item] = capacity_pool_items(stack(TOY, p), [cap], set())
    assert (item.key, item.count_min, item.count_max, item.unit_hourly, item.origin) == ("gpu-nodes:a100", 1, 3, 20.0, "stack")


def test_a_platform_that_declares_nothing_leaves_an_undeclared_price_unpriced(toy):
    p = pool()
    cap = pool_capacity(p, TOY)
    assert cap.price_per_node_hour is None
    assert _pool_price(cap, stack(TOY, p), None) == Missing("pool a100 has no pricePerNodeHour")


def test_a_platform_that_declares_nothing_keeps_gpufleets_taints_and_has_no_cluster_charges(toy):
    p = pool(capacity="on-demand")
    assert node_taints(p, TOY) == pool_taints(p)
    pricing = toy.pricing
    assert (pricing.hosts(stack(TOY, p)), pricing.overhead(stack(TOY, p))) == ([], [])
    assert (pricing.region(stack(TOY, p), {"aws:region": "us-west-2"}), pricing.catalog_files) == (None, None)
    assert pricing.autoscaled and pricing.gateway_load_balancer_billed and pricing.default_storage_on_hosts is None
    assert shape.most_nodes(p, TOY) == 3


def test_a_platform_that_declares_nothing_offers_on_demand_only(toy):
    problems = reservation_checks("dev", stack(TOY, pool(capacity="spot")))
    assert [(x.path, x.message) for x in problems] == [
        ("gpufleet:nodePools[0].capacity", f"not offered on {TOY} (allowed on {TOY}: on-demand)")]


def test_gke_gives_the_gpu_taint_its_own_value_and_aks_adds_its_spot_taint():
    p = pool(capacity="spot")
    gke = node_taints(p, "gke")
    assert [(t["key"], t["value"]) for t in gke] == [(L.GPU_TAINT_KEY, L.GKE_GPU_TAINT_VALUE), (L.SPOT_TAINT_KEY, "true")]
    aks = node_taints(p, "aks")
    assert aks == [*pool_taints(p), {"key": L.AKS_SPOT_KEY, "value": L.AKS_SPOT_VALUE, "effect": "NoSchedule"}]
    assert node_taints(pool(), "aks") == pool_taints(pool())


def test_k3s_counts_its_hosts_is_not_autoscaled_and_serves_gateways_itself():
    k3s = platforms.get("k3s").pricing
    p = SimpleNamespace(hosts=[object(), object()], min_nodes=0, max_nodes=9)
    assert k3s.node_count(p) == (2, 2)
    assert not k3s.autoscaled and not k3s.gateway_load_balancer_billed
    assert k3s.capacity_refused_elsewhere == ("spot",)


@pytest.mark.parametrize("name, kinds, reservations", [
    ("eks", ("on-demand", "spot", "reserved"), ("capacity-block", "odcr")),
    ("gke", ("on-demand", "spot", "reserved", "flex-start", "queued"), ("specific", "any")),
    ("aks", ("on-demand", "spot"), ()),
    ("k3s", ("on-demand",), ()),
    ("existing", ("on-demand", "spot"), ()),
])
def test_capacity_kinds_and_reservation_types_per_platform(name, kinds, reservations):
    pricing = platforms.get(name).pricing
    assert (pricing.capacity_kinds, pricing.reservation_types) == (kinds, reservations)


def test_existing_declares_its_overhead_unpriced_when_the_stack_does_not():
    spec = SimpleNamespace(cluster=SimpleNamespace(platform="existing", existing=None), node_pools=[])
    [charge] = platforms.get("existing").pricing.overhead(spec)
    assert (charge.kind, charge.key, isinstance(charge.price, Missing)) == ("overhead", "existing", True)
    spec.cluster.existing = SimpleNamespace(overhead_per_hour=3.5)
    [charge] = platforms.get("existing").pricing.overhead(spec)
    assert charge.price == Rate(3.5, "existing.overheadPerHour declared in the stack: control plane, CPU nodes, storage",
                                origin="stack")
