"""A Kubernetes minor bump in the review: what the new minor needs, from the head plan's `kubernetes` list
(gpufleet/app/plan/kube_needs.py, issue 51, docs/upgrades.md)."""

from __future__ import annotations


def bump_lines(base: dict, head: dict) -> list[str]:
    """`Kubernetes 1.35 -> 1.36` and one line per need of the head (met, NOT MET, unknown), when the minor moves."""
    old = (base.get("kubernetes") or {}).get("version") if isinstance(base.get("kubernetes"), dict) else None
    new_doc = head.get("kubernetes") if isinstance(head.get("kubernetes"), dict) else {}
    new = new_doc.get("version")
    if not old or not new or old == new:
        return []
    out = [f"Kubernetes {old} -> {new}: what {new} needs from the stack"]
    for n in new_doc.get("needs") or []:
        if isinstance(n, dict):
            mark = {True: "ok", False: "NOT MET", None: "unknown"}.get(n.get("ok"), "unknown")
            out.append(f"[{mark}] {n.get('what')}: {n.get('requires')} ({n.get('source')})")
    return out
