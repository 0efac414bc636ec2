"""What a string from a stack file may hold, and the shapes of the strings that reach a shell, a URL or a
certificate (docs/security.md).

Anyone who can change a stack file can put any text in it. gpufleet writes those strings into shell scripts run on
hosts over SSH, commands printed for an operator to paste, YAML files, URLs and pull-request comments, so every string
is judged where it enters (`load_spec`), before anything is registered:

- no string anywhere in the `gpufleet:` config holds a control character (newline, tab, NUL, ...), a Unicode line or
  paragraph separator or a bidirectional override (which make text read differently than it runs), or is longer
  than TEXT_MAX characters;
- a value that names something (a host, a user, an address, a certificate name, a schedule) has a fixed shape,
  matched against the whole string (`re.fullmatch`, never `re.match` with `$`, which also matches before a trailing
  newline).

Where a value is used in a command it is still quoted (shlex.quote): the shape keeps out what needs no quoting, the
quoting keeps out what the shape missed.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any, Iterator

# C0 and C1 controls and DEL; U+2028/2029 (line/paragraph separators: a new line to YAML and JavaScript); the
# bidirectional embeddings, overrides and isolates U+202A-202E, U+2066-2069 ("Trojan Source", CVE-2021-42574);
# zero-width characters U+200B-200F and the byte order mark, which hide text.
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]")
# The longest string any key holds: reasons are at most 200 (protection.REASON_MAX), ARNs and paths a few hundred.
TEXT_MAX = 1024

# POSIX.1-2017 Base Definitions 3.437 (User Name): characters of the portable filename character set (3.282:
# A-Z a-z 0-9 . _ -), the hyphen not first. At most 32 characters, shadow-utils' limit (useradd(8): "Usernames may
# only be up to 32 characters long"). A leading letter or underscore also keeps a user from reading as an ssh option.
POSIX_USER = re.compile(r"[A-Za-z_][A-Za-z0-9._-]{0,31}")
# A DNS hostname (RFC 1123 2.1): labels of letters, digits and hyphens, neither first nor last a hyphen, at most 63
# characters each, 253 in all. Upper case is allowed (DNS is case-insensitive).
_LABEL = r"[A-Za-z0-9](?:[-A-Za-z0-9]{0,61}[A-Za-z0-9])?"
HOSTNAME = re.compile(rf"{_LABEL}(?:\.{_LABEL})*")
HOSTNAME_MAX = 253
# An IPv6 zone id (RFC 4007 11.2, `fe80::1%eth0`) is an interface name here: Linux names are at most 15 characters
# (IFNAMSIZ 16 with the NUL, include/uapi/linux/if.h) and may not hold '/', ':' or whitespace (dev_valid_name in
# net/core/dev.c); gpufleet allows the characters interface names use in practice.
ZONE_ID = re.compile(r"[A-Za-z0-9_.-]{1,15}")


def control_problem(value: str) -> str | None:
    """Why a string from a stack file is refused whatever its key (None when it is fine)."""
    found = CONTROL.search(value)
    if found:
        return f"holds the control character U+{ord(found.group()):04X}; use plain printable text on one line"
    if len(value) > TEXT_MAX:
        return f"is {len(value)} characters long; at most {TEXT_MAX}"
    return None


def walk_strings(data: Any, loc: tuple = ()) -> Iterator[tuple[tuple, str, str]]:
    """(key path, problem, string) for every string in a parsed stack value, keys included, that control_problem()
    refuses. A key's own path ends with the key."""
    if isinstance(data, str):
        problem = control_problem(data)
        if problem:
            yield loc, problem, data
    elif isinstance(data, dict):
        for key, value in data.items():
            if isinstance(key, str):
                problem = control_problem(key)
                if problem:
                    yield (*loc, key), f"the key {problem}", key
                    continue
            yield from walk_strings(value, (*loc, key))
    elif isinstance(data, list):
        for i, item in enumerate(data):
            yield from walk_strings(item, (*loc, i))


def check_user(value: str) -> str:
    """A POSIX user name (the SSH users of k3s hosts)."""
    if not POSIX_USER.fullmatch(value):
        raise ValueError(
            f"'{value}' is not a POSIX user name: a letter or '_', then letters, digits, '.', '_' or '-', at most 32 "
            "characters"
        )
    return value


def is_hostname(value: str) -> bool:
    """A DNS hostname, not all digits and dots (which would read as a malformed IPv4 address)."""
    return (
        len(value) <= HOSTNAME_MAX
        and HOSTNAME.fullmatch(value) is not None
        and not value.replace(".", "").isdigit()
    )


def check_address(value: str, zone: bool = True) -> str:
    """An IPv4 or IPv6 address or a DNS hostname, matched whole. An IPv6 address may carry a zone id of interface-name
    characters (`fe80::1%eth0`) when `zone` (an SSH address), not when it goes into a URL or a certificate."""
    address, percent, zone_id = value.partition("%")
    if percent:
        if not zone:
            raise ValueError(f"'{value}': an address with a zone id cannot be used here (a URL or a TLS certificate); "
                             "give a global address or a DNS name")
        if not ZONE_ID.fullmatch(zone_id):
            raise ValueError(f"'{value}': the zone id after '%' must be an interface name (letters, digits, '.', '_', "
                             "'-', at most 15 characters)")
        try:
            ipaddress.IPv6Address(address)
        except ValueError:
            raise ValueError(f"'{value}': only an IPv6 address carries a zone id") from None
        return value
    try:
        ipaddress.ip_address(value)
        return value
    except ValueError:
        pass
    if is_hostname(value):
        return value
    raise ValueError(f"'{value}' is not an IP address or a DNS hostname")


def check_url_address(value: str) -> str:
    """An address that is written into URLs and the API server certificate (no zone id)."""
    return check_address(value, zone=False)


def check_san(value: str) -> str:
    """A TLS subject alternative name: an IP address (no zone id) or a DNS name, optionally a wildcard `*.` first
    label (RFC 6125 6.4.3: a wildcard only as the complete left-most label)."""
    name = value[2:] if value.startswith("*.") else value
    try:
        ipaddress.ip_address(value)
        return value
    except ValueError:
        pass
    if "%" not in name and is_hostname(name):
        return value
    raise ValueError(f"'{value}' is not a DNS name or an IP address (a TLS certificate names only those)")


def url_host(address: str) -> str:
    """The host part of a URL for an address: an IPv6 address in brackets (RFC 3986 3.2.2), e.g.
    `https://[2001:db8::5]:6443`; an IPv4 address or a name as it is."""
    try:
        return f"[{address}]" if ipaddress.ip_address(address).version == 6 else address
    except ValueError:
        return address


__all__ = [
    "CONTROL", "TEXT_MAX", "check_address", "check_san", "check_url_address", "check_user", "control_problem",
    "is_hostname", "url_host", "walk_strings",
]
