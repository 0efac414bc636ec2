"""Whether a list of CIDR blocks opens something to the internet: judged by the addresses it covers, not by how the
blocks are spelled (issue 31: `0.0.0.0/1` and `128.0.0.0/1` together are `0.0.0.0/0`).

**World-open** (the one definition the spec and the secure-defaults policy share): the blocks, merged, cover more
globally reachable addresses of one family than a /8 holds (2**24 for IPv4, 2**120 for IPv6), that is more than
1/256 of that family's space. A list of one organisation's networks stays far below that; `0.0.0.0/0`, `::/0`,
any split of them, and any list covering the internet but for a few holes are above it. Counted per family,
after:
- IPv4-mapped IPv6 blocks (`::ffff:0.0.0.0/96` and its subnets, RFC 4291 §2.5.5.2) are counted as the IPv4
  blocks they map;
- blocks given with host bits set (`1.2.3.4/0`) are taken as the network they name (`0.0.0.0/0`), as the clouds
  normalise them;
- addresses that are not globally reachable are not counted: RFC 1918 private ranges, RFC 6598 shared address
  space (100.64.0.0/10), loopback, link-local, IPv6 unique-local (fc00::/7, RFC 4193) and link-local (fe80::/10).
  So a private endpoint's authorized networks may list all of 10.0.0.0/8, 172.16.0.0/12 and 192.168.0.0/16.

A value Python's `ipaddress` does not parse as a network (surrounding spaces, leading zeros such as `000.0.0.0/0`,
not a string) cannot be judged: `unjudgeable` lists it, and callers refuse it rather than guess what a cloud makes
of it. A bare address is a single host (`/32`, `/128`).
"""

from __future__ import annotations

import ipaddress
from typing import Iterable, Optional, Union

Network = Union[ipaddress.IPv4Network, ipaddress.IPv6Network]

WORLD_FRACTION = 256
"""World-open: more than 1/WORLD_FRACTION of a family's addresses (a /8's worth) are globally reachable."""

WORLD_OPEN_HINT = ("together these open the API to the internet (more than a /8's worth of public addresses); "
                   "allowed: your own networks, or a private endpoint")

# RFC 1918 private address ranges (also the VPC association rules in gpufleet/base/platforms/eks/addons.py).
RFC1918 = tuple(ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"))

_NOT_GLOBAL = {
    4: [*RFC1918, *(ipaddress.ip_network(n) for n in ("100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16"))],
    6: [ipaddress.ip_network(n) for n in ("fc00::/7", "fe80::/10", "::1/128")],
}
_MAPPED = ipaddress.ip_network("::ffff:0:0/96")


def parse(value: object) -> Optional[Network]:
    """The network a CIDR block names (host bits cleared), or None when `value` is not one."""
    if not isinstance(value, str):
        return None
    try:
        network = ipaddress.ip_network(value, strict=False)
    except ValueError:
        return None
    if network.version == 6 and network.subnet_of(_MAPPED):
        return ipaddress.ip_network(f"{network.network_address.ipv4_mapped}/{network.prefixlen - 96}")
    return network


def unjudgeable(values: Iterable[object]) -> list[object]:
    """The values that are not CIDR blocks (see `parse`), in order."""
    return [v for v in values if parse(v) is None]


def reachable(networks: Iterable[Network], version: int) -> int:
    """How many globally reachable addresses of one family the networks cover together (overlaps counted once)."""
    merged = list(ipaddress.collapse_addresses(n for n in networks if n.version == version))
    count = sum(n.num_addresses for n in merged)
    for private in _NOT_GLOBAL[version]:
        for n in merged:  # CIDR blocks either nest or are disjoint
            if n.subnet_of(private):
                count -= n.num_addresses
            elif private.subnet_of(n):
                count -= private.num_addresses
    return count


def world_open(values: Iterable[object]) -> bool:
    """Whether the CIDR blocks among `values` are world-open (module docstring); values that are not CIDR
    blocks are ignored here (see `unjudgeable`)."""
    networks = [n for n in (parse(v) for v in values) if n is not None]
    return any(reachable(networks, version) * WORLD_FRACTION > (2 ** bits)
               for version, bits in ((4, 32), (6, 128)))
