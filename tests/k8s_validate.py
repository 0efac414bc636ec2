"""Validate the Kubernetes objects a plan declares against the real OpenAPI schemas (kubernetes-validate).

Core kinds are checked strictly (unknown fields are errors) for the stack's pinned Kubernetes version.
Custom resources have no schema in kubernetes-validate; `is_core` tells them apart.
"""

from __future__ import annotations

import functools

import kubernetes_validate
import kubernetes_validate.utils

from gpufleet.app.plan.mocks import Registration

# kubernetes-validate 1.34 reads and parses its schema files, _definitions.json included, on every call (about 30 ms):
# read once per process, the same files give the same answers (validators do not change a schema).
if not hasattr(kubernetes_validate.utils.schema_contents, "cache_info"):
    kubernetes_validate.utils.schema_contents = functools.lru_cache(maxsize=None)(kubernetes_validate.utils.schema_contents)

# Resource types that are not Kubernetes objects themselves.
NOT_OBJECTS = ("kubernetes:helm.sh/", "kubernetes:yaml", "pulumi:providers:")


def k8s_objects(resources: list[Registration]) -> list[Registration]:
    return [r for r in resources if r.type.startswith("kubernetes:") and not r.type.startswith(NOT_OBJECTS)]


def as_object(r: Registration) -> dict:
    """The manifest a kubernetes resource's inputs describe (the SDK puts apiVersion and kind in them)."""
    obj = dict(r.revealed)
    obj.setdefault("metadata", {})
    return obj


def is_core(obj: dict, kubernetes_version: str) -> bool:
    try:
        kubernetes_validate.validate({"apiVersion": obj["apiVersion"], "kind": obj["kind"]}, kubernetes_version, strict=True)
        return True
    except kubernetes_validate.SchemaNotFoundError:
        return False
    except kubernetes_validate.ValidationError:
        return True


def validate_strict(obj: dict, kubernetes_version: str) -> None:
    """Raise kubernetes_validate.ValidationError with the first problem, if any."""
    kubernetes_validate.validate(obj, f"{kubernetes_version}.0", strict=True)
