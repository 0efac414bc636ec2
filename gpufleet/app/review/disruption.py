"""Changes of what may take a GPU node away from a running job, for the review (issue 51, docs/upgrades.md).

    lines = disruption_lines(review.changes)

A Karpenter NodePool's `spec.disruption` (consolidation policy and delay, budgets and their schedules) and
`spec.template.spec.expireAfter` decide when Karpenter drains a GPU node; a change of them is shown as a disruption
change even though it updates the NodePool in place, because it changes what happens to the jobs on the pool's nodes
from then on.
"""

from __future__ import annotations

import json

from gpufleet.app.review.diff import ResourceChange

NODEPOOL = "kubernetes:karpenter.sh/v1:NodePool"
PATHS = ("spec.disruption", "spec.template.spec.expireAfter")
WHY = {
    "spec.template.spec.expireAfter": "expiration is forceful: do-not-disrupt does not hold it",
    "spec.disruption.consolidationPolicy": "WhenEmptyOrUnderutilized moves running pods to save money",
    "spec.disruption.budgets": "how many nodes may be drained at once, and when",
    "spec.disruption.consolidateAfter": "how long a node stays empty before it goes",
}


def _value(v) -> str:
    return "unset" if v is None else json.dumps(v, sort_keys=True) if isinstance(v, (dict, list)) else str(v)


def disruption_lines(changes: list[ResourceChange]) -> list[str]:
    out = []
    for c in changes:
        if c.type != NODEPOOL:
            continue
        for i in c.inputs:
            if not i.path.startswith(PATHS):
                continue
            why = next((w for p, w in WHY.items() if i.path.startswith(p)), "")
            out.append(f"{c.name}: {i.path} {_value(i.before)} -> {_value(i.after)}" + (f" ({why})" if why else ""))
    return out
