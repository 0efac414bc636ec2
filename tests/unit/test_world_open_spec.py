"""The spec refuses a public API endpoint open to the internet however its CIDR blocks are spelled (issue 31;
gpufleet/base/cidrs.py): EKS `endpoint.publicAccessCidrs` and GKE `authorizedNetworks` (unless the endpoint is
private), with exit 2 naming the stack, the key and the blocks."""

from __future__ import annotations

import pytest

from gpufleet.app import cli
from gpufleet.base.spec import SpecError, load_spec
from tests.helpers import example_config

HINT = "together these open the API to the internet (more than a /8's worth of public addresses); allowed: your own networks, or a private endpoint"
OPEN = [["0.0.0.0/1", "128.0.0.0/1"], ["::/1", "8000::/1"], ["::ffff:0.0.0.0/96"], ["0.0.0.0/1"],
        [f"{i}.0.0.0/8" for i in range(0, 256, 2)]]
CLOSED = [["203.0.113.0/24"], ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"], ["2001:db8::/32"]]


def _problems(stack: str, config: dict) -> list[str]:
    try:
        load_spec("bad", config)
    except SpecError as exc:
        return [str(p) for p in exc.problems]
    return []


def _eks(cidrs: list[str]) -> dict:
    config = example_config("prod-eks")
    config["gpufleet:cluster"]["eks"]["endpoint"] = {"publicAccessCidrs": cidrs}
    return config


def _gke(cidrs: list[str], private_endpoint: bool = False) -> dict:
    config = example_config("prod-gke")
    config["gpufleet:cluster"]["gke"]["authorizedNetworks"] = [{"cidr": c, "name": f"n{i}"} for i, c in enumerate(cidrs)]
    config["gpufleet:cluster"]["gke"]["privateEndpoint"] = private_endpoint
    return config


@pytest.mark.parametrize("cidrs", OPEN, ids=lambda v: ",".join(v)[:40])
def test_world_open_endpoints_are_refused(cidrs):
    assert _problems("bad", _eks(cidrs)) == [
        f"stack 'bad': gpufleet:cluster.eks.endpoint.publicAccessCidrs: {', '.join(cidrs)}: {HINT}"]
    assert _problems("bad", _gke(cidrs)) == [f"stack 'bad': gpufleet:cluster.gke.authorizedNetworks: {', '.join(cidrs)}: {HINT}"]


@pytest.mark.parametrize("cidrs", CLOSED, ids=lambda v: ",".join(v)[:40])
def test_own_and_private_networks_are_allowed(cidrs):
    if any(":" in c for c in cidrs):
        # gpufleet's EKS clusters are IPv4, whose public endpoint EKS refuses IPv6 blocks for (issue 33, eks.py).
        assert _problems("bad", _eks(cidrs)) == [
            f"stack 'bad': gpufleet:cluster.eks.endpoint.publicAccessCidrs: {', '.join(cidrs)}: an IPv6 block; gpufleet's "
            "EKS clusters are IPv4, and EKS refuses IPv6 blocks on an IPv4 cluster's public endpoint (allowed: IPv4 CIDR "
            "blocks, e.g. your egress address as 203.0.113.7/32)"]
    else:
        assert _problems("bad", _eks(cidrs)) == []
    assert _problems("bad", _gke(cidrs)) == []


def test_a_private_gke_endpoint_may_list_anything():
    assert _problems("bad", _gke(["0.0.0.0/0"], private_endpoint=True)) == []


@pytest.mark.parametrize("spelling", ["0.0.0.0/0 ", "000.0.0.0/0", "1.2.3.4/0"])
def test_other_spellings_are_not_cidr_blocks(spelling):
    assert _problems("bad", _eks([spelling])) == [
        f"stack 'bad': gpufleet:cluster.eks.endpoint.publicAccessCidrs: '{spelling}' is not a CIDR block such as 10.0.0.0/16"]
    assert _problems("bad", _gke([spelling])) == [
        f"stack 'bad': gpufleet:cluster.gke.authorizedNetworks[0].cidr: '{spelling}' is not a CIDR block such as 10.0.0.0/20"]


def test_plan_exits_2_and_registers_nothing(tmp_path, capsys):
    """Formerly the broken-stack corpus's gke-authorized-network-open-to-internet (exit 1 from secure-defaults):
    the spec refuses it now, before anything is registered."""
    import yaml

    path = tmp_path / "Pulumi.bad.yaml"
    path.write_text(yaml.safe_dump({"config": _gke(["0.0.0.0/0"])}))
    assert cli.main(["plan", "bad", "--config", str(path), "--format", "json"]) == cli.EXIT_INVALID
    out, err = capsys.readouterr()
    # --format json: the error document, no plan (gpufleet/app/json_errors.py)
    assert out.startswith('{\n  "error": {\n    "exitCode": 2,') and '"resources"' not in out
    assert err.splitlines() == [
        "gpufleet: invalid gpufleet config for stack 'bad' (1 problem):",
        f"  - stack 'bad': gpufleet:cluster.gke.authorizedNetworks: 0.0.0.0/0: {HINT}",
    ]
