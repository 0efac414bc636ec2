"""The plan's check of every custom resource it registers against the CRD the pinned chart installs (docs/validation.md).

    problems, warnings = check_custom_resources(stack, spec, registrations, charts_dir())

A problem stops the plan (exit 2 from `gpufleet plan`): the API server would refuse the object at `pulumi up`. Each
names the stack key that produced the value where gpufleet can trace it (gpufleet.app.plan.cr_origin), the object,
its field path, the CRD's own message, and the chart the CRD came from. A warning names the custom resources that
could not be validated on this machine and why (no chart archive here, or a CRD only the platform installs): a plan
never skips a check silently.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from gpufleet.app.plan.cr_origin import block_key, spec_key
from gpufleet.app.plan.crd_sources import Crd, NotServed, NotValidated, lookup
from gpufleet.app.plan.custom_resources import validate
from gpufleet.app.plan.mocks import SECRET, UNKNOWN, Registration
from gpufleet.base.spec import Problem, StackSpec

# Resource types that are not one Kubernetes object (tests/k8s_validate.py has the same list).
_NOT_OBJECTS = ("kubernetes:helm.sh/", "kubernetes:yaml", "pulumi:providers:")


def _placeholders(resources: list[Registration]) -> set:
    """Values only a deployment knows, which the plan's mocks stand in for: the `<name>-id` ids PlanMocks answers
    (gpufleet.app.plan.mocks), unknowns and secrets. A CRD pattern such as `^subnet-[0-9a-z]+$` judges the real id."""
    return {f"{r.name}-id" for r in resources} | {SECRET, UNKNOWN}


def _objects(resources: list[Registration]) -> list[tuple[Registration, dict]]:
    """Every Kubernetes object registered, as its manifest (secrets redacted: a message never echoes one)."""
    out = []
    for r in resources:
        if not r.type.startswith("kubernetes:") or r.type.startswith(_NOT_OBJECTS) or not r.custom:
            continue
        obj = dict(r.inputs)
        if "apiVersion" in obj and "kind" in obj:
            obj.setdefault("metadata", {})
            out.append((r, obj))
    return out


def check_custom_resources(stack: str, spec: Optional[StackSpec], resources: list[Registration],
                           charts: Path) -> tuple[list[Problem], list[Problem]]:
    """(problems, warnings) of the custom resources in `resources`, with the CRDs of the archives in `charts`."""
    placeholders = _placeholders(resources)
    problems: list[Problem] = []
    # (stack key, reason) -> the kinds not validated for it (sorted below: registration order can vary between runs).
    not_validated: dict[tuple[str, str], list[str]] = {}
    for r, obj in _objects(resources):
        found = lookup(obj["apiVersion"], obj["kind"], charts)
        if found is None:  # a built-in kind: kubernetes-validate checks those in the tests
            continue
        if isinstance(found, NotServed):
            name = obj["metadata"].get("name", r.name)
            problems.append(Problem(stack, block_key(obj["kind"]) or f"resource {r.name}",
                                    f"{obj['kind']} '{name}' is written at {obj['apiVersion']}, which the API server "
                                    f"would refuse: {found.reason}"))
            continue
        if isinstance(found, NotValidated):
            key = (block_key(obj["kind"]) or f"resource {r.name}", found.reason)
            kinds = not_validated.setdefault(key, [])
            if obj["kind"] not in kinds:
                kinds.append(obj["kind"])
            continue
        try:
            problems += _problems(stack, spec, r, obj, found, placeholders)
        except Exception as exc:  # noqa: BLE001 - a CRD read from disk that cannot be applied is not validated
            reason = f"its CRD ({found.source}) cannot be applied: {type(exc).__name__}"
            key = (block_key(obj["kind"]) or f"resource {r.name}", reason)
            kinds = not_validated.setdefault(key, [])
            if obj["kind"] not in kinds:
                kinds.append(obj["kind"])
    warnings = [
        Problem(stack, where, f"{', '.join(sorted(kinds))} not validated against {'its' if len(kinds) == 1 else 'their'} "
                              f"CRD: {reason}")
        for (where, reason), kinds in sorted(not_validated.items())
    ]
    return problems, warnings


def _problems(stack: str, spec: Optional[StackSpec], r: Registration, obj: dict, crd: Crd, placeholders: set) -> list[Problem]:
    out = []
    for f in validate(obj, crd.schema):
        if isinstance(f.value, str) and f.value in placeholders:
            continue
        name = obj["metadata"].get("name", r.name)
        where = spec_key(spec, obj, f.path) or f"resource {r.name}"
        out.append(Problem(stack, where, f"{obj['kind']} '{name}' field {f.path}: {f.message} "
                                         f"(refused by the API server: {crd.source})"))
    return out
