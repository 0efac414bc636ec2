"""The `gitops` check of `gpufleet verify STACK` (docs/verify.md, docs/gitops.md): what the GitOps engine reports as
applied equals what the export holds.

Argo CD: the Application `gpufleet-<cluster>` in Argo CD's namespace; its `status.resources[]` (group, version, kind,
namespace, name, status Synced|OutOfSync) and `status.sync` (status, revision) as the applications.argoproj.io CRD
of versions.ARGO_CD defines them (../shared/reference/crds/argo-cd/). Flux: the Kustomization `gpufleet-<cluster>`;
its `status.inventory.entries[].id` (`<namespace>_<name>_<group>_<kind>`, Flux "Kustomization", Status, Inventory) and
its Ready condition. The check fails on an object the export holds and the engine does not track, one it tracks and
the export does not hold (a change committed by hand, or an export not yet committed), and one out of sync.
"""

from __future__ import annotations

from typing import Any

from gpufleet.app.gitops.argocd import app_name, cluster_name
from gpufleet.app.gitops.layer import DelegatedObject
from gpufleet.app.verify.run import FAIL, PASS, Check
from gpufleet.base.spec import StackSpec

NAME = "gitops"
SHOWN = 5  # objects named per kind of difference; the rest are counted


def _key(group: str, kind: str, namespace: str, name: str) -> tuple[str, str, str, str]:
    return (group or "", kind, namespace or "", name)


def expected(objects: list[DelegatedObject]) -> set[tuple[str, str, str, str]]:
    out = set()
    for o in objects:
        api, kind, ns, name = o.key
        out.add(_key(api.rpartition("/")[0] if "/" in api else "", kind, ns, name))
    return out


def _label(key: tuple[str, str, str, str]) -> str:
    group, kind, ns, name = key
    return f"{kind}{'.' + group if group else ''} {ns + '/' if ns else ''}{name}"


def _names(keys) -> str:
    keys = sorted(keys)
    more = f" and {len(keys) - SHOWN} more" if len(keys) > SHOWN else ""
    return ", ".join(_label(k) for k in keys[:SHOWN]) + more


def _api_problem(exc: Exception, what: str) -> str:
    status = getattr(exc, "status", None)
    if status == 404:
        return f"{what} not found: apply the export's engine objects once (docs/gitops.md, \"Bootstrap\")"
    return f"{what}: the API answered {status or type(exc).__name__}"


def compare(want: set, tracked: dict, target: str, synced: bool, revision: str) -> Check:
    missing, extra = want - set(tracked), set(tracked) - want
    stale = sorted(k for k in want & set(tracked) if tracked[k] != "Synced")
    problems = []
    if missing:
        problems.append(f"not applied by the engine: {_names(missing)}")
    if extra:
        problems.append(f"applied but not in the export: {_names(extra)}")
    if stale:
        problems.append(f"out of sync: {_names(stale)}")
    if not synced and not problems:
        problems.append("the engine reports the source out of sync")
    at = f" at revision {revision}" if revision else ""
    if problems:
        return Check(NAME, target, FAIL, "; ".join(problems) + at)
    return Check(NAME, target, PASS, f"{len(want)} objects of the export synced{at}")


def argocd_check(custom_api: Any, spec: StackSpec, stack: str, objects: list[DelegatedObject]) -> Check:
    """`custom_api`: a kubernetes.client.CustomObjectsApi (or anything with its get_namespaced_custom_object)."""
    name, ns = app_name(cluster_name(spec, stack)), spec.gitops.argocd.namespace
    target = f"argocd {ns}/{name}"
    try:
        app = custom_api.get_namespaced_custom_object("argoproj.io", "v1alpha1", ns, "applications", name)
    except Exception as exc:  # the client's ApiException, a connection error: the check fails with why
        return Check(NAME, target, FAIL, _api_problem(exc, f"Application {ns}/{name}"))
    status = app.get("status") or {}
    tracked = {_key(r.get("group", ""), r.get("kind", ""), r.get("namespace", ""), r.get("name", "")): r.get("status", "")
               for r in status.get("resources") or [] if isinstance(r, dict)}
    sync = status.get("sync") or {}
    return compare(expected(objects), tracked, target, sync.get("status") == "Synced",
                   str(sync.get("revision") or "")[:12])


def flux_check(custom_api: Any, spec: StackSpec, stack: str, objects: list[DelegatedObject]) -> Check:
    name, ns = app_name(cluster_name(spec, stack)), spec.gitops.flux.namespace
    target = f"flux {ns}/{name}"
    try:
        ks = custom_api.get_namespaced_custom_object("kustomize.toolkit.fluxcd.io", "v1", ns, "kustomizations", name)
    except Exception as exc:
        return Check(NAME, target, FAIL, _api_problem(exc, f"Kustomization {ns}/{name}"))
    status = ks.get("status") or {}
    tracked = {}
    for entry in (status.get("inventory") or {}).get("entries") or []:
        parts = str(entry.get("id", "")).split("_")
        if len(parts) == 4:
            entry_ns, entry_name, group, kind = parts
            tracked[_key(group, kind, entry_ns, entry_name)] = "Synced"
    ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])
    return compare(expected(objects), tracked, target, ready, str(status.get("lastAppliedRevision") or ""))


def check(custom_api: Any, spec: StackSpec, stack: str, objects: list[DelegatedObject]) -> Check:
    """The check for the stack's engine."""
    run = flux_check if spec.gitops.engine == "flux" else argocd_check
    return run(custom_api, spec, stack, objects)
