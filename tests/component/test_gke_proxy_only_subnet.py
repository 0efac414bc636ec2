"""The proxy-only subnet of a regional serving Gateway on GKE (issue 38): created with the network gpufleet creates,
checked against the other ranges, and a plan warning (not a resource) on a network the user brings."""

from __future__ import annotations

import copy

import pytest

from gpufleet.base.spec import SpecError
from tests.helpers import by_type, example_config, load_config, plan_config, planned

SUBNET = "gcp:compute/subnetwork:Subnetwork"
EXISTING = {"network": "shared-vpc", "subnetwork": "gke-subnet", "podsRangeName": "gke-pods",
            "servicesRangeName": "gke-svc"}


def _config(change=None) -> dict:
    config = copy.deepcopy(example_config("inference-gke"))
    if change:
        change(config["gpufleet:cluster"]["gke"])
    return config


def _problems(config) -> list[tuple[str, str, object]]:
    with pytest.raises(SpecError) as exc:
        load_config(config, "inference-gke")
    return [(p.path, p.message, p.value) for p in exc.value.problems]


def test_a_regional_gateway_gets_an_active_regional_managed_proxy_subnet():
    plan = planned("inference-gke")
    (proxy,) = [r for r in by_type(plan, SUBNET) if r.name == "inference-gke-network-proxy-only"]
    assert proxy.inputs["purpose"] == "REGIONAL_MANAGED_PROXY" and proxy.inputs["role"] == "ACTIVE"
    assert proxy.inputs["ipCidrRange"] == "10.129.0.0/23" and proxy.inputs["region"] == "us-central1"
    (node_subnet,) = [r for r in by_type(plan, SUBNET) if r.name == "inference-gke-network-subnet"]
    assert proxy.inputs["network"] == node_subnet.inputs["network"]  # the cluster's own VPC
    assert "purpose" not in node_subnet.inputs


def test_no_proxy_only_subnet_without_a_regional_gateway():
    """GKE stacks without serving keep their networks as they were (airgap-gke: no Gateway)."""
    assert [r.name for r in by_type(planned("airgap-gke"), SUBNET)] == ["airgap-gke-network-subnet"]


def test_the_range_is_a_key():
    config = _config(lambda gke: gke.setdefault("network", {}).update(proxyOnlyCidr="10.130.0.0/24"))
    plan = plan_config(config, "inference-gke", policies=False)
    (proxy,) = [r for r in by_type(plan, SUBNET) if r.name == "inference-gke-network-proxy-only"]
    assert proxy.inputs["ipCidrRange"] == "10.130.0.0/24"


def test_an_overlapping_range_is_refused():
    config = _config(lambda gke: gke.setdefault("network", {}).update(proxyOnlyCidr="10.0.8.0/23"))
    assert ("gpufleet:cluster.gke.network.proxyOnlyCidr",
            "overlaps cluster.gke.network.subnetCidr (10.0.0.0/20): pod, service, node, control-plane and GPUDirect "
            "ranges must not overlap", "10.0.8.0/23") in _problems(config)


def test_a_range_under_64_addresses_is_refused():
    config = _config(lambda gke: gke.setdefault("network", {}).update(proxyOnlyCidr="10.129.0.0/27"))
    ((path, message, value),) = [p for p in _problems(config) if p[0].endswith("proxyOnlyCidr")]
    assert path == "gpufleet:cluster.gke.network.proxyOnlyCidr" and value == "10.129.0.0/27"
    assert "at least 64 IPv4 addresses" in message and "/26" in message


def test_an_existing_network_is_warned_not_changed():
    config = _config(lambda gke: gke.update(network={"existing": dict(EXISTING)}))
    plan = plan_config(config, "inference-gke", policies=False)
    assert by_type(plan, SUBNET) == []
    (warning,) = [w for w in plan.warnings if w.path == "gpufleet:cluster.gke.network.existing"]
    assert "REGIONAL_MANAGED_PROXY" in warning.message and "us-central1" in warning.message
    assert "gke-l7-rilb" in warning.message and warning.value == "shared-vpc"  # the internal default (issue 48)
    # (the range key is not judged for a network gpufleet does not create)
    config = _config(lambda gke: gke.update(network={"existing": dict(EXISTING), "proxyOnlyCidr": "10.0.0.0/27"}))
    assert load_config(config, "inference-gke").cluster.gke.network.existing is not None


def test_no_warning_without_a_regional_gateway():
    config = copy.deepcopy(example_config("airgap-gke"))
    config["gpufleet:cluster"]["gke"]["network"] = {"existing": dict(EXISTING)}
    plan = plan_config(config, "airgap-gke", policies=False)
    assert not [w for w in plan.warnings if w.path == "gpufleet:cluster.gke.network.existing"]
