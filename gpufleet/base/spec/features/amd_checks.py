"""Cross checks for AMD Instinct pools (issue 17): where they run, how they are partitioned, which driver and ROCm.

Called from `_cross_checks` in gpufleet/base/spec/__init__.py once every block is valid on its own. Facts:
gpufleet/base/catalog/amd_gpus.yaml (partition modes per GPU, driver floors, AMD GPU Driver <-> ROCm).
"""

from __future__ import annotations

from typing import Any

from gpufleet.base import catalog, platforms
from gpufleet.base.catalog import amd
from gpufleet.base.spec.features.amd_operator import is_amd
from gpufleet.base.spec.features.sharing_checks import platforms_where
from gpufleet.base.spec.errors import Problem

NS = "gpufleet"
NVIDIA_MODES = ("time-slicing", "mps", "mig")
PARTITION_FIELDS = ("compute", "memory")


def amd_pools(spec: Any) -> list:
    return [p for p in spec.node_pools if is_amd(p.gpu)]


def amd_platforms() -> list[str]:
    """The platforms AMD Instinct pools run on (their scheduling trait `amd_gpus`), for messages."""
    return platforms_where(lambda t: t.amd_gpus)


def partitionable() -> list[str]:
    return [n for n, f in amd.amd_facts().items() if f.partitions is not None]


def check(stack: str, spec: Any) -> list[Problem]:
    problems: list[Problem] = []
    platform = spec.cluster.platform
    amd_here = platforms.get(platform).scheduling.amd_gpus
    pools = amd_pools(spec)
    if not amd_here:
        where = amd_platforms()
        if "amd_gpu_operator" in spec.model_fields_set:
            problems.append(Problem(stack, f"{NS}:amdGpuOperator", f"AMD Instinct GPUs run on {' and '.join(where)} only: "
                                    f"{platform.upper()} offers no AMD Instinct instance type gpufleet knows; remove "
                                    f"amdGpuOperator (or use platform: {' or '.join(where)})"))
        if spec.workloads.rocm_versions:
            problems.append(Problem(stack, f"{NS}:workloads.rocmVersions", f"AMD Instinct GPUs run on {' and '.join(where)} "
                                    f"only, so no {platform.upper()} pool runs ROCm; remove rocmVersions"))
    elif not pools:
        if "amd_gpu_operator" in spec.model_fields_set:
            problems.append(Problem(stack, f"{NS}:amdGpuOperator", "not used: no pool has an AMD GPU (gpu: MI300X, ...); "
                                    "remove it"))
        if spec.workloads.rocm_versions:
            problems.append(Problem(stack, f"{NS}:workloads.rocmVersions", "not used: no pool has an AMD GPU to run ROCm on; "
                                    "remove it (NVIDIA pools: cudaVersions)"))
    driver = spec.amd_gpu_operator.driver_version() if pools else None
    for i, pool in enumerate(spec.node_pools):
        problems += [Problem(stack, path, msg, *value) for path, msg, value in _pool(pool, f"{NS}:nodePools[{i}]", amd_here, driver)]
    if pools and driver:
        problems += _driver_floor(stack, spec, pools, driver)
        for j, rocm in enumerate(spec.workloads.rocm_versions):
            ok, why = amd.driver_runs_rocm(driver, rocm)
            if not ok:
                problems.append(Problem(stack, f"{NS}:workloads.rocmVersions[{j}]", f"the AMD pools' driver cannot run ROCm "
                                        f"{rocm}: {why} ({_driver_where(spec)})", rocm))
    return problems


def _driver_where(spec: Any) -> str:
    d = spec.amd_gpu_operator.driver
    if d.version:
        return f"amdGpuOperator.driver.version {d.version}"
    return f"the AMD GPU Operator's default driver {spec.amd_gpu_operator.driver_version()}"


def _pool(pool, at: str, amd_here: bool, driver):
    s = pool.sharing
    here = f"{at}.sharing"
    who = f"pool '{pool.name}'"
    amd_gpu = is_amd(pool.gpu)
    if amd_gpu and not amd_here:
        yield f"{at}.gpu", (f"{pool.gpu} is an AMD Instinct GPU: gpufleet runs AMD pools on {' and '.join(amd_platforms())} "
                            "only"), (pool.gpu,)
    if s.mode != "partition":
        for field in PARTITION_FIELDS:
            if field in s.model_fields_set:
                yield f"{here}.{field}", f"only used with mode partition ({who} has mode {s.mode})", ()
    if amd_gpu and s.mode in NVIDIA_MODES:
        yield f"{here}.mode", (f"{s.mode} is an NVIDIA sharing mode (NVIDIA GPU Operator); {who} has AMD {pool.gpu}: use "
                               f"mode partition with compute (and memory), or none"), (s.mode,)
        return
    if s.mode != "partition" or pool.gpu is None:
        return
    if not amd_gpu:
        yield f"{here}.mode", (f"partition is for AMD Instinct GPUs ({', '.join(partitionable())}); {who} has NVIDIA "
                               f"{pool.gpu}: use time-slicing, mps or mig"), (s.mode,)
        return
    facts = amd.amd_facts()[pool.gpu]
    if facts.partitions is None:
        yield f"{here}.mode", (f"{pool.gpu} of {who} has no compute or memory partitions (AMD GPUs with partitions: "
                               f"{', '.join(partitionable())}); use mode none"), (s.mode,)
        return
    if s.compute is None:
        yield f"{here}.compute", (f"required for partition on {who}: the compute partition mode "
                                  f"({', '.join(facts.partitions.compute)} on {pool.gpu})"), ()
        return
    if s.compute not in facts.partitions.compute:
        yield f"{here}.compute", (f"{pool.gpu} of {who} has no compute partition {s.compute} "
                                  f"(allowed: {', '.join(facts.partitions.compute)})"), (s.compute,)
        return
    memory = s.memory or "NPS1"
    problem = amd.combination_problem(pool.gpu, s.compute, memory, driver)
    if problem:
        yield f"{here}.memory", f"{who}: {problem}", (memory,)


def _driver_floor(stack: str, spec: Any, pools: list, driver: str) -> list[Problem]:
    out = []
    for i, pool in enumerate(spec.node_pools):
        if pool not in pools:
            continue
        floor = amd.amd_facts()[pool.gpu].min_driver
        if amd.version_tuple(driver) < amd.version_tuple(floor) and amd.version_tuple(amd.driver_line(driver)) < amd.version_tuple(amd.driver_line(floor)):
            where = "driver.version" if spec.amd_gpu_operator.driver.version else "driver.source"
            out.append(Problem(stack, f"{NS}:amdGpuOperator.{where}", f"the AMD pools' driver is {driver}, but pool "
                               f"'{pool.name}' has {pool.gpu}, which needs AMD GPU Driver {floor} or newer", driver))
    return out


def gpu_vendor(gpu) -> str:
    """nvidia | amd for a catalog GPU model name (nvidia when unknown)."""
    model = catalog.gpu_models().get(gpu or "")
    return model.vendor if model else "nvidia"
