"""The delegated layer of a stack, as objects: exactly what `pulumi up` would apply with `gitops.engine: pulumi` and
does not with the stack's engine (gpufleet/base/gitops.py decides which parts; this module never decides again).

    plan(stack_file).delegated               # DelegatedObject per Kubernetes object, in sync-wave order

The plan registers the stack twice under its mocks (gpufleet/app/plan/engine.py): as written, and as `pulumi`
(`as_engine`: every object). The delegated layer is what the second registers and the first does not, each object its registration's inputs as a manifest, so the
export, the plan's policies and the review judge the very objects the `pulumi` path applies.

Sync waves follow gpufleet's apply order: an object's wave is one more than the latest wave of the delegated objects
it waits for (its `depends_on` and the outputs it reads, as Pulumi orders them) and of the Namespace it lives in.
"""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass, replace

from gpufleet.app.plan.mocks import Registration
from gpufleet.app.plan.stackfile import StackFile
from gpufleet.base.spec import NAMESPACE, Problem, SpecError

WAVE_ANNOTATION = "argocd.argoproj.io/sync-wave"
# Registrations that are not one Kubernetes object (gpufleet/app/plan/cr_check.py has the same list).
_NOT_OBJECTS = ("kubernetes:helm.sh/", "kubernetes:yaml", "pulumi:providers:")


@dataclass(frozen=True)
class DelegatedObject:
    manifest: dict
    """The object as the `pulumi` path applies it (apiVersion, kind, metadata, spec or its other fields)."""
    wave: int
    """Its sync wave (0 first)."""
    urn: str
    """The URN the `pulumi` path gives it (plans and reviews name it so)."""
    type: str = ""
    """Its Pulumi type token on the `pulumi` path (`kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue`)."""
    name: str = ""
    """Its Pulumi resource name on the `pulumi` path."""

    @property
    def key(self) -> tuple[str, str, str, str]:
        """(apiVersion, kind, namespace, name): how Argo CD and the review tell objects apart."""
        meta = self.manifest.get("metadata", {})
        return (self.manifest["apiVersion"], self.manifest["kind"], meta.get("namespace", ""), meta["name"])

    @property
    def label(self) -> str:
        api, kind, ns, name = self.key
        return f"{kind} {ns + '/' if ns else ''}{name} ({api})"

    def file_name(self) -> str:
        _, kind, ns, name = self.key
        return f"{self.wave:02d}-{kind.lower()}-{ns or '_cluster'}-{name}.yaml"

    def with_wave(self) -> dict:
        """The manifest with its sync-wave annotation, as the export writes it."""
        out = copy.deepcopy(self.manifest)
        meta = out.setdefault("metadata", {})
        meta["annotations"] = {**meta.get("annotations", {}), WAVE_ANNOTATION: str(self.wave)}
        return out


def as_engine(stack_file: StackFile, engine: str) -> StackFile:
    """The same stack file with `gitops.engine` set to `engine`."""
    key = f"{NAMESPACE}:gitops"
    block = stack_file.config.get(key)
    block = dict(block) if isinstance(block, dict) else {}
    config = {**stack_file.config, key: {**block, "engine": engine}}
    return replace(stack_file, config=config)


def objects(stack: str, registrations: list[Registration]) -> list[DelegatedObject]:
    """The delegated registrations as objects with their waves, in wave order (then by kind, namespace, name).
    A SpecError when one is not a plain Kubernetes object or holds a secret value: neither can go to git."""
    problems = []
    custom = [r for r in registrations if r.custom]
    for r in custom:
        if not r.type.startswith("kubernetes:") or r.type.startswith(_NOT_OBJECTS):
            problems.append(Problem(stack, "gpufleet:gitops.engine", f"{r.name} ({r.type}) is not a plain Kubernetes "
                                    "object: it cannot be exported as a manifest"))
        elif r.secret_paths:
            problems.append(Problem(stack, "gpufleet:gitops.engine", f"{r.name} ({r.type}) holds a secret value "
                                    f"({', '.join(r.secret_paths)}): it is never written to git"))
    if problems:
        raise SpecError(stack, problems)
    by_urn = {r.urn: r for r in custom}
    namespaces = {r.inputs["metadata"]["name"]: r.urn for r in custom if r.inputs.get("kind") == "Namespace"}

    @functools.lru_cache(maxsize=None)
    def wave(urn: str) -> int:
        r = by_urn[urn]
        before = {d for d in r.dependencies if d in by_urn and d != urn}
        ns = r.inputs.get("metadata", {}).get("namespace")
        if ns in namespaces and namespaces[ns] != urn:
            before.add(namespaces[ns])
        return 1 + max((wave(d) for d in before), default=-1)

    out = [DelegatedObject(copy.deepcopy(r.inputs), wave(r.urn), r.urn, r.type, r.name) for r in custom]
    return sorted(out, key=lambda o: (o.wave, o.key[1], o.key[2], o.key[3]))
