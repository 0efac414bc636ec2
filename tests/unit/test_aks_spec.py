"""Unit tests (layer 1): the AKS spec (cluster.aks, nodePools[*] on aks), its cross checks and the Azure catalog.
Each refused mistake is asserted with its exact message: the stack, the key, the value and what is allowed."""

import copy
import datetime as dt

import pytest

from gpufleet.base import catalog
from gpufleet.base.capacity import capacity
from gpufleet.base.catalog import azure, charges
from tests.helpers import example_config
from tests.helpers import load_config as load
from tests.helpers import spec_problems as problems

BASE = example_config("aks-train")
IB_SIZES = "Standard_ND96isr_H100_v5, Standard_ND96isr_H200_v5, Standard_ND128isr_NDR_GB200_v6"


def config(**aks) -> dict:
    c = copy.deepcopy(BASE)
    c["gpufleet:cluster"]["aks"].update(aks)
    return c


def with_pools(*pools) -> dict:
    c = copy.deepcopy(BASE)
    c["gpufleet:nodePools"] = list(pools)
    return c


def test_example_stack_is_valid():
    spec = load(BASE)
    aks = spec.cluster.aks
    assert (aks.location, aks.tier, aks.gpu_driver, aks.private_cluster) == ("eastus", "Standard", "operator", True)
    assert [(p.name, p.vm_size, p.capacity, p.rdma) for p in spec.node_pools] == [
        ("h100ib", "Standard_ND96isr_H100_v5", "on-demand", True), ("a100spot", "Standard_NC24ads_A100_v4", "spot", False)]


def test_aks_driver_with_the_operator_installing_it_too_is_refused():
    c = config(gpuDriver="aks")
    c["gpufleet:nodePools"] = [BASE["gpufleet:nodePools"][1]]
    c["gpufleet:gpuOperator"] = {"driver": {"source": "operator"}}
    assert problems(c) == [
        "stack 'test': gpufleet:gpuOperator.driver.source: cluster.aks.gpuDriver is aks: AKS installs the NVIDIA driver on "
        "every GPU node, so the GPU Operator installing it too would install it twice; set gpuOperator.driver.source: "
        "preinstalled, or cluster.aks.gpuDriver: operator (the default) (got 'operator')"]


def test_operator_driver_with_nobody_installing_it_is_refused():
    c = copy.deepcopy(BASE)
    c["gpufleet:gpuOperator"] = {"driver": {"source": "preinstalled"}}
    assert problems(c) == [
        "stack 'test': gpufleet:gpuOperator.driver.source: cluster.aks.gpuDriver is operator: AKS skips its driver install "
        "(gpu_driver None), so nothing would install the driver; set gpuOperator.driver.source: operator, or "
        "cluster.aks.gpuDriver: aks (got 'preinstalled')"]


def test_infiniband_pools_plan_with_the_aks_driver():
    """Issue 53: the AKS InfiniBand guide's AKS-managed-driver path (the peermem reloader) is no longer refused."""
    spec = load(config(gpuDriver="aks"))
    assert spec.cluster.aks.gpu_driver == "aks" and [p.name for p in spec.node_pools if p.rdma] == ["h100ib"]


def test_infiniband_with_the_aks_driver_and_the_operators_driver_too_is_refused():
    c = config(gpuDriver="aks")
    c["gpufleet:gpuOperator"] = {"driver": {"source": "operator"}}
    assert problems(c) == [
        "stack 'test': gpufleet:gpuOperator.driver.source: cluster.aks.gpuDriver is aks: AKS installs the NVIDIA driver on "
        "every GPU node, so the GPU Operator installing it too would install it twice; set gpuOperator.driver.source: "
        "preinstalled, or cluster.aks.gpuDriver: operator (the default) (got 'operator')"]


def test_infiniband_with_the_aks_driver_and_no_gpu_operator_is_refused():
    """The guide's option 1 without any device plugin: the GPUs would never be advertised (the wording, naming EKS,
    is the AKS trait's kept from before issue 47: gpufleet/base/platforms/aks/addons.py)."""
    c = config(gpuDriver="aks")
    c["gpufleet:nodePools"] = [BASE["gpufleet:nodePools"][0]]
    c["gpufleet:gpuOperator"] = {"enabled": False}
    assert problems(c) == [
        "stack 'test': gpufleet:nodePools[0]: nothing would advertise pool 'h100ib''s nvidia.com/gpu: "
        "gpufleet:gpuOperator.enabled is false and EKS AL2023 NVIDIA AMIs ship no device plugin (Bottlerocket NVIDIA "
        "AMIs do: ami bottlerocket-nvidia); turn the operator on"]


def test_infiniband_on_an_uncatalogued_size_is_refused_with_the_aks_driver_too():
    c = config(gpuDriver="aks")
    c["gpufleet:nodePools"] = [{"name": "newib", "vmSize": "Standard_ND96isr_X100_v9", "gpu": "H100-80GB",
                                "gpusPerNode": 8, "rdma": True, "aks": {"zones": ["1"]}}]
    assert problems(c) == [
        "stack 'test': gpufleet:nodePools[0].rdma: Standard_ND96isr_X100_v9 is not in gpufleet's catalog, so its "
        "InfiniBand ports are not known and cannot be wired; use rdma: false or a catalogued ND size (got True)"]


def test_rdma_on_a_size_without_infiniband_is_refused():
    c = with_pools({"name": "a100", "vmSize": "Standard_NC24ads_A100_v4", "rdma": True})
    assert problems(c) == [
        f"stack 'test': gpufleet:nodePools[0].rdma: Standard_NC24ads_A100_v4 has no InfiniBand (sizes with it: {IB_SIZES}); "
        "set rdma: false or choose an ND size (got True)"]


def test_infiniband_pool_across_zones_is_refused():
    c = with_pools({"name": "h100", "vmSize": "Standard_ND96isr_H100_v5", "rdma": True})
    assert problems(c) == [
        "stack 'test': gpufleet:nodePools[0].aks.zones: an InfiniBand pool runs in one zone: its nodes must share an "
        "InfiniBand fabric, which does not span zones; list one zone (got ['1', '2', '3'])"]


def test_pool_names_must_be_aks_node_pool_names():
    c = with_pools({"name": "h100-training", "vmSize": "Standard_NC24ads_A100_v4"})
    assert problems(c) == [
        "stack 'test': gpufleet:nodePools[0].name: not an AKS node pool name: lowercase letters and digits, starting with "
        "a letter, at most 12 characters (the pool's name is its AKS node pool's name) (got 'h100-training')"]


def test_unknown_and_missing_vm_sizes_are_refused_with_the_known_ones():
    known = ", ".join(azure.vms())
    assert problems(with_pools({"name": "x", "vmSize": "Standard_ND40rs_v2"}, {"name": "y"})) == [
        "stack 'test': gpufleet:nodePools[0].vmSize: not a GPU VM size in the catalog (gpufleet/base/catalog/azure_vms.yaml; "
        f"known: {known}); a real size the catalog lacks plans when the pool gives its own gpu and gpusPerNode (and "
        "pricePerNodeHour) (got 'Standard_ND40rs_v2')",
        f"stack 'test': gpufleet:nodePools[1].vmSize: required on aks: the GPU VM size, e.g. Standard_ND96isr_H100_v5 (known: {known})"]


def test_other_platforms_pool_fields_and_capacity_kinds_are_refused():
    c = with_pools({"name": "x", "vmSize": "Standard_NC24ads_A100_v4", "instanceType": "p5.48xlarge", "capacity": "reserved"})
    assert problems(c) == [
        "stack 'test': gpufleet:nodePools[0].instanceType: not used on aks: eks pools only; remove it",
        "stack 'test': gpufleet:nodePools[0].capacity: not offered on aks (allowed on aks: on-demand, spot) (got 'reserved')"]


def test_dra_pools_are_refused_with_the_reason():
    c = with_pools({"name": "gb200", "vmSize": "Standard_ND128isr_NDR_GB200_v6", "allocation": "dra", "maxNodes": 18})
    assert problems(c) == [
        "stack 'test': gpufleet:nodePools[0].allocation: DRA pools are not supported on aks yet: whether AKS's cluster "
        "autoscaler scales a DRA pool up from zero, and the NVLink domains of ND GB200 v6 racks, are not recorded "
        "(gpufleet/base/catalog/dra.yaml); use allocation: device-plugin (got 'dra')"]


def test_spot_max_price_only_on_spot_pools():
    c = with_pools({"name": "x", "vmSize": "Standard_NC24ads_A100_v4", "aks": {"spotMaxPrice": 2.5}})
    assert problems(c) == [
        "stack 'test': gpufleet:nodePools[0].aks.spotMaxPrice: only Spot pools have a maximum price (set capacity: spot, "
        "or remove it) (got 2.5)"]
    assert problems(with_pools({"name": "x", "vmSize": "Standard_NC24ads_A100_v4", "capacity": "spot",
                                "aks": {"spotMaxPrice": 0}})) == [
        "stack 'test': gpufleet:nodePools[0].aks.spotMaxPrice: must be -1 (up to the on-demand price) or a price above 0 "
        "USD per hour (got 0.0)"]


def test_long_term_support_needs_premium():
    assert problems(config(supportPlan="AKSLongTermSupport")) == [
        "stack 'test': gpufleet:cluster.aks.supportPlan: long-term support needs the Premium tier "
        "(articles/aks/long-term-support.md); set cluster.aks.tier: Premium, or supportPlan: KubernetesOfficial "
        "(got 'AKSLongTermSupport')"]


def test_a_version_past_community_support_needs_lts(monkeypatch):
    monkeypatch.setenv("GPUFLEET_TODAY", "2026-12-04")
    c = config()
    c["gpufleet:cluster"]["kubernetesVersion"] = "1.33"
    assert problems(c) == [
        "stack 'test': gpufleet:cluster.kubernetesVersion: AKS 1.33 is past community support (end of life 2026-07-31): "
        "AKS gives it platform support only, which creates no clusters (aks_calendar); upgrade, or keep it with "
        "cluster.aks.tier: Premium and supportPlan: AKSLongTermSupport (got '1.33')"]
    lts = copy.deepcopy(c)
    lts["gpufleet:cluster"]["aks"].update(tier="Premium", supportPlan="AKSLongTermSupport")
    assert load(lts).cluster.kubernetes_version == "1.33"


def test_ubuntu_22_04_is_refused_with_long_term_support():
    c = config(tier="Premium", supportPlan="AKSLongTermSupport")
    c["gpufleet:nodePools"][1]["aks"] = {"osSku": "Ubuntu2204"}
    assert problems(c) == [
        "stack 'test': gpufleet:nodePools[1].aks.osSku: long-term support on AKS needs Ubuntu 24.04 node pools (Ubuntu "
        "22.04 leaves AKS support on 2027-06-30); set osSku: Ubuntu2404 (got 'Ubuntu2204')"]


def test_managed_lustre_is_refused_with_the_reason():
    msg = problems(config(storage={"managedLustre": True}))
    assert msg == [
        "stack 'test': gpufleet:cluster.aks.storage.managedLustre: gpufleet does not deploy Azure Managed Lustre yet: its "
        "CSI driver is not one of AKS's built-in drivers (it is installed from kubernetes-sigs/azurelustre-csi-driver) and "
        "the file system (Microsoft.StorageCache amlFilesystems) needs its own subnet and sizing; use storage.files (Azure "
        "Files NFS) or storage.blob, or create the file system outside gpufleet (docs/aks.md) (got True)"]


def test_public_api_server_needs_authorized_ranges():
    assert problems(config(privateCluster=False)) == [
        "stack 'test': gpufleet:cluster.aks.privateCluster: a public API server open to the internet: list "
        "cluster.aks.authorizedIpRanges (the CIDRs that may reach it), or keep privateCluster: true (got False)"]
    assert load(config(privateCluster=False, authorizedIpRanges=["203.0.113.0/24"])).cluster.aks.authorized_ip_ranges


def test_overlapping_ranges_and_other_platforms_blocks_are_refused():
    c = config(network={"serviceCidr": "10.224.0.0/16", "dnsServiceIp": "10.224.0.10"})
    c["gpufleet:cluster"]["gke"] = {"region": "us-central1"}
    assert problems(c) == [
        "stack 'test': gpufleet:cluster.gke: not used on aks: the gke block configures platform gke only; remove it (or "
        "set platform: gke)",
        "stack 'test': gpufleet:cluster.aks.network.serviceCidr: overlaps cluster.aks.network.vnetCidr (10.224.0.0/12): "
        "the virtual network, pod and service ranges must not overlap (got '10.224.0.0/16')"]


def test_missing_block_and_version_outside_the_calendar():
    c = copy.deepcopy(BASE)
    del c["gpufleet:cluster"]["aks"]
    c["gpufleet:cluster"]["kubernetesVersion"] = "1.31"
    assert problems(c) == [
        "stack 'test': gpufleet:cluster.kubernetesVersion: '1.31' is not an AKS version gpufleet plans for (allowed: "
        "1.33, 1.34, 1.35, 1.36)",
        "stack 'test': gpufleet:cluster.aks: platform aks needs an `aks:` block with at least a `location`"]


def test_capacity_comes_from_the_vm_size_and_is_unpriced_with_the_reason():
    caps = {c.pool: c for c in capacity(load(BASE))}
    assert (caps["h100ib"].gpu, caps["h100ib"].gpus_per_node, caps["h100ib"].max_gpus) == ("H100-80GB", 8, 32)
    assert (caps["a100spot"].gpu, caps["a100spot"].capacity_type, caps["a100spot"].price_per_node_hour) == ("A100-80GB", "spot", None)


def test_catalog_vms_name_known_gpus_and_sources():
    sources = set(catalog._load("azure_vms.yaml")["sources"])
    for vm in azure.vms().values():
        assert vm.gpu in catalog.gpu_models(), vm.name
        assert vm.sources and set(vm.sources) <= sources, vm.name
        # Prices only from the undated snapshot (azure_vms.yaml `prices:`, tests/unit/test_aks_prices.py).
        assert all(region.isalnum() and (od is None or od > 0) for region, od, _ in vm.prices), vm.name
    assert [n for n, v in azure.vms().items() if v.infiniband] == IB_SIZES.split(", ")


def test_kubernetes_calendar_with_and_without_lts():
    day = dt.date(2026, 12, 4)
    assert catalog.aks_kubernetes_version("1.35", day).status == "standard"
    assert catalog.aks_kubernetes_version("1.33", day).status == "unsupported"
    lts = catalog.aks_kubernetes_version("1.33", day, lts=True)
    assert (lts.status, lts.end_of_extended_support) == ("extended", "2027-07-31")


def test_control_plane_tier_fees_are_sourced():
    assert charges.aks_tier_fee("Free").value == 0.0
    assert charges.aks_tier_fee("Standard").value == pytest.approx(0.10)
    premium = charges.aks_tier_fee("Premium")
    assert premium.value == pytest.approx(0.60) and "Long Term Support" in premium.source
