"""What a secret input carries, without its values: per key, a digest (the plan JSON's `secretDigests`).

A k3s host's whole configuration (its node labels and taints, the server it joins, the join token, registry
credentials) travels as the install command's `stdin`, a secret: the plan and a preview show it as `[secret]`, so a
change to a pool's GPU model or taints reviewed as "no resource changes". The plan records, for each secret input,
which keys it holds and a digest of each (a YAML mapping such as k3s's config.yaml, or a map, is split into its
top-level keys; any other value is one digest under `""`), and `gpufleet diff` names the keys whose digest changed
(review/diff.py).

No secret reaches a digest: in an offline plan every secret config value is the placeholder `[secret]`
(app/plan/stackfile.py) and every generated secret is the mocks' fixed stand-in (app/plan/mocks.py), so a digest
covers only values the plan already holds in clear. A changed secret value itself is the stack file record's
finding (review/config.py), not this one's.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

import yaml

_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")
# libyaml's safe loader where PyYAML has it (its wheels do): the same values, several times faster.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def digest(value: Any) -> str:
    """A short, stable digest of a JSON value: `sha256:` and 16 hex digits of its canonical JSON."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()[:16]


def at(value: Any, path: str) -> Any:
    """The value at a secret path as the mocks record it (`stdin`, `connection.privateKey`, `values[0].token`; `.` is
    the whole value)."""
    if path in ("", "."):
        return value
    for name, index in _PART.findall(path):
        if name:
            value = value.get(name) if isinstance(value, dict) else None
        else:
            value = value[int(index)] if isinstance(value, list) and int(index) < len(value) else None
    return value


def split(value: Any) -> dict[str, str]:
    """Key -> digest: a map's keys, a YAML mapping's top-level keys (k3s's config.yaml and registries.yaml), else the
    whole value under `""`."""
    if isinstance(value, str) and ":" in value:
        try:
            parsed = yaml.load(value, Loader=_LOADER)
        except yaml.YAMLError:
            parsed = None
        if isinstance(parsed, dict) and parsed:
            value = parsed
    if isinstance(value, dict) and value:
        return {str(k): digest(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    return {"": digest(value)}


def secret_digests(secret_paths: list[str], revealed: dict) -> dict[str, dict[str, str]]:
    """Secret input path -> {key: digest} for one registration ({} when it has no secret input)."""
    return {path: split(at(revealed, path)) for path in sorted(set(secret_paths))}
