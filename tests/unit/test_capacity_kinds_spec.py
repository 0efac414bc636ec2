"""Unit tests (layer 1): capacity kinds (reserved, flex-start, queued) and reservations in the spec, with the
exact messages a user sees for what each platform forbids."""

import copy

from gpufleet.base.spec.features.reservation import capacity_source, committed_nodes
from tests.helpers import example_config
from tests.helpers import load_config as load
from tests.helpers import spec_problems as problems

EKS = example_config("prod-eks")
GKE = example_config("prod-gke")
CB = "cr-0123456789abcdef0"


def eks_pool(**pool) -> dict:
    config = copy.deepcopy(EKS)
    config["gpufleet:nodePools"] = [{"name": "p", "instanceType": "p5.48xlarge", "maxNodes": 2, **pool}]
    return config


def gke_pool(**pool) -> dict:
    config = copy.deepcopy(GKE)
    config["gpufleet:nodePools"] = [{"name": "p", "machineType": "a3-highgpu-8g", **pool}]
    return config


def block(**extra) -> dict:
    return {"type": "capacity-block", "id": CB, "zone": "us-east-1b", "instanceCount": 2, **extra}


def test_capacity_block_is_valid_and_exposes_its_size():
    spec = load(eks_pool(capacity="reserved", reservation=block(instanceType="p5.48xlarge")))
    pool = spec.node_pools[0]
    assert committed_nodes(pool) == 2
    assert capacity_source(pool) == f"reserved (capacity-block {CB} in us-east-1b, 2 x p5.48xlarge)"


def test_reservation_in_another_zone():
    assert problems(eks_pool(capacity="reserved", availabilityZone="us-east-1a", reservation=block())) == [
        f"stack 'test': gpufleet:nodePools[0].availabilityZone: capacity block {CB} is in us-east-1b: a reserved pool "
        "must run in its reservation's zone (allowed: us-east-1b) (got 'us-east-1a')",
    ]
    assert problems(eks_pool(capacity="reserved", reservation=block(zone="us-west-2a"))) == [
        f"stack 'test': gpufleet:nodePools[0].reservation.zone: capacity block {CB} is in us-west-2a, which is not one of "
        "the network's zones (allowed: us-east-1a, us-east-1b, us-east-1c) (got 'us-west-2a')",
    ]
    gke = gke_pool(capacity="reserved", gke={"zones": ["us-central1-a"]},
                   reservation={"type": "specific", "name": "h100s", "zone": "us-central1-c"})
    assert problems(gke) == [
        "stack 'test': gpufleet:nodePools[0].gke.zones: reservation 'h100s' is in zone us-central1-c: a reserved pool's "
        "nodes must run there (allowed: [us-central1-c]) (got ['us-central1-a'])",
    ]


def test_capacity_block_with_an_instance_type_it_does_not_hold():
    assert problems(eks_pool(capacity="reserved", reservation=block(instanceType="p5e.48xlarge"))) == [
        f"stack 'test': gpufleet:nodePools[0].instanceType: capacity block {CB} holds p5e.48xlarge: the pool's instance "
        "type must be p5e.48xlarge alone (allowed: [p5e.48xlarge]) (got 'p5.48xlarge')",
    ]
    gke = gke_pool(capacity="reserved", reservation={"type": "specific", "name": "h100s", "zone": "us-central1-a",
                                                     "instanceType": "a3-megagpu-8g"})
    assert problems(gke) == [
        "stack 'test': gpufleet:nodePools[0].reservation.instanceType: the pool's machineType is a3-highgpu-8g, but "
        "reservation 'h100s' holds a3-megagpu-8g: GKE consumes a reservation only with the machine type it holds "
        "(got 'a3-megagpu-8g')",
    ]


def test_capacity_block_larger_than_its_size_and_its_required_fields():
    assert problems(eks_pool(capacity="reserved", maxNodes=4, reservation=block())) == [
        f"stack 'test': gpufleet:nodePools[0].maxNodes: capacity block {CB} holds 2 instance(s): more nodes can never "
        "launch (allowed: at most 2) (got 4)",
    ]
    assert problems(eks_pool(capacity="reserved", reservation={"type": "capacity-block", "id": CB})) == [
        "stack 'test': gpufleet:nodePools[0].reservation: a capacity-block reservation needs zone, instanceCount (its id, "
        "its availability zone and how many instances it holds)",
    ]
    assert problems(eks_pool(capacity="reserved", reservation=block(resourceGroupArn="arn:aws:resource-groups:us-east-1:123456789012:group/g"))) == [
        "stack 'test': gpufleet:nodePools[0].reservation: resourceGroupArn: not used with reservation type capacity-block",
    ]


def test_reserved_needs_a_reservation_of_its_platform():
    assert problems(eks_pool(capacity="reserved")) == [
        "stack 'test': gpufleet:nodePools[0].reservation: required with capacity reserved: which reservation the pool "
        "consumes (type: capacity-block | odcr)",
    ]
    assert problems(eks_pool(capacity="reserved", reservation={"type": "specific", "name": "x", "zone": "us-east-1a"})) == [
        "stack 'test': gpufleet:nodePools[0].reservation.type: not a reservation type on eks (allowed: capacity-block, odcr) "
        "(got 'specific')",
    ]
    assert problems(eks_pool(reservation=block())) == [
        "stack 'test': gpufleet:nodePools[0].reservation: only used with capacity reserved (this pool is on-demand)",
    ]


def test_dws_modes_are_gke_only():
    assert problems(eks_pool(capacity="flex-start")) == [
        "stack 'test': gpufleet:nodePools[0].capacity: not offered on eks (allowed on eks: on-demand, spot, reserved) "
        "(got 'flex-start')",
    ]


def test_queued_pool_with_min_above_zero():
    assert problems(gke_pool(capacity="queued", minNodes=1, maxNodes=2)) == [
        "stack 'test': gpufleet:nodePools[0].minNodes: a queued-provisioning pool starts empty: its nodes come only "
        "through ProvisioningRequests (allowed with queued: 0) (got 1)",
    ]


def test_flex_start_with_settings_it_forbids():
    config = gke_pool(capacity="flex-start", maxNodes=2, gke={"reservation": {"type": "specific", "name": "r"},
                                                              "locationPolicy": "BALANCED"})
    assert problems(config) == [
        "stack 'test': gpufleet:nodePools[0].gke.reservation.type: flex-start nodes cannot consume reservations "
        "(allowed with flex-start: none) (got 'specific')",
        "stack 'test': gpufleet:nodePools[0].gke.locationPolicy: DWS (flex-start) pools need location policy ANY "
        "(allowed with flex-start: ANY) (got 'BALANCED')",
    ]
    assert problems(gke_pool(capacity="flex-start", gke={"maxRunDurationSeconds": 700000})) == [
        "stack 'test': gpufleet:nodePools[0].gke.maxRunDurationSeconds: Input should be less than or equal to 604800 (got 700000)",
    ]
    assert problems(gke_pool(gke={"maxRunDurationSeconds": 3600})) == [
        "stack 'test': gpufleet:nodePools[0].gke.maxRunDurationSeconds: only used with capacity flex-start or queued "
        "(this pool is on-demand) (got 3600)",
    ]


def test_k3s_offers_on_demand_only():
    config = example_config("teams")
    config["gpufleet:nodePools"][0]["capacity"] = "flex-start"
    assert "stack 'test': gpufleet:nodePools[0].capacity: not offered on k3s (allowed on k3s: on-demand) (got 'flex-start')" in problems(config)
