"""No perpetual diffs (issue 50): every field a cloud rewrites after `pulumi up` is covered by the resource's
`ignore_changes`, so planning the same stack again against what the cloud reports finds no diff.

For each cloud resource gpufleet registers with `ignore_changes`, the state is the plan's inputs with the cloud's
rewrites applied (what the API would return after an autoscaler moved the size), and the next plan is the same
program's inputs: the changes the engine would act on (the review's input diff, less the ignored paths, matched as the
engine matches them: a path and everything below it) must be none. Each rewrite must also be caught without the
ignore, or the test would prove nothing. The real engine's second preview: tests/e2e (`expect_no_changes=True`).
"""

from __future__ import annotations

import copy

import pytest

from gpufleet.app.review.diff import input_changes
from tests.helpers import planned

# Type token -> {input path: what the cloud writes there after `up`}, each with why.
CLOUD_REWRITES = {
    # The cluster autoscaler owns the desired size (pulumi/pulumi-eks#321): it moves it between min and max.
    "aws:eks/nodeGroup:NodeGroup": {"scalingConfig.desiredSize": 3.0},
    # GKE rewrites initialNodeCount when the autoscaler resizes the pool (hashicorp/terraform-provider-google#6354).
    "gcp:container/nodePool:NodePool": {"initialNodeCount": 3.0},
    "gcp:container/cluster:Cluster": {"initialNodeCount": 2.0},
    # The AKS cluster autoscaler owns an agent pool's count when auto-scaling is on (AKS REST API AgentPool.count; the
    # same convention as terraform-provider-azurerm#1924 for the classic provider's node_count).
    "azure-native:containerservice:AgentPool": {"count": 3.0},
    "azure-native:containerservice:ManagedCluster": {"agentPoolProfiles[0].count": 3.0},
}
STACKS = ["prod-eks", "prod-gke", "aks-train"]


def _set(inputs: dict, path: str, value) -> None:
    """inputs at a dotted path whose steps may index a list (`agentPoolProfiles[0].count`)."""
    *parents, leaf = path.split(".")
    for p in parents:
        key, _, index = p.partition("[")
        inputs = inputs.setdefault(key, {}) if not index else inputs[key][int(index.rstrip("]"))]
    inputs[leaf] = value


def _ignored(path: str, ignore: list[str]) -> bool:
    return any(path == i or path.startswith(i + ".") or path.startswith(i + "[") for i in ignore)


def _rewritten(stack: str) -> list:
    """The stack's resources a cloud rewrites and gpufleet registers with ignore_changes. Read when a test runs, not
    at collection: planning at import made every pytest worker plan three stacks before running anything."""
    return [r for r in planned(stack).resources if r.type in CLOUD_REWRITES and r.ignore_changes]


@pytest.mark.parametrize("stack", STACKS)
def test_what_the_cloud_rewrites_plans_back_with_no_diff(stack):
    resources = _rewritten(stack)
    assert resources, f"{stack} registers no resource the cloud rewrites"
    for r in resources:
        state = copy.deepcopy(r.inputs)
        for path, value in CLOUD_REWRITES[r.type].items():
            _set(state, path, value)
        raw = input_changes(r.type, state, r.inputs)
        assert {c.path for c in raw} == set(CLOUD_REWRITES[r.type]), f"{r.name}: the rewrite must show without the ignore"
        left = [(c.path, c.before, c.after) for c in raw if not _ignored(c.path, r.ignore_changes)]
        assert left == [], f"{r.name}: a second `up` would change {left} (ignore_changes: {r.ignore_changes})"
