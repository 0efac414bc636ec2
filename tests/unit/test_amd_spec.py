"""Unit tests (issue 17): the AMD catalog facts against their sources, and every bad AMD input with its exact message."""

import pytest

from gpufleet.base import catalog, sharing, versions
from gpufleet.base.catalog import amd
from tests.helpers import example_config, load_config, spec_problems


# --- catalog ----------------------------------------------------------------------------------------

def test_amd_models_join_the_one_gpu_table():
    models = catalog.gpu_models()
    assert {n for n, g in models.items() if g.amd} == {"MI210", "MI250X", "MI300X", "MI325X", "MI355X"}
    # ROCm "AMD GPU specifications": memory per GPU.
    assert {n: models[n].memory_gb for n in ("MI210", "MI250X", "MI300X", "MI325X", "MI355X")} == {
        "MI210": 64, "MI250X": 128, "MI300X": 192, "MI325X": 256, "MI355X": 288}
    assert all(models[n].sources for n in models)
    assert not any(g.mig_capable for g in models.values() if g.amd)


def test_partition_facts():
    facts = amd.amd_facts()
    # MI300X: 8 XCDs, CPX = 8 partitions (instinct docs, MI300X partitioning overview); CDNA2 has none.
    assert facts["MI300X"].partitions.compute == {"SPX": 1, "DPX": 2, "QPX": 4, "CPX": 8}
    assert facts["MI210"].partitions is None and facts["MI250X"].partitions is None
    assert facts["MI250X"].devices_per_gpu == 2
    # NPS4 only with CPX (DCM ConfigMap docs); CPX+NPS2 on MI355X from driver 30.20 (its release notes).
    assert [c for c, m in facts["MI300X"].partitions.memory.items() if "NPS4" in m] == ["CPX"]
    assert amd.combination_problem("MI355X", "CPX", "NPS2", "30.10.2") == (
        "CPX+NPS2 on MI355X needs AMD GPU Driver 30.20 or newer (the nodes run 30.10.2)")
    assert amd.combination_problem("MI355X", "CPX", "NPS2", "30.20.1") is None


@pytest.mark.parametrize("driver,rocm,ok", [
    ("30.30.3", "7.1", True),   # amdgpu-docs compatibility matrix: 30.30.3 <-> 7.2, 7.1, 7.0, 6.4, 6.3
    ("30.20.1", "7.2", True),   # ROCm 7.2.x release notes list 30.20.x
    ("30.20.1", "7.0", False),  # not stated anywhere: refused, naming the lines that run it
    ("30.10.1", "6.2", True),   # user and AMD GPU driver support matrix: 30.10.x -> 6.2-7.0
    ("6.4.3", "7.1", False),
])
def test_driver_runs_rocm(driver, rocm, ok):
    assert amd.driver_runs_rocm(driver, rocm)[0] is ok


def test_the_charts_default_driver_is_in_the_table():
    assert amd.driver_line(versions.AMD_GPU_DRIVER_DEFAULT) in amd.driver_rocm()
    assert versions.AMD_GPU_OPERATOR.version in amd.operator_releases()


# --- spec -------------------------------------------------------------------------------------------

def load(mutate):
    config = example_config("amd-lab")
    mutate(config)
    return load_config(config, "amd-lab")


def problems(mutate) -> list[str]:
    config = example_config("amd-lab")
    mutate(config)
    return spec_problems(config, "amd-lab")


def pool(config, i):
    return config["gpufleet:nodePools"][i]


def test_example_loads_and_advertises_partitions():
    spec = load(lambda c: None)
    cpx, train, l4 = spec.node_pools
    assert sharing.advertised(cpx) == {"amd.com/gpu": 64}
    assert sharing.advertised(train) == {"amd.com/gpu": 8}
    assert sharing.advertised(l4) == {"nvidia.com/gpu": 1}
    assert sharing.explain(cpx) == "8 GPUs x 8 CPX partitions = 64 amd.com/gpu (CPX/NPS4, DCM profile mi300x-cpx)"


def test_mi250x_counts_its_two_dies():
    def m(c):
        pool(c, 1)["gpu"] = "MI250X"
        pool(c, 1)["gpusPerNode"] = 4
    spec = load(m)
    assert sharing.advertised(spec.node_pools[1]) == {"amd.com/gpu": 8}


@pytest.mark.parametrize("name,mutate,expected", [
    ("a partition the GPU lacks",
     lambda c: pool(c, 1).update(gpu="MI355X", sharing={"mode": "partition", "compute": "QPX"}),
     ["stack 'amd-lab': gpufleet:nodePools[1].sharing.compute: MI355X of pool 'mi300x-train' has no compute partition QPX "
      "(allowed: SPX, DPX, CPX) (got 'QPX')"]),
    ("NPS4 with a compute mode that forbids it",
     lambda c: pool(c, 0).update(sharing={"mode": "partition", "compute": "SPX", "memory": "NPS4"}),
     ["stack 'amd-lab': gpufleet:nodePools[0].sharing.memory: pool 'mi300x-cpx': MI300X in SPX runs memory partition "
      "NPS1, not NPS4; NPS4 runs with CPX (got 'NPS4')"]),
    ("a memory mode the GPU lacks",
     lambda c: pool(c, 0).update(sharing={"mode": "partition", "compute": "CPX", "memory": "NPS2"}),
     ["stack 'amd-lab': gpufleet:nodePools[0].sharing.memory: pool 'mi300x-cpx': MI300X in CPX runs memory partition "
      "NPS1, NPS4, not NPS2; MI300X has no NPS2 (got 'NPS2')"]),
    ("a GPU without partitions",
     lambda c: pool(c, 0).update(gpu="MI210"),
     ["stack 'amd-lab': gpufleet:nodePools[0].sharing.mode: MI210 of pool 'mi300x-cpx' has no compute or memory "
      "partitions (AMD GPUs with partitions: MI300X, MI325X, MI355X); use mode none (got 'partition')"]),
    ("partition without compute",
     lambda c: pool(c, 0).update(sharing={"mode": "partition"}),
     ["stack 'amd-lab': gpufleet:nodePools[0].sharing.compute: required for partition on pool 'mi300x-cpx': the "
      "compute partition mode (SPX, DPX, QPX, CPX on MI300X)"]),
    ("an NVIDIA sharing mode on an AMD pool",
     lambda c: pool(c, 1).update(sharing={"mode": "mig", "profile": "1g.10gb"}),
     ["stack 'amd-lab': gpufleet:nodePools[1].sharing.mode: mig is an NVIDIA sharing mode (NVIDIA GPU Operator); pool "
      "'mi300x-train' has AMD MI300X: use mode partition with compute (and memory), or none (got 'mig')"]),
    ("time-slicing on an AMD pool",
     lambda c: pool(c, 1).update(sharing={"mode": "time-slicing", "replicas": 4}),
     ["stack 'amd-lab': gpufleet:nodePools[1].sharing.mode: time-slicing is an NVIDIA sharing mode (NVIDIA GPU "
      "Operator); pool 'mi300x-train' has AMD MI300X: use mode partition with compute (and memory), or none (got 'time-slicing')"]),
    ("an AMD partition on NVIDIA",
     lambda c: pool(c, 2).update(sharing={"mode": "partition", "compute": "CPX"}),
     ["stack 'amd-lab': gpufleet:nodePools[2].sharing.mode: partition is for AMD Instinct GPUs (MI300X, MI325X, "
      "MI355X); pool 'l4' has NVIDIA L4: use time-slicing, mps or mig (got 'partition')"]),
    ("partition fields without mode partition",
     lambda c: pool(c, 1).update(sharing={"compute": "CPX"}),
     ["stack 'amd-lab': gpufleet:nodePools[1].sharing.compute: only used with mode partition (pool 'mi300x-train' has mode none)"]),
    ("a ROCm version the driver cannot run",
     lambda c: c["gpufleet:workloads"].update(rocmVersions=["7.2", "7.0"]),
     ["stack 'amd-lab': gpufleet:workloads.rocmVersions[1]: the AMD pools' driver cannot run ROCm 7.0: AMD GPU Driver "
      "30.20.x runs ROCm 7.2, not 7.0 (drivers that run ROCm 7.0: 30.30, 30.10, 6.4, 6.3) (the AMD GPU Operator's "
      "default driver 30.20.1) (got '7.0')"]),
    ("an unknown ROCm version",
     lambda c: c["gpufleet:workloads"].update(rocmVersions=["5.7"]),
     ["stack 'amd-lab': gpufleet:workloads.rocmVersions: unknown ROCm version '5.7' (allowed: 7.2, 7.1, 7.0, 6.4, 6.3, "
      "6.2, 6.1)"]),
    ("a driver older than the GPU needs",
     lambda c: (c["gpufleet:amdGpuOperator"].update(driver={"source": "inbox", "version": "6.3.3"}),
                pool(c, 1).update(gpu="MI355X"), c["gpufleet:workloads"].update(rocmVersions=[])),
     ["stack 'amd-lab': gpufleet:nodePools[0].sharing.memory: pool 'mi300x-cpx': CPX+NPS4 on MI300X needs AMD GPU "
      "Driver 6.4 or newer (the nodes run 6.3.3) (got 'NPS4')",
      "stack 'amd-lab': gpufleet:amdGpuOperator.driver.version: the AMD pools' driver is 6.3.3, but pool 'mi300x-train' "
      "has MI355X, which needs AMD GPU Driver 30.10 or newer (got '6.3.3')"]),
    ("an unknown driver line",
     lambda c: c["gpufleet:amdGpuOperator"].update(driver={"source": "operator", "version": "29.1.0"}),
     ["stack 'amd-lab': gpufleet:amdGpuOperator.driver.version: AMD GPU Driver '29.1.0' is not in the catalog's "
      "compatibility table (known release lines: 30.30, 30.20, 30.10, 6.4, 6.3)"]),
])
def test_bad_amd_input(name, mutate, expected):
    assert problems(mutate) == expected


def test_amd_on_eks_is_refused_with_a_clear_error():
    config = example_config("prod-eks")
    config["gpufleet:amdGpuOperator"] = {"driver": {"source": "operator"}}
    config["gpufleet:workloads"] = {"rocmVersions": ["7.2"]}
    assert spec_problems(config, "prod-eks") == [
        "stack 'prod-eks': gpufleet:amdGpuOperator: AMD Instinct GPUs run on k3s only: EKS offers no AMD Instinct "
        "instance type gpufleet knows; remove amdGpuOperator (or use platform: k3s)",
        "stack 'prod-eks': gpufleet:workloads.rocmVersions: AMD Instinct GPUs run on k3s only, so no EKS pool runs ROCm; "
        "remove rocmVersions",
    ]


def test_amd_gpu_on_a_gke_pool_is_refused():
    config = example_config("prod-gke")
    config["gpufleet:nodePools"][0]["gpu"] = "MI300X"
    got = spec_problems(config, "prod-gke")
    assert ("stack 'prod-gke': gpufleet:nodePools[0].gpu: MI300X is an AMD Instinct GPU: gpufleet runs AMD pools on "
            "k3s only (got 'MI300X')") in got


def test_amd_operator_block_without_amd_pools():
    config = example_config("lab")
    config["gpufleet:amdGpuOperator"] = {"driver": {"source": "operator"}}
    assert spec_problems(config, "lab") == [
        "stack 'lab': gpufleet:amdGpuOperator: not used: no pool has an AMD GPU (gpu: MI300X, ...); remove it"]
