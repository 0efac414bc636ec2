"""Changes of what may take a GPU node away from a running job, for the review (issue 51, docs/upgrades.md).

    lines = disruption_lines(review.changes)

A Karpenter NodePool's `spec.disruption` (consolidation policy and delay, budgets and their schedules) and
`spec.template.spec.expireAfter` decide when Karpenter drains a GPU node; a change of them is shown as a disruption
change even though it updates the NodePool in place, because it changes what happens to the jobs on the pool's nodes
from then on. Likewise the cluster autoscaler's scale-down settings: its flags (the release's `extraArgs`) and
what each platform declares (ReviewTraits.scale_down_settings: EKS GPU node groups' autoscaling-options tags).
"""

from __future__ import annotations

import json
from typing import Optional

from gpufleet.app.review.diff import ResourceChange
from gpufleet.base import platforms, versions

NODEPOOL = "kubernetes:karpenter.sh/v1:NodePool"
RELEASE = "kubernetes:helm.sh/v3:Release"
PATHS = ("spec.disruption", "spec.template.spec.expireAfter")
WHY = {
    "spec.template.spec.expireAfter": "expiration is forceful: do-not-disrupt does not hold it",
    "spec.disruption.consolidationPolicy": "WhenEmptyOrUnderutilized moves running pods to save money",
    "spec.disruption.budgets": "how many nodes may be drained at once, and when",
    "spec.disruption.consolidateAfter": "how long a node stays empty before it goes",
}


def _value(v) -> str:
    return "unset" if v is None else json.dumps(v, sort_keys=True) if isinstance(v, (dict, list)) else str(v)


# The cluster autoscaler's cluster-wide scale-down flags (components/eks/autoscaler.py `extraArgs`; the FAQ's flag table
# at the tag of the 1.35 image in versions.CLUSTER_AUTOSCALER_IMAGES): groups without their own autoscaling-options
# tags follow them.
AUTOSCALER_FLAGS = {
    "values.extraArgs.scale-down-unneeded-time": "how long a node stays unneeded before it goes",
    "values.extraArgs.scale-down-delay-after-add": "how long after a scale-up scale-down resumes",
    "values.extraArgs.scale-down-utilization-threshold": "below it a node is a scale-down candidate",
    "values.extraArgs.scale-down-gpu-utilization-threshold": "below it a GPU node is a scale-down candidate",
    "values.extraArgs.scale-down-unready-time": "how long an unready node stays before it goes",
}


def _rows(change: ResourceChange) -> dict[str, str]:
    """Input path prefix -> why, of the settings of this resource that decide when a GPU node is taken away."""
    if change.type == NODEPOOL:
        return {p: "" for p in PATHS} | WHY
    if change.type == RELEASE:  # `extraArgs.scale-down-*` are the cluster-autoscaler chart's flags
        return AUTOSCALER_FLAGS
    rows: dict[str, str] = {}
    for name in platforms.names():
        rows.update(platforms.get(name).review.scale_down_settings.get(change.type, {}))
    return rows


def disruption_lines(changes: list[ResourceChange]) -> list[str]:
    """One line per changed input that decides when a GPU node is drained or removed: Karpenter NodePools' disruption
    settings, the cluster autoscaler's flags and the platforms' scale-down settings (ReviewTraits.scale_down_settings),
    with what the setting does (the longest matching prefix's)."""
    out = []
    for c in changes:
        rows = _rows(c)
        if not rows:
            continue
        for i in c.inputs:
            hits = sorted((p for p in rows if i.path.startswith(p)), key=len)
            if not hits:
                continue
            why = next((rows[p] for p in reversed(hits) if rows[p]), "")
            out.append(f"{c.name}: {i.path} {_value(i.before)} -> {_value(i.after)}" + (f" ({why})" if why else ""))
    return out


def _operator_release(plan: dict) -> Optional[dict]:
    for r in plan.get("resources") or []:
        inputs = r.get("inputs") if isinstance(r, dict) and isinstance(r.get("inputs"), dict) else {}
        if r.get("type") == RELEASE and versions.chart_name_of(str(inputs.get("chart", "")), str(inputs.get("version", ""))) \
                == versions.GPU_OPERATOR.name:
            return inputs
    return None


def _n(v) -> str:
    """A plan number as written (plans carry numbers as floats: 1.0 is 1)."""
    return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)


def _hours(seconds) -> str:
    s = int(seconds) if isinstance(seconds, (int, float)) else 0
    return "for ever" if s <= 0 else f"{s // 3600} h" if s % 3600 == 0 else f"{s // 60} min"


def driver_rollout(base: dict, head: dict) -> list[str]:
    """What a change of the operator-managed NVIDIA driver does to the GPU nodes: how many roll, at what pace, what is
    evicted (the head release's driver.upgradePolicy, components/gpu_stack/operator.py DRIVER_UPGRADE_POLICY)."""
    before, after = _operator_release(base), _operator_release(head)
    if before is None or after is None:
        return []
    old, new = (before.get("values") or {}).get("driver") or {}, (after.get("values") or {}).get("driver") or {}
    if not new.get("enabled") or old.get("version") == new.get("version"):
        return []
    pools = [(p.get("pool"), p.get("minNodes"), p.get("maxNodes")) for p in head.get("capacity") or []
             if isinstance(p, dict) and any(str(k).startswith("nvidia.com/") for k in (p.get("advertisedPerNode") or {}))]
    low = sum(int(p[1] or 0) for p in pools)
    high = sum(int(p[2] or 0) for p in pools)
    policy = new.get("upgradePolicy") or {}
    if not policy.get("autoUpgrade", True):
        return [f"GPU driver {old.get('version')} -> {new.get('version')}: autoUpgrade is off, no node reloads it until its "
                "driver pod is deleted by hand"]
    wait = policy.get("waitForCompletion") or {}
    deletion = policy.get("gpuPodDeletion") or {}
    drain = policy.get("drain") or {}
    parallel = _n(policy.get("maxParallelUpgrades", 1))
    evicted = "every pod using a GPU is deleted" + (
        " (pods without a controller too" + (", emptyDir data lost)" if deletion.get("deleteEmptyDir") else ")")
        if deletion.get("force") else "")
    return [
        f"GPU driver {old.get('version')} -> {new.get('version')} (operator-managed): every NVIDIA GPU node reloads its "
        f"driver: {low}-{high} nodes in pools {', '.join(f'{p} ({a}-{b})' for p, a, b in pools) or 'none'}",
        f"pace: {'all nodes at once' if parallel == '0' else f'{parallel} node(s) at a time'}, at most "
        f"{_n(policy.get('maxUnavailable', '25%'))} unavailable (driver.upgradePolicy)",
        f"per node: cordon; wait {_hours(wait.get('timeoutSeconds', 0))} for pods matching "
        f"{wait.get('podSelector') or '(none)'} to finish; then {evicted}, within {_hours(deletion.get('timeoutSeconds', 300))}; "
        + ("node drained" if drain.get("enable") else "no drain of other pods") + "; driver reloaded; uncordon",
    ]
