"""Issue 49: a pool may give its own facts (GPU model and count, price) for a machine type or VM size the catalog lacks
on GKE and AKS too, as on EKS (tests/unit/test_catalog_round4.py): NodeTraits.uncatalogued says which shapes the
catalog lacks, gpufleet/base/spec/checks/stack_shape_checks.py wants both facts, each platform's pool checks refuse
what they cannot wire on such a shape, and the plan warns that no source confirms the facts."""

from __future__ import annotations

from gpufleet.base import platforms
from tests.helpers import example_config, load_config, spec_problems

P = "stack 'test': gpufleet:nodePools[2]"
# Shapes the catalog does not hold: g2-standard-128 stands for a G2 size released after the catalog was read (Google
# sells G2 up to g2-standard-96 today); Standard_ND96amsr_A100_v4 is a real ND A100 v4 size (8 x A100 80GB) the
# catalog has no row for.
GKE_NEW = {"name": "new", "machineType": "g2-standard-128", "minNodes": 0, "maxNodes": 2}
AKS_NEW = {"name": "new", "vmSize": "Standard_ND96amsr_A100_v4", "maxNodes": 2}


def _with(stack: str, pool: dict, **facts) -> dict:
    config = example_config(stack)
    config["gpufleet:nodePools"].append({**pool, **facts})
    return config


def test_each_cloud_platform_says_which_of_a_pools_shapes_the_catalog_lacks():
    gke = load_config(_with("prod-gke", GKE_NEW, gpu="L4", gpusPerNode=8))
    aks = load_config(_with("aks-train", AKS_NEW, gpu="A100-80GB", gpusPerNode=8))
    assert [platforms.of(gke).nodes.uncatalogued(p) for p in gke.node_pools] == [[], [], ["g2-standard-128"]]
    assert [platforms.of(aks).nodes.uncatalogued(p) for p in aks.node_pools] == [[], [], ["Standard_ND96amsr_A100_v4"]]


def test_an_uncatalogued_gke_machine_plans_with_the_stacks_facts_and_a_warning():
    """The pieces a GKE plan reads, without planning the whole stack (a prod-gke plan costs seconds): the warning, the
    capacity row, and the node pool's machine and guest accelerator (components/gke/platform.py builds the pool from
    `machine_of`, and `accelerator` is the NodePool's guestAccelerators entry)."""
    from gpufleet.base.capacity import pool_capacity
    from gpufleet.base.platforms.gke.nodes import machine_of
    from gpufleet.base.spec.checks.catalog_checks import catalog_warnings
    from gpufleet.components.gke.node_pool import accelerator

    spec = load_config(_with("prod-gke", GKE_NEW, gpu="L4", gpusPerNode=8, pricePerNodeHour=9.5))
    assert [str(w) for w in catalog_warnings("test", spec) if w.path == "gpufleet:nodePools[2].machineType"] == [
        f"{P}.machineType: g2-standard-128 is not in gpufleet's catalog: pool 'new' is planned with the facts the stack "
        "gives (8 x L4, pricePerNodeHour 9.5), which no source confirms; its GPUDirect networks, local SSDs and sale "
        "options are unknown (RDMA is not offered) (got 'g2-standard-128')"]
    pool = spec.node_pools[2]
    row = pool_capacity(pool, "gke")
    assert (row.gpu, row.gpus_per_node, row.price_per_node_hour) == ("L4", 8, 9.5)
    # What GKE's device plugin advertises on such a node: the stack's GPUs (it advertised nothing before, so Kueue
    # quotas and the serving-fit checks saw a pool without GPUs).
    assert row.advertised == {"nvidia.com/gpu": 8}
    machine = machine_of(pool)
    assert (machine.name, machine.accelerator, machine.counts, machine.gpudirect, machine.sources) == (
        "g2-standard-128", "nvidia-l4", (8,), None, ("stack",))
    assert accelerator(pool, machine, "gke") == {"type": "nvidia-l4", "count": 8,
                                                 "gpu_driver_installation_config": {"gpu_driver_version": "DEFAULT"}}


def test_an_uncatalogued_aks_size_plans_with_the_stacks_facts_and_a_warning():
    """As for GKE: the warning, the capacity row, and the VM the node pool is built from (components/aks/platform.py
    builds each pool from `vm_of`; before, it read the catalog and raised KeyError for a size the catalog lacks)."""
    from gpufleet.base.capacity import pool_capacity
    from gpufleet.base.platforms.aks.nodes import vm_of
    from gpufleet.base.spec.checks.catalog_checks import catalog_warnings

    spec = load_config(_with("aks-train", AKS_NEW, gpu="A100-80GB", gpusPerNode=8))
    assert [str(w) for w in catalog_warnings("test", spec) if w.path == "gpufleet:nodePools[2].vmSize"] == [
        f"{P}.vmSize: Standard_ND96amsr_A100_v4 is not in gpufleet's catalog: pool 'new' is planned with the facts the "
        "stack gives (8 x A100-80GB, no price: the pool is listed unpriced), which no source confirms; its InfiniBand, "
        "regions and driver family are unknown (RDMA is not offered) (got 'Standard_ND96amsr_A100_v4')"]
    pool = spec.node_pools[2]
    row = pool_capacity(pool, "aks")
    assert (row.gpu, row.gpus_per_node, row.price_per_node_hour) == ("A100-80GB", 8, None)
    vm = vm_of(pool)
    assert (vm.name, vm.gpu, vm.gpus, vm.arch, vm.infiniband, vm.prices, vm.sources) == (
        "Standard_ND96amsr_A100_v4", "A100-80GB", 8, "x86_64", None, (), ("stack",))


def test_one_fact_alone_is_refused_naming_the_other():
    assert spec_problems(_with("prod-gke", GKE_NEW, gpu="L4")) == [
        f"{P}.gpusPerNode: required with gpu for g2-standard-128, which gpufleet's catalog does not know"]
    assert spec_problems(_with("aks-train", AKS_NEW, gpusPerNode=8)) == [
        f"{P}.gpu: required with gpusPerNode for Standard_ND96amsr_A100_v4, which gpufleet's catalog does not know"]


def test_without_facts_the_unknown_shape_is_refused_naming_the_keys_that_would_let_it_plan():
    gke, = spec_problems(_with("prod-gke", GKE_NEW))
    aks, = spec_problems(_with("aks-train", AKS_NEW))
    assert gke.startswith(f"{P}.machineType: not a GPU machine type gpufleet knows (allowed: n1-standard-4, ")
    assert gke.endswith("; a real machine type the catalog lacks plans when the pool gives its own gpu and gpusPerNode "
                        "(and pricePerNodeHour) (got 'g2-standard-128')")
    assert aks.startswith(f"{P}.vmSize: not a GPU VM size in the catalog (gpufleet/base/catalog/azure_vms.yaml; known: ")
    assert aks.endswith("; a real size the catalog lacks plans when the pool gives its own gpu and gpusPerNode (and "
                        "pricePerNodeHour) (got 'Standard_ND96amsr_A100_v4')")


def test_what_the_platform_cannot_wire_on_an_uncatalogued_shape_is_refused():
    assert spec_problems(_with("prod-gke", GKE_NEW, gpu="L4", gpusPerNode=8, rdma=True, acceleratorCount=8)) == [
        f"{P}.acceleratorCount: not used with gpusPerNode (a machine type the catalog lacks takes the count the stack "
        "gives); remove it (got 8)",
        f"{P}.rdma: g2-standard-128 is not in gpufleet's catalog, so its GPUDirect networks are not known and cannot be "
        "wired; use rdma: false or a catalogued machine type (got True)"]
    assert spec_problems(_with("aks-train", AKS_NEW, gpu="A100-80GB", gpusPerNode=8, rdma=True)) == [
        f"{P}.rdma: Standard_ND96amsr_A100_v4 is not in gpufleet's catalog, so its InfiniBand ports are not known and "
        "cannot be wired; use rdma: false or a catalogued ND size (got True)"]


def test_a_gpu_with_several_gce_accelerator_types_cannot_name_an_uncatalogued_machine():
    # a3-edgegpu-8g-nolssd: a real H100 type (the Compute API as skypilot_v8_gcp records it) the catalog has no row for.
    pool = {**GKE_NEW, "machineType": "a3-edgegpu-8g-nolssd"}
    assert spec_problems(_with("prod-gke", pool, gpu="H100-80GB", gpusPerNode=8)) == [
        f"{P}.gpu: a3-edgegpu-8g-nolssd is not in gpufleet's catalog and Compute Engine has several accelerator types for it "
        "(nvidia-h100-80gb, nvidia-h100-mega-80gb), and gpufleet cannot tell which one this machine takes; add the "
        "machine type to gpufleet/base/catalog/gcp_machines.yaml with its sources (got 'H100-80GB')"]


def test_facts_on_a_catalogued_shape_are_still_refused():
    assert spec_problems(_with("prod-gke", {**GKE_NEW, "machineType": "g2-standard-8"}, gpu="L4", gpusPerNode=1)) == [
        f"{P}.gpu: not used on gke: it follows from machineType; remove it",
        f"{P}.gpusPerNode: not used on gke: it follows from machineType; remove it"]
    assert spec_problems(_with("aks-train", {**AKS_NEW, "vmSize": "Standard_NC24ads_A100_v4"}, gpu="A100-80GB",
                               gpusPerNode=1)) == [
        f"{P}.gpu: not used on aks: it follows from vmSize; remove it",
        f"{P}.gpusPerNode: not used on aks: it follows from vmSize; remove it"]
