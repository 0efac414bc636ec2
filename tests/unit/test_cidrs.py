"""World-open is judged by what CIDR blocks cover together, not how they are spelled (gpufleet/base/cidrs.py;
issue 31). The spec and the secure-defaults policy both ask `world_open`."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpufleet.base import cidrs


@pytest.mark.parametrize("values", [
    ["0.0.0.0/0"], ["::/0"],
    ["0.0.0.0/1", "128.0.0.0/1"],  # the example
    ["::/1", "8000::/1"],
    ["0.0.0.0/1"],  # half the internet
    ["1.2.3.4/0"],  # host bits set: the network it names is 0.0.0.0/0
    ["::ffff:0.0.0.0/96"],  # every IPv4 address, IPv4-mapped
    ["::ffff:0.0.0.0/97"],  # half of them
    [f"{i}.0.0.0/8" for i in range(0, 256, 2)],  # every other /8: blocks that do not merge
    ["11.0.0.0/8", "12.0.0.0/8"],  # two public /8s
    ["2000::/3"],  # IPv6 global unicast
], ids=lambda v: ",".join(v)[:40])
def test_world_open(values):
    assert cidrs.world_open(values) and cidrs.unjudgeable(values) == []


@pytest.mark.parametrize("values", [
    [], ["203.0.113.0/24"], ["11.0.0.0/8"],  # one /8 is the most one list may cover
    ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10"],  # not globally reachable
    ["fc00::/7", "fe80::/10"],
    ["2001:db8::/32"], ["::ffff:203.0.113.0/120"],
    ["203.0.113.7"],  # a bare address: one host
], ids=lambda v: ",".join(v)[:40])
def test_not_world_open(values):
    assert not cidrs.world_open(values) and cidrs.unjudgeable(values) == []


@pytest.mark.parametrize("value", ["0.0.0.0/0 ", " 0.0.0.0/0", "000.0.0.0/0", "0.0.0.0/-1", "0/0", "any", "", None, 0, ["0.0.0.0/0"]])
def test_spellings_ipaddress_does_not_parse_cannot_be_judged(value):
    assert cidrs.unjudgeable([value, "203.0.113.0/24"]) == [value]


def _partition(net: ipaddress.IPv4Network, draw) -> list:
    """`net` split at random into blocks (down to /12) that cover it exactly."""
    if net.prefixlen >= 12 or not draw(st.booleans()):
        return [net]
    low, high = net.subnets(prefixlen_diff=1)
    return _partition(low, draw) + _partition(high, draw)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_any_split_of_the_internet_with_a_few_holes_is_world_open(data):
    blocks = _partition(ipaddress.ip_network("0.0.0.0/0"), data.draw)
    small = [i for i, b in enumerate(blocks) if b.prefixlen >= 8]  # holes of at most a /8 each
    holes = data.draw(st.lists(st.sampled_from(small), max_size=3, unique=True)) if small else []
    kept = [str(b) for i, b in enumerate(blocks) if i not in holes]
    assert cidrs.world_open(data.draw(st.permutations(kept)))


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 255), st.lists(st.tuples(st.integers(0, 2 ** 24 - 1), st.integers(8, 32)), max_size=20))
def test_anything_inside_one_slash_8_is_not(first, blocks):
    base = first << 24
    values = [str(ipaddress.ip_network((base + offset, prefix), strict=False)) for offset, prefix in blocks]
    assert not cidrs.world_open(values)
