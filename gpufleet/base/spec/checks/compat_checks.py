"""Machine <-> disk and GPU <-> driver compatibility (called from `_cross_checks`).

GKE disks: the `gpufleet-rwo` default StorageClass provisions `cluster.gke.storage.defaultDiskType` volumes, which
must attach to the system pool's nodes (where add-ons with volumes run): an error; a GPU pool that cannot attach
them is a warning (gke_disk_warnings). Which series
attaches which disk type is in gpufleet/base/catalog/gcp_families.yaml (with sources): E2, N1, G2 and A2 cannot attach
Hyperdisk; A3 Ultra and A4 attach Hyperdisk only. (Boot disks follow the same facts in the components.)

Driver floor: every GPU model has a minimum driver branch (gpufleet/base/catalog/gpus.yaml `min_driver_branch`, from
NVIDIA's data-center driver release notes). The driver a pool's nodes run must meet it: the GPU Operator's pinned
(or default) driver on k3s and on GKE with gpuStack operator, the preinstalled driver a k3s stack declares, the EKS
AMI's branch, and on GKE with GKE's own installation (gpuStack gke) the branch GKE installs for the pool's
gpuDriverVersion (DEFAULT or LATEST) on the cluster's minor for that GPU (gpufleet/base/catalog/gcp_machines.yaml
gke_driver_branches and gke_driver_branches_per_gpu: GKE installs R570 for B200 and R550 for H200 by default on
every minor gpufleet plans for). A minor whose branch the catalog does not record is not judged (said as a warning
by the CUDA alignment check).
"""

from __future__ import annotations

from typing import Any

from gpufleet.base import catalog
from gpufleet.base.catalog import aws as aws_catalog
from gpufleet.base.catalog import gcp, gcp_families
from gpufleet.base.spec.errors import Problem
from gpufleet.base.spec.shape import shaped_pools

NS = "gpufleet"


def check(stack: str, spec: Any) -> list[Problem]:
    problems = _driver_floor(stack, spec)
    if spec.cluster.platform == "gke" and spec.cluster.gke is not None:
        problems += _gke_disks(stack, spec)
    return problems


def _gke_disks(stack: str, spec: Any) -> list[Problem]:
    gke = spec.cluster.gke
    disk = gke.storage.default_disk_type
    at = f"{NS}:cluster.gke.storage.defaultDiskType"
    problems = []
    system = gcp_families.series(gke.system_pool.machine_type)
    if system is not None and disk not in system.disks:
        problems.append(Problem(stack, at, f"the system pool's {gke.system_pool.machine_type} ({system.name} series) cannot attach "
                                f"{disk} volumes, so add-ons' volumes on the default StorageClass never attach; use "
                                f"{' or '.join(system.disks)}, or a system pool machine type that attaches {disk} "
                                "(e.g. c3-standard-4, which attaches both)", disk))
    return problems


def gke_disk_warnings(stack: str, spec: Any) -> list[Problem]:
    """GPU pools that cannot attach the default StorageClass's disk type. A warning, not an error: a cluster may mix
    Hyperdisk-only pools (A3 Ultra, A4) with Persistent-Disk-only ones (N1, G2, A2), and no one disk type serves
    both; pods there need a StorageClass of their own (printed by the plan, JSON key "warnings")."""
    if spec.cluster.platform != "gke" or spec.cluster.gke is None:
        return []
    disk = spec.cluster.gke.storage.default_disk_type
    out = []
    for i, pool in enumerate(spec.node_pools):
        series = gcp_families.series(pool.machine_type or "")
        if series is not None and disk not in series.disks:
            out.append(Problem(stack, f"{NS}:nodePools[{i}].machineType", f"{series.name} nodes cannot attach {disk} volumes "
                               f"(they attach {', '.join(series.disks)}), the disk type of the default StorageClass "
                               "(cluster.gke.storage.defaultDiskType): pods on this pool need a StorageClass of that type of "
                               "their own", pool.machine_type))
    return out


def _gke_driver_floor(stack: str, spec: Any, i: int, pool: Any, floor: int) -> list[Problem]:
    version = spec.cluster.kubernetes_version
    choice = pool.gke.gpu_driver_version if pool.gke is not None else "DEFAULT"
    branch = gcp.gke_gpu_driver_branch(version, choice, pool.gpu)
    if branch is None or branch >= floor:
        return []
    ok = [c for c in ("DEFAULT", "LATEST") if (gcp.gke_gpu_driver_branch(version, c, pool.gpu) or 0) >= floor]
    allowed = (f"{' or '.join(ok)}, or " if ok else "") + f"cluster.gke.gpuStack: operator with a driver of branch {floor} or newer"
    return [Problem(stack, f"{NS}:nodePools[{i}].gke.gpuDriverVersion",
                    f"GKE {version} installs driver branch {branch} for {choice} on {pool.gpu} nodes, but {pool.gpu} needs "
                    f"branch {floor} or newer (allowed for pool '{pool.name}': {allowed})", choice)]


def _driver_floor(stack: str, spec: Any) -> list[Problem]:
    platform = spec.cluster.platform
    op = spec.gpu_operator
    problems = []
    for i, pool in enumerate(shaped_pools(spec)):
        if pool.gpu is None or pool.gpu not in catalog.gpu_models() or catalog.gpu(pool.gpu).amd:
            continue  # AMD pools' driver floor: gpufleet/base/spec/features/amd_checks.py
        floor = catalog.gpu(pool.gpu).min_driver_branch
        if floor is None:  # no sourced minimum for this GPU (gpus.yaml): not judged rather than guessed
            continue
        if platform == "eks":
            ami = aws_catalog.ami(pool.ami)
            if ami.driver_branch < floor:
                problems.append(Problem(stack, f"{NS}:nodePools[{i}].ami", f"the {pool.ami} AMI ships driver branch {ami.driver_branch}, "
                                        f"but {pool.gpu} needs branch {floor} or newer (allowed for this pool: "
                                        f"{', '.join(a for a in aws_catalog.amis() if aws_catalog.ami(a).driver_branch >= floor)})", pool.ami))
            continue
        if platform == "gke" and spec.cluster.gke is not None and spec.cluster.gke.gpu_stack == "gke":
            problems += _gke_driver_floor(stack, spec, i, pool, floor)
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
