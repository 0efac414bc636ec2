"""existing: policy traits (gpufleet/base/platforms/contract/policy.py says what each one means)."""

from __future__ import annotations

from gpufleet.base.platforms.contract.policy import NodeKind, PolicyTraits


class ExistingPolicy(PolicyTraits):
    """An existing cluster's nodes are not resources of the program: no pool types for the pack."""

    # The labels a pool puts on nodes it lists (existing.nodes) are NodePatches (components/existing/node_pool.py).
    other_node_kinds = (NodeKind("existing-cluster pool", "kubernetes:core/v1:NodePatch"),)
