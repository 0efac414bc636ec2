"""Mistakes that plan clean and fail at `pulumi up` or deploy something that never works (issue 33). Each platform's
own limits are its AddonTraits.upkeep_problems (GKE maintenance exclusions past GKE's limits and deletion protection
off without a recorded reason, EC2 Capacity Blocks on families that are not sold as Capacity Blocks and VPC blocks AWS
refuses, RDMA address ranges two k3s pools would share and a persistent volume on a k3s cluster without a default
StorageClass); here: NVIDIA pools whose GPUs nothing would advertise, and host drivers off the operator's branches.
"""

from __future__ import annotations

from gpufleet.base import catalog, platforms
from gpufleet.base.spec.errors import Problem
from gpufleet.base.spec.shape import shaped_pools
from gpufleet.base.spec.stack import StackSpec

NS = "gpufleet"


def _gpu_advertising(stack: str, spec: StackSpec) -> list[Problem]:
    """An NVIDIA pool's GPUs reach the scheduler only through a device plugin. With the GPU Operator off, one is there
    only where the platform or its node image brings its own (AddonTraits.missing_device_plugin says why not): the
    pods asking for nvidia.com/gpu would stay Pending on nodes that have GPUs."""
    if spec.gpu_operator.enabled:
        return []
    traits = platforms.of(spec).addons
    problems = []
    for i, pool in enumerate(shaped_pools(spec)):
        where = traits.missing_device_plugin(pool)
        if where is None:
            continue
        problems.append(Problem(stack, f"{NS}:nodePools[{i}]", f"nothing would advertise pool '{pool.name}''s "
                                f"nvidia.com/gpu: {NS}:gpuOperator.enabled is false and {where}; turn the operator on"))
    return problems


def _host_driver_support(stack: str, spec: StackSpec) -> list[Problem]:
    """A driver on the host (k3s preinstalled with its version given, an EKS AMI's fixed branch) should be on a branch
    the GPU Operator release supports: its toolkit, device plugin and DCGM exporter are built and tested against
    those branches (GPU Operator Component Matrix, gpufleet/base/catalog/drivers.yaml `operator_matrix`). The
    operator's own driver is judged by the gpu-operator-version-support policy."""
    op = spec.gpu_operator
    if not op.enabled or op.driver.source != "preinstalled":
        return []
    release = catalog.operator_release(op.version)
    supported = ", ".join(map(str, release.driver_branches))
    found: list[tuple[str, str, str]] = []  # (key, driver, where it comes from)
    if op.driver.version:
        found.append((f"{NS}:gpuOperator.driver.version", op.driver.version, "the hosts' preinstalled driver"))
    else:
        found += platforms.of(spec).addons.host_drivers(spec)
    problems = []
    for key, driver, where in found:
        branch = int(driver.split(".", 1)[0])
        if branch not in release.driver_branches:
            problems.append(Problem(stack, key, f"{where} is {driver} (branch {branch}), which GPU Operator {op.version} "
                                    f"({NS}:gpuOperator.version) does not list as supported (supported branches: {supported}): pick a "
                                    "release that lists it, or move the hosts to a supported branch",
                                    driver))
    return problems


def check(stack: str, spec: StackSpec) -> list[Problem]:
    return platforms.of(spec).addons.upkeep_problems(stack, spec) + _gpu_advertising(stack, spec)


def warnings(stack: str, spec: StackSpec) -> list[Problem]:
    """Findings that do not stop a plan: a host driver outside the operator's tested branches often works, so the
    plan says so rather than refuse (the example corpus keeps such stacks for the CUDA alignment policy)."""
    return _host_driver_support(stack, spec)


__all__ = ["check"]
