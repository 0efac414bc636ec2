"""Keys that do not apply to the stack's platform are errors, never silently dropped (called from `_cross_checks`).

A k3s-only storage block in an EKS stack or another platform's cluster block would plan clean and create nothing. (Cloud pool fields on the wrong cloud are in
gpufleet/base/spec/__init__.py PLATFORM_POOL_FIELDS; k3s's hosts/gpu/gpusPerNode in eks.py/gke.py.)
"""

from __future__ import annotations

from typing import Any

from gpufleet.base.spec.errors import Problem

NS = "gpufleet"
# gpufleet:storage blocks the k3s platform reads; the clouds have their own storage under cluster.<platform>.storage.
# (localPath on a cloud and a cloud pool's rdmaNetwork are refused in sharing_checks.py already.)
K3S_STORAGE = {"nfs": "nfs", "checkpoints": "checkpoints"}
CLOUD_STORAGE = {"eks": "cluster.eks.storage (EBS gp3 always, fsxLustre)",
                 "gke": "cluster.gke.storage (defaultDiskType, filestore, gcsFuse, managedLustre)",
                 "aks": "cluster.aks.storage (Azure Disk always, files, blob)",
                 "existing": "the cluster's own StorageClasses (its provider's CSI drivers); gpufleet installs no storage there"}
# Platforms whose pools the policy pack judges by cloud resource (an exemption is a tag or node label there).
EXEMPTION_PLATFORMS = ("eks", "gke", "aks")


def check(stack: str, spec: Any) -> list[Problem]:
    platform = spec.cluster.platform
    problems = []
    for block in ("k3s", "eks", "gke", "aks", "existing"):
        if block != platform and getattr(spec.cluster, block) is not None:
            problems.append(Problem(stack, f"{NS}:cluster.{block}", f"not used on {platform}: the {block} block configures "
                                    f"platform {block} only; remove it (or set platform: {block})"))
    if platform != "k3s":
        for field, alias in K3S_STORAGE.items():
            if field in spec.storage.model_fields_set:
                problems.append(Problem(stack, f"{NS}:storage.{alias}", f"not used on {platform}: gpufleet:storage configures k3s "
                                        f"storage only; on {platform} use {CLOUD_STORAGE[platform]}"))
    for i, pool in enumerate(spec.node_pools):
        at = f"{NS}:nodePools[{i}]"
        if platform not in EXEMPTION_PLATFORMS and pool.exemptions:
            problems.append(Problem(stack, f"{at}.exemptions", f"not used on {platform}: no policy judges k3s pools (their "
                                    "hosts are not cloud resources); remove it"))
    return problems
