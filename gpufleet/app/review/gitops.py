"""The review of the delegated layer (docs/gitops.md): where a GitOps engine applies it, `gpufleet diff` shows each of
its objects created, changed or deleted like any resource, under its own group, since merging the pull request (and
its export) is what applies them, not `pulumi up`.

A delegated object keeps the URN the `pulumi` path gives it (gpufleet/app/gitops/layer.py), so moving a stack from
`engine: pulumi` to `argocd` shows its objects unchanged (only who applies them changes, said in a note), and a team's
quota change shows as the one input that changed on its ResourceQuota and ClusterQueue.
"""

from __future__ import annotations

from gpufleet.app.review.diff import ResourceChange


def engine(plan: dict) -> str:
    """The plan's engine for the delegated layer: `pulumi` when the plan carries no delegated layer."""
    d = plan.get("delegated")
    return str(d.get("engine")) if isinstance(d, dict) and d.get("engine") else "pulumi"


def _objects(plan: dict) -> list[dict]:
    d = plan.get("delegated")
    objects = d.get("objects") if isinstance(d, dict) else None
    return [o for o in objects if isinstance(o, dict) and isinstance(o.get("urn"), str)] if isinstance(objects, list) else []


def resources(plan: dict) -> list[dict]:
    """The plan's resources and its delegated objects as resources of the plan JSON's shape."""
    out = list(plan.get("resources") or [])
    for o in _objects(plan):
        manifest = o.get("manifest") if isinstance(o.get("manifest"), dict) else {}
        out.append({"urn": o["urn"], "type": str(o.get("type") or "kubernetes:object"),
                    "name": str(o.get("name") or o["urn"].rsplit("::", 1)[-1]), "parent": None,
                    "inputs": manifest, "options": {}})
    return out


def group(engine_name: str) -> str:
    return f"delegated to {engine_name} (applied when the export is merged, not by pulumi up)"


def mark(changes: list[ResourceChange], base: dict, head: dict) -> list[ResourceChange]:
    """Put the changes of delegated objects in their own group (the head's engine, else the base's)."""
    urns = {o["urn"]: engine(head) for o in _objects(head)}
    for o in _objects(base):
        urns.setdefault(o["urn"], engine(base))
    for c in changes:
        if c.urn in urns:
            c.group = group(urns[c.urn])
    return sorted(changes, key=lambda c: (c.group, c.name, c.type))


def notes(base: dict, head: dict) -> list[str]:
    before, after = engine(base), engine(head)
    if before == after:
        return []
    return [f"the delegated layer (team namespaces, queues, priorities, models, alerts, dashboards) moves from "
            f"{before} to {after}: {_who(after)}"]


def _who(name: str) -> str:
    if name == "pulumi":
        return ("pulumi up applies it again and adopts the objects; delete the engine's Application or Kustomization "
                "first (without cascade), or both apply them")
    return (f"commit `gpufleet export {name}` output and let {name} sync it, then `pulumi state delete` each delegated "
            "URN before the next pulumi up, which otherwise deletes the objects it no longer applies "
            "(docs/gitops.md, \"Moving a stack\")")
