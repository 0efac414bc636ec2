"""The typed, validated model of a stack's `gpufleet:` config. The one place that knows the format.

`load_spec(stack, config, secret_keys)` takes config as Pulumi hands it to a program (keys
`namespace:key`, structured values as objects or JSON strings) and returns a `StackSpec`, or raises
`SpecError` listing every problem with the stack, key path, bad value and what is allowed.

Where a platform's keys differ, the spec asks the platform (gpufleet/base/platforms, `KeyTraits` and
`VersionTraits`): its secret config keys, its `cluster.<name>` block, its Kubernetes versions, its pool fields, its
own checks. It never compares a platform's name.

Checks that span blocks run once every block is valid on its own (`_cross_checks`), in this fixed order:
1. duplicate pool names (here), then the keys of another platform (checks/platform_keys.py), before any check
   judges the keys;
2. the platform's own checks, `KeyTraits.checks` (gpufleet/base/platforms/<name>/keys.py, pointing at
   spec/platforms/<name>*.py);
3. discovered, not listed: the `check` of every module in spec/features/, then of every module in spec/checks/ that
   has one, each package in module-name order. A new check is a new file with
   `check(stack: str, spec: StackSpec, config: dict) -> list[Problem]`; a `check` without a `config` parameter is
   called with (stack, spec) (its signature is inspected once).
Modules without a `check` are not cross checks: a feature's model, and in spec/checks/ depth_checks (runs before
anything reads a value), lifecycle_checks (the plan's warnings), network_checks and region_checks (what the
platforms' checks share), platform_keys (step 1), stack_keys (what the stack file may hold outside `gpufleet:`, judged
with the keys themselves, before anything else).
"""

from __future__ import annotations

import functools
import importlib
import inspect
import json
import pkgutil
import typing
import warnings
from typing import Any, Callable, Iterable, Optional

import pydantic
from pydantic import BaseModel

# Not `platforms`: that name is this package's subpackage of the platforms' keys (spec/platforms/).
from gpufleet.base import platforms as registry
from gpufleet.base.spec import checks as _checks_package
from gpufleet.base.spec import features as _features_package
from gpufleet.base.spec.checks import depth_checks, platform_keys, stack_keys
from gpufleet.base.spec.cluster import ClusterSpec, Host, K3sSpec
from gpufleet.base.spec.errors import Problem, SpecError, format_path
from gpufleet.base.spec.features.amd_operator import AmdDriverSpec, AmdGpuOperatorSpec
from gpufleet.base.spec.features.operator import DriverSpec, GpuOperatorSpec
from gpufleet.base.spec.platforms.aks import AksPoolSpec, AksSpec
from gpufleet.base.spec.platforms.eks import EksSpec
from gpufleet.base.spec.platforms.gke import GkePoolSpec, GkeSpec
from gpufleet.base.spec.pools import NodePoolSpec, SharingSpec, Taint
from gpufleet.base.spec.stack import StackSpec, WorkloadsSpec
from gpufleet.base.spec.text import control_problem, walk_strings

NAMESPACE = "gpufleet"
# Provider config keys that hold a credential: refused with every key outside the allow-list (checks/stack_keys.py);
# the name stays for code that imported it.
PROVIDER_SECRETS = stack_keys.CREDENTIAL_KEYS

__all__ = [
    "AksPoolSpec", "AksSpec", "AmdDriverSpec", "AmdGpuOperatorSpec", "ClusterSpec", "DriverSpec", "EksSpec", "GkePoolSpec", "GkeSpec", "GpuOperatorSpec", "Host", "K3sSpec",
    "NodePoolSpec", "Problem",
    "SharingSpec", "SpecError", "StackSpec", "Taint", "WorkloadsSpec", "NAMESPACE", "SECRET_KEYS",
    "load_spec", "secret_config_keys", "spec_keys", "json_schema",
]


def spec_keys() -> dict[str, str]:
    """Top-level `gpufleet:` keys -> their description."""
    out = {}
    for name, field in StackSpec.model_fields.items():
        out[field.alias or name] = (field.description or "").split(" — ", 1)[-1]
    out.update(secret_config_keys())
    return out


def secret_config_keys() -> dict[str, str]:
    """Secret config keys the program reads directly (never part of the spec, never printed) -> their description:
    every platform's (KeyTraits.secrets), in the platforms' order."""
    return {s.key: s.description for name in registry.names() for s in registry.get(name).keys.secrets}


def __getattr__(name: str) -> Any:
    """`SECRET_KEYS` (0.3) is `secret_config_keys()` now: the platforms declare their secrets, known once they are loaded."""
    if name == "SECRET_KEYS":
        warnings.warn("gpufleet.base.spec.SECRET_KEYS is secret_config_keys() since gpufleet 0.3; the name goes in 0.4",
                      DeprecationWarning, stacklevel=2)
        return secret_config_keys()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _decode(value: Any) -> Any:
    """Pulumi hands structured config to programs as JSON strings; files give objects."""
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def load_spec(stack: str, config: dict[str, Any], secret_keys: Iterable[str] = ()) -> StackSpec:
    """Validate the `gpufleet:` part of a stack's config; raise SpecError with every problem."""
    secrets = secret_config_keys()
    depth_checks.refuse_deep(stack, config, NAMESPACE, secrets)  # before any check walks a value
    secret_keys = set(secret_keys)
    allowed = spec_keys()
    data: dict[str, Any] = {}
    problems: list[Problem] = []
    for full_key, value in config.items():
        namespace, _, key = full_key.partition(":")
        if namespace != NAMESPACE:
            # Outside `gpufleet:` only the provider keys gpufleet needs, each in its shape (checks/stack_keys.py).
            outside = stack_keys.config_key_problem(stack, full_key, value, full_key in secret_keys)
            problems += [outside] if outside else []
            continue
        if control_problem(key):
            problems.append(Problem(stack, f"{NAMESPACE}:{_shown(key)}", f"the key {control_problem(key)}"))
        elif key not in allowed:
            problems.append(Problem(stack, full_key, f"unknown key (allowed: {', '.join(allowed)}{_did_you_mean(key, allowed)})"))
        elif key not in secrets:
            data[key] = _decode(value)
    too_many = depth_checks.too_many_pools(stack, data)
    if too_many:  # before the checks below walk every pool
        raise SpecError(stack, problems + [too_many])
    # Text first: a control character or an overlong string is refused before any other check echoes it.
    problems += [
        Problem(stack, format_path(NAMESPACE, tuple(_shown(p) if isinstance(p, str) else p for p in loc)),
                f"{problem}: '{_shown(text)}'")
        for key, value in data.items() for loc, problem, text in walk_strings(value, (key,))
    ]
    if problems:
        raise SpecError(stack, problems)
    if "cluster" not in data and not any(p.path.endswith(":cluster") for p in problems):
        problems.append(Problem(stack, f"{NAMESPACE}:cluster", "required key missing (it names the platform and control plane)"))
        raise SpecError(stack, problems)
    try:
        spec = StackSpec.model_validate(data)
    except pydantic.ValidationError as exc:
        problems += [_problem(stack, err) for err in exc.errors()]
        raise SpecError(stack, problems + _secret_checks(stack, data, config, secret_keys)) from None
    problems += _secret_checks(stack, data, config, secret_keys)
    problems += _cross_checks(stack, spec, config)
    if problems:
        raise SpecError(stack, problems)
    return spec


def _shown(text: str, limit: int = 60) -> str:
    """A refused string as an error shows it: control characters escaped, at most `limit` characters."""
    shown = text.encode("unicode_escape").decode("ascii") if control_problem(text) else text
    return shown if len(shown) <= limit else shown[:limit] + f"... ({len(text)} characters)"


def _problem(stack: str, err: dict) -> Problem:
    loc = tuple(err["loc"])
    path = format_path(NAMESPACE, loc)
    kind = err["type"]
    if kind == "extra_forbidden":
        keys = _allowed_keys(loc[:-1])
        hint = _did_you_mean(str(loc[-1]), keys)
        return Problem(stack, path, f"unknown key (allowed: {', '.join(keys)}{hint})")
    if kind == "missing":
        return Problem(stack, path, "required key missing")
    message = err["msg"].removeprefix("Value error, ")
    value = err.get("input")
    if kind in ("value_error", "assertion_error") or isinstance(value, (dict, list)):
        return Problem(stack, path, message)
    return Problem(stack, path, message, value)


def _model_at(loc: tuple) -> Optional[type[BaseModel]]:
    """The spec model class at a key path (following list items and Optional)."""
    model: Any = StackSpec
    for part in loc:
        if isinstance(part, int):
            continue
        field = next((f for n, f in model.model_fields.items() if (f.alias or n) == part), None)
        if field is None:
            return None
        model = _inner_model(field.annotation)
        if model is None:
            return None
    return model


def _inner_model(annotation: Any) -> Optional[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _inner_model(arg)
        if found is not None:
            return found
    return None


def _allowed_keys(loc: tuple) -> list[str]:
    model = _model_at(loc)
    return [f.alias or n for n, f in model.model_fields.items()] if model else []


def _did_you_mean(key: str, allowed: Iterable[str]) -> str:
    import difflib

    close = difflib.get_close_matches(key, list(allowed), n=1)
    return f"; did you mean '{close[0]}'?" if close else ""


def _secret_checks(stack: str, data: dict, config: dict[str, Any], secret_keys: set[str]) -> list[Problem]:
    """The secret config keys of every platform (KeyTraits.secrets), judged for the stack's platform: needed and
    set, set only when needed, never in plain text; another platform's, where it says so (checked on the
    `gpufleet:cluster` mapping as given, even when the rest does not validate)."""
    cluster = data.get("cluster")
    cluster = cluster if isinstance(cluster, dict) else {}
    platform = cluster.get("platform")
    problems = []
    for owner in registry.names():
        for secret in registry.get(owner).keys.secrets:
            if owner == platform:
                problems += _own_secret(stack, secret, cluster, config, secret_keys)
            else:
                problems += _foreign_secret(stack, secret, platform, config, secret_keys)
    return problems


def _own_secret(stack: str, secret: Any, cluster: dict, config: dict[str, Any], secret_keys: set[str]) -> list[Problem]:
    key = f"{NAMESPACE}:{secret.key}"
    if key not in config:
        return [Problem(stack, key, secret.required)] if secret.required and secret.needed(cluster) else []
    if secret.required and not secret.needed(cluster):
        return [Problem(stack, key, secret.unused)] if secret.unused else []
    return [Problem(stack, key, secret.plain)] if key not in secret_keys else []


def _foreign_secret(stack: str, secret: Any, platform: Any, config: dict[str, Any], secret_keys: set[str]) -> list[Problem]:
    key = f"{NAMESPACE}:{secret.key}"
    if key not in config:
        return []
    if secret.elsewhere:
        return [Problem(stack, key, secret.elsewhere.format(platform=platform))]
    if secret.plain_elsewhere and key not in secret_keys:
        return [Problem(stack, key, secret.plain)]
    return []


def _duplicate_pools(stack: str, spec: StackSpec) -> list[Problem]:
    problems: list[Problem] = []
    seen_pools: dict[str, int] = {}
    for i, pool in enumerate(spec.node_pools):
        if pool.name in seen_pools:
            problems.append(Problem(stack, f"{NAMESPACE}:nodePools[{i}].name", f"duplicate pool name (also nodePools[{seen_pools[pool.name]}])", pool.name))
        seen_pools.setdefault(pool.name, i)
    return problems


Check = Callable[[str, StackSpec, dict], list]


def _check(run: Callable) -> Check:
    """`run` as a check of (stack, spec, config): a check that reads no config has no `config` parameter (its
    signature is inspected once, when the checks are found)."""
    if "config" in inspect.signature(run).parameters:
        return run
    return lambda stack, spec, config: run(stack, spec)


# Feature checks whose function is not (yet) a `check` of a spec/features/*_checks.py module, called by name where
# they ran before discovery: the first four before the platform's checks, the last two after every discovered one.
# Renaming each to `check` in a *_checks module lets discovery find it and these lists go.

@functools.cache
def _discovered_checks() -> tuple[Check, ...]:
    """The `check` of every module in spec/features/, then in spec/checks/, that has one, each package's modules in
    name order."""
    found = []
    for package in (_features_package, _checks_package):
        for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
            module = importlib.import_module(f"{package.__name__}.{info.name}")
            if hasattr(module, "check"):
                found.append(_check(module.check))
    return tuple(found)


def _cross_checks(stack: str, spec: StackSpec, config: dict[str, Any]) -> list[Problem]:
    """Checks that span blocks (they run once every block is valid on its own), in the order the module docstring
    gives."""
    problems = _duplicate_pools(stack, spec) + platform_keys.foreign_keys(stack, spec)
    problems += registry.of(spec).keys.checks(stack, spec, config)
    for run in _discovered_checks():
        problems += run(stack, spec, config)
    return problems


def json_schema() -> dict:
    """JSON Schema of a `stacks/Pulumi.<stack>.yaml` file's gpufleet part."""
    inner = StackSpec.model_json_schema(by_alias=True)
    defs = inner.pop("$defs", {})
    props = {f"{NAMESPACE}:{k}": v for k, v in inner["properties"].items()}
    for key, description in secret_config_keys().items():
        props[f"{NAMESPACE}:{key}"] = {
            "description": description,
            "type": "object",
            "properties": {"secure": {"type": "string"}},
            "required": ["secure"],
        }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "gpufleet stack configuration (stacks/Pulumi.<stack>.yaml)",
        "type": "object",
        "properties": {
            "config": {
                "type": "object",
                "properties": props,
                "required": [f"{NAMESPACE}:{k}" for k in inner.get("required", [])],
                "patternProperties": {"^(?!gpufleet:)": {}},
                "additionalProperties": False,
            }
        },
        "required": ["config"],
        "$defs": defs,
    }
