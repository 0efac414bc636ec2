"""Custom resources checked as the API server checks them on create: the CRD's structural schema and its CEL rules.

    findings = validate(obj, schema)     # [] when the API server would accept obj

`schema` is a CRD version's openAPIV3Schema, as the plan reads it from the pinned chart archive that installs the CRD
(gpufleet.app.plan.crd_sources). What the API server does, in its order (k8s.io/apiextensions-apiserver
pkg/apiserver/schema):
1. nulls in fields that are not `nullable` are pruned (pruning/algorithm.go, "null values ... are pruned");
2. defaults are applied (defaulting/algorithm.go);
3. the structural schema: types, `x-kubernetes-int-or-string`, enums, patterns, lengths, bounds, required, and
   unknown fields, which the server would drop silently (pruning) and gpufleet counts as mistakes, as
   `kubectl apply --validate=strict` does, unless the schema has `x-kubernetes-preserve-unknown-fields`;
   `x-kubernetes-list-type: map | set` uniqueness;
4. every `x-kubernetes-validations` rule where its value is present (cel/validation.go). Transition rules (those
   that read `oldSelf`) only run on update and are skipped: a plan creates.
Not checked: `format` (the server checks only a few), and webhooks, which run outside the CRD.

The CEL rules are evaluated by gpufleet.app.plan.cel_rules (which says why that CEL implementation).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any, Iterator, Optional

from gpufleet.app.plan.cel_rules import failed_rules, go_pattern


@dataclass(frozen=True)
class Finding:
    path: str
    """Field path in the object, e.g. spec.template.metadata.labels (as `kubectl` prints it)."""
    message: str
    value: Any = None


def _type(schema: dict) -> Optional[str]:
    return schema.get("type")


def _child(schema: dict, key: str) -> Optional[dict]:
    props = schema.get("properties")
    if props is not None and key in props:
        return props[key]
    extra = schema.get("additionalProperties")
    return extra if isinstance(extra, dict) else None


def normalize(value: Any, schema: dict) -> Any:
    """Nulls of non-nullable fields pruned, defaults applied, integral floats as ints where the schema wants an
    integer (Pulumi hands numbers over as floats), ints as floats where it wants a number."""
    if isinstance(value, dict):
        out = {}
        for key, sub in value.items():
            child = _child(schema, key)
            if sub is None and not (child or {}).get("nullable"):
                continue
            out[key] = normalize(sub, child) if child is not None else sub
        for key, child in (schema.get("properties") or {}).items():
            if key not in out and "default" in child:
                out[key] = normalize(copy.deepcopy(child["default"]), child)
        return out
    if isinstance(value, list):
        items = schema.get("items")
        return [normalize(v, items) if isinstance(items, dict) else v for v in value]
    if isinstance(value, float) and value.is_integer() and (
            _type(schema) == "integer" or schema.get("x-kubernetes-int-or-string")):
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool) and _type(schema) == "number":
        return float(value)
    return value


_SCHEMA_MAPS = ("properties", "patternProperties", "definitions")
_VERBATIM = ("default", "enum", "type", "pattern")


def _as_json_schema(schema: Any) -> Any:
    """A Kubernetes structural schema as Draft 7 JSON Schema: nullable, int-or-string, and unknown fields refused.

    A walk with its own stack, not recursion: the schema comes from a chart archive on disk (its depth is bounded
    when it is read, gpufleet.app.plan.crd_sources, and this walk needs no Python frame per level either). Each
    converted map keeps its keys in the schema's order (a placeholder first, filled when its value is converted)."""
    root: list = [None]
    todo: list[tuple[Any, Any, Any]] = [(schema, root, 0)]  # (source, the container to fill, the key in it)
    while todo:
        src, into, at = todo.pop()
        if isinstance(src, list):
            out_list: list = [None] * len(src)
            into[at] = out_list
            todo.extend((v, out_list, i) for i, v in enumerate(src))
            continue
        if not isinstance(src, dict):
            into[at] = src
            continue
        out: dict = {}
        into[at] = out
        for key, value in src.items():
            if key in ("format", "x-kubernetes-validations"):
                continue  # formats: see the module docstring; CEL rules: below
            if key in _VERBATIM:
                out[key] = value
            elif key in _SCHEMA_MAPS and isinstance(value, dict):
                sub: dict = dict.fromkeys(value)
                out[key] = sub
                todo.extend((v, sub, name) for name, v in value.items())
            else:
                out[key] = None
                todo.append((value, out, key))
        if isinstance(out.get("pattern"), str):
            out["pattern"] = go_pattern(out["pattern"])
        if src.get("x-kubernetes-int-or-string"):
            out.pop("type", None)
            out.setdefault("anyOf", [{"type": "integer"}, {"type": "string"}])
        elif src.get("nullable") and "type" in out:
            out["type"] = [out["type"], "null"]
        if "properties" in src and "additionalProperties" not in src and not src.get("x-kubernetes-preserve-unknown-fields"):
            out["additionalProperties"] = False
    return root[0]


# Validators by the id of the schema they were made from, with the schema itself (which keeps the id from being
# reused): the schemas come from crd_sources' per-process cache, so each is converted and checked once.
_VALIDATORS: dict[int, tuple[dict, Any]] = {}


def _validator(schema: dict):
    cached = _VALIDATORS.get(id(schema))
    if cached is None:
        import jsonschema

        cached = _VALIDATORS[id(schema)] = (schema, jsonschema.Draft7Validator(_as_json_schema(schema)))
    return cached[1]


def _path(parts) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "<root>"


# jsonschema prints the whole list or map for these; the count says it.
_COUNTS = {
    "maxItems": "{n} entries, the CRD allows at most {limit}",
    "minItems": "{n} entries, the CRD needs at least {limit}",
    "maxProperties": "{n} keys, the CRD allows at most {limit}",
    "minProperties": "{n} keys, the CRD needs at least {limit}",
}


def _structural(obj: dict, schema: dict) -> list[Finding]:
    validator = _validator(schema)
    findings = []
    for err in sorted(validator.iter_errors(obj), key=lambda e: [str(p) for p in e.absolute_path]):
        if err.validator == "additionalProperties" and err.validator_value is False:
            extra = sorted(set(err.instance) - set(err.schema.get("properties", {})))
            for name in extra:
                findings.append(Finding(_path([*err.absolute_path, name]),
                                        "unknown field: the CRD does not declare it (the API server would drop it)"))
            continue
        value = err.instance if not isinstance(err.instance, (dict, list)) else None
        findings.append(Finding(_path(err.absolute_path), _COUNTS.get(err.validator, "{message}").format(
            message=err.message, n=len(err.instance) if isinstance(err.instance, (dict, list)) else 0,
            limit=err.validator_value), value))
    return sorted(findings, key=lambda f: f.path)


def _rules(value: Any, schema: dict, path: list) -> Iterator[Finding]:
    """The CEL rules of every schema node whose value is present, and the list types' uniqueness."""
    at = _path(path)
    for field_path, message in failed_rules(value, schema):
        yield Finding((at if path else "") + field_path if field_path else at, message,
                      value if not isinstance(value, (dict, list)) else None)
    if isinstance(value, dict):
        for key, sub in value.items():
            child = _child(schema, key)
            if child is not None:
                yield from _rules(sub, child, [*path, key])
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        yield from _list_type(value, schema, path)
        for i, sub in enumerate(value):
            yield from _rules(sub, schema["items"], [*path, i])


def _list_type(value: list, schema: dict, path: list) -> Iterator[Finding]:
    """x-kubernetes-list-type set (items unique) and map (items unique by their list-map keys)."""
    kind = schema.get("x-kubernetes-list-type")
    if kind == "set":
        seen = [json.dumps(v, sort_keys=True) for v in value]
        for i, v in enumerate(seen):
            if v in seen[:i]:
                yield Finding(_path([*path, i]), "duplicate entry in a list of type set", value[i])
    elif kind == "map":
        keys = schema.get("x-kubernetes-list-map-keys") or []
        seen_keys: list = []
        for i, item in enumerate(value):
            key = tuple((item or {}).get(k) for k in keys) if isinstance(item, dict) else None
            if key in seen_keys:
                yield Finding(_path([*path, i]), f"duplicate entry with the same {', '.join(keys)}", None)
            seen_keys.append(key)


def validate(obj: dict, schema: dict) -> list[Finding]:
    """What the API server would refuse in `obj` (one CRD version's openAPIV3Schema): [] when it accepts it."""
    obj = normalize(obj, schema)
    findings = _structural(obj, schema)
    if not findings:  # rules see only values the schema accepts (the server runs them after the schema, too)
        findings = list(_rules(obj, schema, []))
    return findings
