"""Keys that do not apply to the stack's platform are errors, never silently dropped.

A k3s-only storage block in an EKS stack or another platform's cluster block would plan clean and create nothing.
Run by gpufleet/base/spec/__init__.py before the other cross checks (they judge the keys the platform reads).
Each platform says which keys are its own (KeyTraits): its `cluster.<name>` block, the pool fields only it reads
(`pool_fields`), where its storage is configured (`storage`), whether its pools take policy exemptions
(`exemptions`). (k3s's hosts/gpu/gpusPerNode on a cloud pool are refused by the cloud's own checks.)
"""

from __future__ import annotations

from typing import Any

from gpufleet.base import platforms
from gpufleet.base.spec.errors import Problem
from gpufleet.base.spec.pools import NodePoolSpec

NS = "gpufleet"
# gpufleet:storage blocks the k3s platform reads; the clouds have their own storage under cluster.<platform>.storage
# (KeyTraits.storage). (localPath on a cloud and a cloud pool's rdmaNetwork are refused in sharing_checks.py already.)
K3S_STORAGE = {"nfs": "nfs", "checkpoints": "checkpoints"}


def foreign_keys(stack: str, spec: Any) -> list[Problem]:
    """Every key of the stack that another platform reads (run before any check judges the keys)."""
    platform = spec.cluster.platform
    keys = platforms.get(platform).keys
    problems = foreign_pool_fields(stack, spec) + _foreign_blocks(stack, spec)
    if keys.storage is not None:
        for field, alias in K3S_STORAGE.items():
            if field in spec.storage.model_fields_set:
                problems.append(Problem(stack, f"{NS}:storage.{alias}", f"not used on {platform}: gpufleet:storage configures k3s "
                                        f"storage only; on {platform} use {keys.storage}"))
    for i, pool in enumerate(spec.node_pools):
        at = f"{NS}:nodePools[{i}]"
        if not keys.exemptions and pool.exemptions:
            problems.append(Problem(stack, f"{at}.exemptions", f"not used on {platform}: no policy judges k3s pools (their "
                                    "hosts are not cloud resources); remove it"))
    return problems


def _foreign_blocks(stack: str, spec: Any) -> list[Problem]:
    """Another platform's `cluster.<name>` block (in ClusterSpec's field order)."""
    platform = spec.cluster.platform
    problems = []
    for block in type(spec.cluster).model_fields:
        if block != platform and block in platforms.names() and getattr(spec.cluster, block) is not None:
            problems.append(Problem(stack, f"{NS}:cluster.{block}", f"not used on {platform}: the {block} block configures "
                                    f"platform {block} only; remove it (or set platform: {block})"))
    return problems


def foreign_pool_fields(stack: str, spec: Any) -> list[Problem]:
    """Pool fields only another platform reads (its KeyTraits.pool_fields): a mistake, not a no-op."""
    platform = spec.cluster.platform
    problems = []
    for i, pool in enumerate(spec.node_pools):
        for owner in platforms.names():
            if owner == platform:
                continue
            for field in platforms.get(owner).keys.pool_fields:
                if field in pool.model_fields_set:
                    alias = NodePoolSpec.model_fields[field].alias
                    problems.append(Problem(stack, f"{NS}:nodePools[{i}].{alias}", f"not used on {platform}: {owner} pools only; remove it"))
    return problems
