"""Issue 49: the GCE GPU machine types, completed from Compute Engine's 'GPU machine types' tables (gcp_machines.yaml
source gce_gpu_table, the page last updated 2026-04-14) and SkyPilot's Compute-API-built vms.csv (skypilot_v8_gcp):
every row carries vCPUs, instance memory and GPU memory as the source gives them, and the types the catalog lacked
(A3 Edge, the larger N1 + T4 sizes) plan."""

from __future__ import annotations

import copy

import pytest

from gpufleet.base import catalog
from gpufleet.base.catalog import gcp
from tests.helpers import example_config, one, plan_config

# (machine type, accelerator, GPUs, vCPUs, instance memory GB, GPU memory GB), copied from gce_gpu_table's tables.
GOOGLE_TABLE = [
    ("a4x-maxgpu-4g-metal", "nvidia-gb300", 4, 144, 960, 1116),
    ("a4x-highgpu-4g", "nvidia-gb200", 4, 140, 884, 744),
    ("a4-highgpu-8g", "nvidia-b200", 8, 224, 3968, 1440),
    ("a3-ultragpu-8g", "nvidia-h200-141gb", 8, 224, 2952, 1128),
    ("a3-megagpu-8g", "nvidia-h100-mega-80gb", 8, 208, 1872, 640),
    ("a3-highgpu-1g", "nvidia-h100-80gb", 1, 26, 234, 80),
    ("a3-edgegpu-8g", "nvidia-h100-80gb", 8, 208, 1872, 640),
    ("a2-ultragpu-2g", "nvidia-a100-80gb", 2, 24, 340, 160),
    ("a2-megagpu-16g", "nvidia-tesla-a100", 16, 96, 1360, 640),
    ("g4-standard-192", "nvidia-rtx-pro-6000", 4, 192, 720, 384),
    ("g2-standard-24", "nvidia-l4", 2, 24, 96, 48),
    ("g2-standard-32", "nvidia-l4", 1, 32, 128, 24),
]


@pytest.mark.parametrize("name, accelerator, gpus, vcpus, memory, gpu_memory", GOOGLE_TABLE)
def test_rows_match_googles_gpu_machine_types_tables(name, accelerator, gpus, vcpus, memory, gpu_memory):
    m = gcp.machine(name)
    assert (m.accelerator, m.counts, m.vcpus, m.memory_gb, m.gpu_memory_gb) == (accelerator, (gpus,), vcpus, memory, gpu_memory)
    assert "gce_gpu_table" in m.sources


def test_every_row_has_its_shape_and_gpu_memory_agrees_with_the_gpu_models():
    """Each row's GPU memory is its count times the GPU model's memory (gpus.yaml), except A4X Max: Google gives 1,116 GB
    for 4 GB300 (279 each), gpus.yaml 278 (the MIG profile 7g.278gb); both kept, gce_gpu_table says so."""
    rows = gcp.machines()
    assert [n for n, m in rows.items() if m.vcpus is None or m.memory_gb is None] == []
    disagree = {n for n, m in rows.items() if m.fixed_count and m.gpu_memory_gb != m.fixed_count * catalog.gpu(m.gpu).memory_gb}
    assert disagree == {"a4x-maxgpu-4g-metal"}
    assert [n for n, m in rows.items() if m.fixed_count is None and m.gpu_memory_gb is not None] == []  # N1: count varies


def test_n1_t4_counts_follow_googles_vcpu_and_memory_limits():
    """gce_gpu_table, N1 + T4: 1 or 2 GPUs up to 48 vCPUs and 312 GB, 4 GPUs up to 96 vCPUs and 624 GB."""
    n1 = {n: m for n, m in gcp.machines().items() if n.startswith("n1-")}
    assert sorted(n1) == ["n1-standard-16", "n1-standard-32", "n1-standard-4", "n1-standard-64", "n1-standard-8", "n1-standard-96"]
    for name, m in n1.items():
        small = m.vcpus <= 48 and m.memory_gb <= 312
        assert m.counts == ((1, 2, 4) if small else (4,)), name
    # skypilot_v8_gcp's us-central1 row for n1-standard-96 (4.55998 / 1.3926); none was read for n1-standard-64.
    assert gcp.machine("n1-standard-96").price("on-demand", 4) == round(4.56 + 4 * 0.35, 4)
    assert gcp.machine("n1-standard-96").price("spot", 4) == round(1.39 + 4 * 0.175, 4)
    assert gcp.machine("n1-standard-64").price("on-demand", 4) is None


def test_a_gke_stack_plans_a_newly_added_a3_edge_pool():
    """a3-edgegpu-8g: 8 x H100 attached as nvidia-h100-80gb, its 16 bundled Local SSDs given to ephemeral storage, no
    GPUDirect (not wired for A3 Edge) and unpriced (no Google figure read): the plan says so rather than a zero."""
    config = copy.deepcopy(example_config("prod-gke"))
    config["gpufleet:nodePools"] = [{"name": "edge", "machineType": "a3-edgegpu-8g", "maxNodes": 2,
                                     "gke": {"zones": ["us-central1-a"]}}]
    p = plan_config(config, stack="prod-gke", policies=False)
    node = one(p, "gcp:container/nodePool:NodePool", "prod-gke-pool-edge-pool").inputs["nodeConfig"]
    assert (node["machineType"], node["guestAccelerators"][0]["type"], node["guestAccelerators"][0]["count"]) == (
        "a3-edgegpu-8g", "nvidia-h100-80gb", 8)
    assert node["ephemeralStorageLocalSsdConfig"] == {"localSsdCount": 16}
    assert node["labels"]["gpufleet.io/gpu-model"] == "H100-80GB"
    assert [(c.pool, c.gpu, c.gpus_per_node) for c in p.capacity] == [("edge", "H100-80GB", 8)]
    assert p.cost.unpriced_pools == ["edge"]
    config["gpufleet:nodePools"][0]["rdma"] = True
    with pytest.raises(Exception, match="GPUDirect is not available on a3-edgegpu-8g"):
        plan_config(config, stack="prod-gke", policies=False)
