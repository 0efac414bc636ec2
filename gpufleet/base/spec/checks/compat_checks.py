"""Machine <-> disk and GPU <-> driver compatibility (called from `_cross_checks`).

Machine compatibility only a platform has is its scheduling traits `compat_problems` and `compat_warnings` (GKE: the
disk types its machine series attach, gpufleet/base/platforms/gke/scheduling.py).

Driver floor: every GPU model has a minimum driver branch (gpufleet/base/catalog/gpus.yaml `min_driver_branch`, from
NVIDIA's data-center driver release notes). The driver a pool's nodes run must meet it: the GPU Operator's pinned
(or default) driver on k3s and on GKE with gpuStack operator, the preinstalled driver a k3s stack declares, and where
the platform installs the driver, its scheduling trait `driver_floor_problems` (the EKS AMI's branch; on GKE with
GKE's own installation, the branch GKE installs for the pool's gpuDriverVersion).
"""

from __future__ import annotations

from typing import Any

from gpufleet.base import catalog, platforms
from gpufleet.base.spec.errors import Problem
from gpufleet.base.spec.shape import shaped_pools

NS = "gpufleet"


def check(stack: str, spec: Any) -> list[Problem]:
    return _driver_floor(stack, spec) + platforms.of(spec).scheduling.compat_problems(stack, spec)


def warnings(stack: str, spec: Any) -> list[Problem]:
    """Advisory compatibility findings (the platform's `compat_warnings`: GPU pools that cannot attach GKE's default
    StorageClass's disk type), printed by the plan (JSON key "warnings")."""
    return platforms.of(spec).scheduling.compat_warnings(stack, spec)



def _driver_floor(stack: str, spec: Any) -> list[Problem]:
    traits = platforms.of(spec).scheduling
    op = spec.gpu_operator
    problems = []
    for i, pool in enumerate(shaped_pools(spec)):
        if pool.gpu is None or pool.gpu not in catalog.gpu_models() or catalog.gpu(pool.gpu).amd:
            continue  # AMD pools' driver floor: gpufleet/base/spec/features/amd_checks.py
        floor = catalog.gpu(pool.gpu).min_driver_branch
        if floor is None:  # no sourced minimum for this GPU (gpus.yaml): not judged rather than guessed
            continue
        installed = traits.driver_floor_problems(stack, spec, i, pool, floor)
        if installed is not None:  # the platform installs the driver (an EKS AMI's, GKE's own)
            problems += installed
            continue
        if not op.enabled:
            continue
        version = op.driver_version()
        if version is None or catalog.driver_branch(version) >= floor:
            continue
        where = "driver.version" if op.driver.version else "version"
        got = op.driver.version or op.version
        source = "the hosts' preinstalled driver" if op.driver.source == "preinstalled" else "the driver the GPU Operator installs"
        problems.append(Problem(stack, f"{NS}:gpuOperator.{where}", f"{source} is {version} (branch {catalog.driver_branch(version)}), "
                                f"but pool '{pool.name}' has {pool.gpu}, which needs driver branch {floor} or newer", got))
    return problems
