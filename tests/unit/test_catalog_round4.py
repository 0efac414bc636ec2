"""Unit tests (layer 1): issue 49's catalog facts against their sources, and a catalog that never blocks a real stack
(types from Karpenter's EC2 data, stack-given facts for a type the catalog lacks)."""

import pytest

from gpufleet.base.catalog import aws as aws_catalog
from gpufleet.base.catalog import prices, show
from gpufleet.base.catalog.refresh import karpenter
from gpufleet.base.spec.checks.catalog_checks import catalog_warnings
from gpufleet.base.capacity import capacity
from tests.helpers import example_config, load_config, spec_problems

P = "stack 'test': gpufleet:nodePools[1]"


def _l4_pool(cfg, **fields):
    pool = cfg["gpufleet:nodePools"][1]
    pool.pop("instanceTypes", None)
    pool.update(fields)
    return cfg


# ---- Karpenter's generated EC2 data: every real NVIDIA size --------------------------------------------------------

@pytest.mark.parametrize("name, gpu, gpus, efa, on_demand", [
    ("g6e.2xlarge", "L40S", 1, 0, 2.24208), ("g6e.24xlarge", "L40S", 4, 2, 15.06559),
    ("g4dn.metal", "T4", 8, 1, 7.824), ("p5.4xlarge", "H100-80GB", 1, 1, 6.88), ("gr6.8xlarge", "L4", 1, 1, 2.4464),
])
def test_sizes_the_hand_rows_lack_come_from_karpenters_ec2_data(name, gpu, gpus, efa, on_demand):
    t = aws_catalog.instance_type(name)
    assert (t.gpu, t.gpus, t.efa_interfaces) == (gpu, gpus, efa)
    assert t.sources == aws_catalog.GENERATED_SOURCES and t.spot is None
    fact = prices.aws_instance_price(name, "on-demand", "us-east-1")
    assert fact.value == on_demand and fact.as_of == "2026-07-20"


def test_a_real_size_plans_where_it_was_refused_as_unknown():
    cfg = _l4_pool(example_config("prod-eks"), instanceType="g6e.2xlarge")
    pool = load_config(cfg).node_pools[1]
    cap = capacity(load_config(cfg), "us-east-1")[1]
    assert (pool.instance_type, cap.gpu, cap.gpus_per_node, cap.price_per_node_hour) == ("g6e.2xlarge", "L40S", 1, 2.24208)


def test_hand_on_demand_prices_are_the_2026_07_20_price_list():
    # The 2025-11-15 page figures agreed with the Price List Karpenter generated on 2026-07-20 (to the cent): the rows
    # now carry the newer, exact figure and its date; spot estimates keep theirs.
    fact = prices.aws_instance_price("p4d.24xlarge", "on-demand", "us-east-1")
    assert (fact.value, fact.as_of) == (21.957642, "2026-07-20") and "karpenter" in fact.source
    spot = prices.aws_instance_price("p4d.24xlarge", "spot", "us-east-1")
    assert spot.as_of == "2025-11-15"


def test_p5_family_instance_store_is_8_x_3800():
    for name in ("p5.48xlarge", "p5e.48xlarge", "p5en.48xlarge"):
        assert aws_catalog.instance_store(name) == aws_catalog.InstanceStore(30400, 8, 3800)
    assert aws_catalog.instance_store("p5.4xlarge") == aws_catalog.InstanceStore(3800)


DOCS = """## g6e Family
### `g6e.2xlarge`
#### Labels
 | Label | Value |
 |--|--|
 |karpenter.k8s.aws/instance-cpu|8|
 |karpenter.k8s.aws/instance-gpu-count|1|
 |karpenter.k8s.aws/instance-gpu-manufacturer|nvidia|
 |karpenter.k8s.aws/instance-gpu-memory|45776|
 |karpenter.k8s.aws/instance-gpu-name|l40s|
 |karpenter.k8s.aws/instance-local-nvme|450|
 |karpenter.k8s.aws/instance-memory|65536|
 |kubernetes.io/arch|amd64|
#### Resources
 | Resource | Quantity |
 |--|--|
 |nvidia.com/gpu|1|
### `p4d.24xlarge`
#### Labels
 | Label | Value |
 |--|--|
 |karpenter.k8s.aws/instance-cpu|96|
 |karpenter.k8s.aws/instance-gpu-count|8|
 |karpenter.k8s.aws/instance-gpu-manufacturer|nvidia|
 |karpenter.k8s.aws/instance-gpu-memory|40960|
 |karpenter.k8s.aws/instance-gpu-name|a100|
 |karpenter.k8s.aws/instance-memory|1179648|
 |kubernetes.io/arch|amd64|
#### Resources
 |vpc.amazonaws.com/efa|4|
### `g5g.xlarge`
#### Labels
 |karpenter.k8s.aws/instance-cpu|4|
 |karpenter.k8s.aws/instance-gpu-count|1|
 |karpenter.k8s.aws/instance-gpu-manufacturer|nvidia|
 |karpenter.k8s.aws/instance-gpu-name|t4g|
 |karpenter.k8s.aws/instance-memory|8192|
 |kubernetes.io/arch|arm64|
"""
VPCLIMITS = """var Limits = map[string]*VPCLimits{
\t"g6e.2xlarge": {
\t\tInterface:               4,
\t\tDefaultNetworkCardIndex: 0,
\t\tNetworkCards: []NetworkCard{
\t\t\t{
\t\t\t\tMaximumNetworkInterfaces: 4,
\t\t\t\tNetworkCardIndex:         0,
\t\t\t},
\t\t},
\t},
\t"p4d.24xlarge": {
\t\tDefaultNetworkCardIndex: 0,
\t\tNetworkCards: []NetworkCard{
\t\t\t{
\t\t\t\tNetworkCardIndex:         0,
\t\t\t},
\t\t\t{
\t\t\t\tNetworkCardIndex:         1,
\t\t\t},
\t\t\t{
\t\t\t\tNetworkCardIndex:         2,
\t\t\t},
\t\t\t{
\t\t\t\tNetworkCardIndex:         3,
\t\t\t},
\t\t},
\t},
"""
PRICING = """// generated at 2026-07-20T13:44:30Z for us-east-1
var InitialOnDemandPricesAWS = map[string]map[ec2types.InstanceType]float64{
\t// us-east-1
\t"us-east-1": {
\t\t"g6e.2xlarge": 2.242080, "p4d.24xlarge": 21.957642,
\t},
}
"""


def test_the_generator_reads_karpenters_three_files():
    assert karpenter.rows(DOCS, VPCLIMITS, PRICING) == {
        "g6e.2xlarge": {"gpu": "L40S", "gpus": 1, "vcpus": 8, "memory_gib": 64, "arch": "amd64", "network_cards": 1,
                        "efa_interfaces": 0, "local_nvme_gb": 450, "on_demand": 2.24208},
        "p4d.24xlarge": {"gpu": "A100-40GB", "gpus": 8, "vcpus": 96, "memory_gib": 1152, "arch": "amd64",
                         "network_cards": 4, "efa_interfaces": 4, "local_nvme_gb": None, "on_demand": 21.957642},
    }  # g5g (t4g): no catalog GPU model, left out


# ---- stack-given facts for a type the catalog lacks ---------------------------------------------------------------

def test_an_uncatalogued_type_plans_with_the_stacks_facts_and_a_warning():
    cfg = _l4_pool(example_config("prod-eks"), instanceType="g8.2xlarge", gpu="L4", gpusPerNode=1, pricePerNodeHour=1.5)
    spec = load_config(cfg)
    cap = capacity(spec, "us-east-1")[1]
    assert (cap.gpu, cap.gpus_per_node, cap.price_per_node_hour) == ("L4", 1, 1.5)
    warnings = [str(w) for w in catalog_warnings("test", spec) if "g8.2xlarge" in str(w)]
    assert warnings == [f"{P}.instanceType: g8.2xlarge is not in gpufleet's catalog: pool 'l4-infer' is planned with the "
                        "facts the stack gives (1 x L4, pricePerNodeHour 1.5), which no source confirms; its network cards, "
                        "EFA interfaces and instance store are unknown (RDMA and raid0 are not offered) (got 'g8.2xlarge')"]


def test_an_uncatalogued_type_without_a_price_is_unpriced_not_free():
    cfg = _l4_pool(example_config("prod-eks"), instanceType="g8.2xlarge", gpu="L4", gpusPerNode=1)
    cap = capacity(load_config(cfg), "us-east-1")[1]
    assert cap.price_per_node_hour is None


def test_stack_facts_need_both_gpu_and_count():
    cfg = _l4_pool(example_config("prod-eks"), instanceType="g8.2xlarge", gpu="L4")
    problems = spec_problems(cfg)  # the platform's unknown-type refusal first, then the shared stack-facts check's
    assert len(problems) == 2 and problems[0].startswith(f"{P}.instanceType: unknown EC2 instance type")
    assert problems[1] == f"{P}.gpusPerNode: required with gpu for g8.2xlarge, which gpufleet's catalog does not know"


def test_stack_facts_on_a_catalogued_type_are_still_refused():
    cfg = _l4_pool(example_config("prod-eks"), instanceType="g6.xlarge", gpu="L4", gpusPerNode=1)
    assert spec_problems(cfg) == [f"{P}.gpu: not used on eks: it follows from the instance type; remove it",
                                  f"{P}.gpusPerNode: not used on eks: it follows from the instance type; remove it"]


def test_stack_facts_do_not_wire_efa():
    cfg = _l4_pool(example_config("prod-eks"), instanceType="g8.48xlarge", gpu="L4", gpusPerNode=8, rdma=True)
    assert f"{P}.instanceType: g8.48xlarge is not in gpufleet's catalog, so its EFA interfaces are not known and EFA " \
           "cannot be wired; use rdma: false or a catalogued EFA type (got 'g8.48xlarge')" in spec_problems(cfg)


# ---- facts that disagreed with their sources ---------------------------------------------------------------------

def test_g7_is_refused_on_every_eks_ami():
    cfg = _l4_pool(example_config("prod-eks"), instanceType="g7.2xlarge")
    problems = spec_problems(cfg)
    assert len(problems) == 1 and problems[0].startswith(
        f"{P}.instanceType: RTX-PRO-4500 needs NVIDIA driver branch 595 or newer, but every EKS GPU AMI ships an older "
        "branch (al2023-nvidia: 580, bottlerocket-nvidia: 580): its nodes would join with no usable GPU; use another "
        "instance type (source: Amazon EKS User Guide")


# ---- how much of a stack and a fleet the totals do not price -----------------------------------------------------

def test_totals_say_how_much_is_unpriced():
    from gpufleet.app.plan.cost import Cost, CostItem, total_line

    cost = Cost(items=[
        CostItem("control plane", "control-plane", 1, 1, 0.10, "catalog"),
        CostItem("pool a nodes", "gpu-nodes", 0, 4, 10.0, "catalog", key="gpu-nodes:a"),
        CostItem("reservation of pool gb", "reservation", 18, 18, None, "capacity block", committed=True,
                 key="reservation:gb"),
        CostItem("per claim", "per-claim", 0, 1, None, "shown only"),
    ], gpus_per_node={"a": 8, "gb": 4})
    assert cost.unpriced_share() == {"items": 1, "billedItems": 3, "gpusMax": 72, "allGpusMax": 104}
    assert cost.to_json()["unpricedShare"] == cost.unpriced_share()
    assert total_line(cost).endswith("(unpriced: 1 of 3 billed items, 72 of 104 GPUs at maximum size: "
                                     "reservation of pool gb)")


def test_fleet_totals_add_the_stacks_unpriced_shares():
    from gpufleet.app.plan import fleet

    doc = {"fleet": {"stacks": 2, "gpusMin": 0, "gpusMax": 104, "hourlyMin": 1.0, "hourlyMax": 40.1,
                     "costIsLowerBound": True,
                     "unpricedShare": {"items": 1, "billedItems": 5, "gpusMax": 72, "allGpusMax": 104}}}
    assert fleet._totals(doc).endswith("maximum at least 40.10 USD/h (unpriced: 1 of 5 billed items, 72 of 104 GPUs "
                                       "at maximum size)")


def test_a_capacity_block_pool_says_how_to_price_it():
    from gpufleet.base.platforms.eks.pricing import EksPricing
    from types import SimpleNamespace

    reason = EksPricing().unpriced_reason(SimpleNamespace(pool="gb200", reservation={"type": "capacity-block"},
                                                          capacity_type="reserved"))
    assert "aws.amazon.com/ec2/capacityblocks/pricing/" in reason and "declare pricePerNodeHour" in reason
    assert "catalog holds it only for p6e-gb200.36xlarge in us-east-1)" in reason


def test_a_p6e_gb200_capacity_block_is_priced_at_the_published_ultraserver_rate():
    """aws_instances.yaml capacity_block_prices: u-p6e-gb200x72 761.904 USD/h (72 x B200 at 10.582) in the Dallas Local
    Zone of us-east-1, read 2026-06-19; one p6e-gb200.36xlarge is 1/18 of it. Other regions and types: unpriced."""
    from gpufleet.base.platforms.eks.pricing import EksPricing

    fact = prices.aws_capacity_block_price("p6e-gb200.36xlarge", "us-east-1")
    assert (fact.value, fact.as_of, fact.region) == (42.328, "2026-06-19", "us-east-1")
    assert fact.value == round(761.904 / 18, 3) == round(4 * 10.582, 3)
    assert "u-p6e-gb200x72 $761.904/h" in fact.source and "us-east-1-dfw-2a" in fact.source
    assert prices.aws_capacity_block_price("p6e-gb200.36xlarge", "us-west-2") is None
    assert prices.aws_capacity_block_price("p5.48xlarge", "us-east-1") is None  # no current rate read
    spec = load_config(example_config("nvl72-eks"))
    assert EksPricing().node_price(spec.node_pools[0], 4, "us-east-1") == (42.328, fact)
    assert EksPricing().node_price(spec.node_pools[0], 4, "us-west-2") == (None, None)
    assert ("  EC2 Capacity Block (USD/h per instance, us-east-1, us-east-1-dfw-2a): 42.33 (10.582 per accelerator, as of "
            "2026-06-19; aws_instances.yaml capacity_block_prices)") in show.show("p6e-gb200.36xlarge").splitlines()


def test_the_whole_nvadsa10_v5_family_is_refused_for_its_grid_driver():
    cfg = example_config("aks-train")
    cfg["gpufleet:nodePools"] = [{**cfg["gpufleet:nodePools"][0], "vmSize": "Standard_NV36ads_A10_v5", "rdma": False}]
    problems = [p for p in spec_problems(cfg) if "GRID" in p]
    assert len(problems) == 1 and problems[0].startswith(
        "stack 'test': gpufleet:nodePools[0].vmSize: Standard_NV36ads_A10_v5 runs only NVIDIA's GRID (vGPU) driver, "
        "which gpufleet does not install")
    assert "nva10v5-series.md" in problems[0]


def test_cos_125_gives_h200_r570_by_default_and_gb200_570_124_06():
    from gpufleet.base.catalog import gcp

    assert gcp.gke_gpu_driver_branch("1.35", "DEFAULT", "H200") == gcp.gke_gpu_driver_branch("1.34", "DEFAULT", "H200") == 570
    assert gcp.gke_gpu_driver_branch("1.33", "DEFAULT", "H200") == 550  # older COS milestones keep their row
    assert gcp.gke_gpu_driver_branch("1.35", "DEFAULT", "GB200") == 570
    assert gcp.gke_driver_floor(570) == "570.124.06"
