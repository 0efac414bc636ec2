"""Unit tests: the catalog facts issue 12 found wrong or stale, each against its source's value."""

import datetime as dt
import re

import pytest

from gpufleet.base import catalog, versions
from gpufleet.base.catalog import aws, gcp


@pytest.mark.parametrize(
    "release, supported",
    [
        # NVIDIA/cloud-native-docs gpu-operator/platform-support.rst, Cloud Service Providers table per release.
        ("v26.7.0", ["1.33", "1.34", "1.35", "1.36"]),
        ("v26.3.3", ["1.32", "1.33", "1.34", "1.35", "1.36"]),
        ("v25.10.1", ["1.30", "1.31", "1.32", "1.33", "1.34", "1.35"]),
    ],
)
def test_operator_kubernetes_ranges(release, supported):
    assert list(catalog.operator_release(release).kubernetes) == supported


def test_every_eks_version_is_supported_by_the_pinned_operator():
    """The default operator supports every EKS version but 1.32 (extended support), which an older catalog release
    supports. The ai-on-eks stack ran 1.32 with that release (v25.10.1) until issue 32 moved it to the default minor:
    NVIDIA lists v25.10.x as End of Support (lifecycle.yaml), so no example stack pins it any more."""
    pinned = catalog.operator_release(versions.GPU_OPERATOR.version)
    assert set(versions.EKS_KUBERNETES_VERSIONS) - set(pinned.kubernetes) == {"1.32"}
    assert versions.KUBERNETES_DEFAULT in pinned.kubernetes
    import yaml

    from tests.helpers import ROOT

    stack = yaml.safe_load((ROOT / "stacks" / "Pulumi.ai-on-eks.yaml").read_text())["config"]
    assert stack["gpufleet:cluster"]["kubernetesVersion"] == versions.KUBERNETES_DEFAULT
    assert "version" not in stack["gpufleet:gpuOperator"]


@pytest.mark.parametrize("cuda", ["13.3", "13.4", "13.5"])
def test_new_cuda_releases_are_known(cuda):
    assert cuda in catalog.cuda_versions()
    assert catalog.cuda_support("610.43.02", cuda).ok


def test_cuda_13_3_minimum_is_exact():
    assert catalog.cuda_support("610.43.02", "13.3").mode == "full"
    assert catalog.cuda_support("595.71.05", "13.3").mode == "minor-version"


def test_update_releases_are_not_given_the_ga_minimum_unread():
    """Issue 32: 13.3 Update 1 held the 13.3 GA minimum copied; an update row whose own Table 3 row was not read
    is unknown (null), so a driver runs it through minor-version compatibility with a warning."""
    rows = catalog._load("drivers.yaml")["cuda_min_driver"]["rows"]
    assert rows["13.3.1"] is None and rows["13.4.1"] is None and rows["13.4"] is None and rows["13.5"] is None
    s = catalog.cuda_support("610.43.02", "13.3.1")
    assert (s.ok, s.mode) == (True, "minor-version") and "no minimum driver is recorded for CUDA 13.3.1" in s.why


def _reference_rows(reference) -> dict[str, str]:
    """Table 3 rows of the compiled reference, keyed as drivers.yaml keys them ('12.6 Update 3' -> '12.6.3')."""
    import yaml

    data = yaml.safe_load((reference / "cuda_driver_compat.yaml").read_text())
    rows = {}
    for row in data["toolkit_driver_versions"]:
        name, _, kind = row["cuda"].partition(" ")
        if row["source"] != "cuda_rn_13_2_2" or not name.startswith(("12.", "13.")):
            continue
        key = name if kind == "GA" else f"{name}.{kind.removeprefix('Update ')}"
        rows[key] = row["linux_x86_64_min"]
    return rows


def test_cuda_minimums_match_the_release_notes_table(reference):
    """Every 12.x/13.x row of drivers.yaml that NVIDIA's 13.2.2 Table 3 lists carries exactly that row's minimum,
    update releases included."""
    ours = catalog._load("drivers.yaml")["cuda_min_driver"]["rows"]
    table = _reference_rows(reference)
    assert {"12.6.3", "12.2.2", "13.0.2", "13.2.2"} <= set(table)
    assert {k: ours[k] for k in table if k in ours} == {k: v for k, v in table.items() if k in ours}
    assert set(table) <= set(ours), set(table) - set(ours)


def test_cuda_13_4_without_recorded_minimum_runs_only_in_minor_version_mode():
    s = catalog.cuda_support("610.57.04", "13.4")
    assert (s.ok, s.mode) == (True, "minor-version")
    assert "no minimum driver is recorded for CUDA 13.4" in s.why


@pytest.mark.parametrize(
    "driver, cuda, mode",
    [
        ("450.80.02", "11.8", "minor-version"),  # the exact 11.x minor-version-compatibility minimum
        ("450.51.06", "11.8", "none"),  # branch 450, but below 450.80.02
        ("570.124.06", "12.8.1", "full"),  # 12.8 Update 1's own minimum
        ("570.86.15", "12.8.1", "minor-version"),
        ("570.26", "12.8", "full"),
        ("525.60.13", "12.9", "minor-version"),
        ("525.53.00", "12.0", "none"),
        ("580.65.06", "13.0", "full"),
        ("575.57.08", "13.2", "none"),
    ],
)
def test_cuda_support_modes(driver, cuda, mode):
    assert catalog.cuda_support(driver, cuda).mode == mode


def test_minor_version_pass_names_what_breaks():
    s = catalog.cuda_support("535.104.05", "12.8")
    assert s.limited
    assert "PTX JIT" in s.why and "NVRTC" in s.why and "newer than the driver" in s.why
    assert catalog.driver_runs_cuda("535.104.05", "12.8") == (True, s.why)  # the old API keeps working


def test_bottlerocket_ships_r580_and_runs_cuda_13():
    ami = aws.ami("bottlerocket-nvidia")
    assert ami.driver_branch == 580
    assert catalog.cuda_support(ami.driver_floor, "13.0").mode == "full"


def test_gke_latest_on_134_is_r580_and_runs_cuda_13():
    branch = gcp.gke_driver_branch("1.34", "LATEST")
    assert branch == 580
    assert catalog.driver_runs_cuda(gcp.gke_driver_floor(branch), "13.0")[0]
    assert not catalog.driver_runs_cuda(gcp.gke_driver_floor(gcp.gke_driver_branch("1.34", "DEFAULT")), "13.0")[0]


def test_gke_136_runs_r580_on_both_choices_and_135_runs_134s_cos_125():
    """1.36 nodes run COS 129, whose DEFAULT and LATEST labels are 580.173.02 (gcp_machines.yaml gke_136_cos129);
    1.35 runs COS 125 like 1.34 (gke_135_cos125, issue 49), so it has 1.34's row."""
    assert gcp.gke_driver_branch("1.36", "DEFAULT") == gcp.gke_driver_branch("1.36", "LATEST") == 580
    assert catalog.driver_runs_cuda(gcp.gke_driver_floor(580), "13.0")[0]
    assert (gcp.gke_driver_branch("1.35", "DEFAULT"), gcp.gke_driver_branch("1.35", "LATEST")) == (535, 580)


def test_t4_spot_price_per_gpu():
    assert gcp.machine("n1-standard-4").gpu_spot == 0.175  # was 0.14 (issue 12 audit, GCP spot pricing page)


@pytest.mark.parametrize("name, spot", [
    ("a2-highgpu-1g", 1.44), ("a2-highgpu-8g", 11.54), ("a2-megagpu-16g", 21.87), ("a2-ultragpu-1g", 2.01),
    ("a2-ultragpu-8g", 16.09), ("a3-ultragpu-8g", 32.62),
    # issue 32: A3 High/Mega were 31-38 % above this reading (26.55 and 29.36 for the 8-GPU types)
    ("a3-highgpu-1g", 2.52), ("a3-highgpu-2g", 5.05), ("a3-highgpu-4g", 10.10), ("a3-highgpu-8g", 20.20),
    ("a3-megagpu-8g", 21.21),
])
def test_gcp_spot_prices_from_the_2026_reading(name, spot):
    """Issue 12: A2 and A3 Ultra spot were low; spot_2026 in gcp_machines.yaml says where each figure comes from."""
    m = gcp.machine(name)
    assert m.price("spot", m.fixed_count) == spot and "spot_2026" in m.sources


def test_accelerator_optimized_spot_prices_come_from_one_reading():
    """Issue 32: every A2/A3 spot figure comes from the same reading (spot_2026), so families are comparable."""
    priced = {n: m for n, m in gcp.machines().items() if n.startswith(("a2-", "a3-")) and m.spot is not None}
    assert priced and {n for n, m in priced.items() if "spot_2026" not in m.sources} == set()


def test_a4_spot_is_unpriced_not_guessed():
    m = gcp.machine("a4-highgpu-8g")
    assert m.spot is None and m.price("spot", 8) is None  # no sourced figure: the plan lists the pool as unpriced
    assert m.price("on-demand", 8) == 143.44


def test_p5en_uses_efa_only_secondary_interfaces():
    t = aws.instance_type("p5en.48xlarge")
    assert (t.network_cards, t.efa_interfaces, t.efa_secondary) == (16, 16, "efa-only")


def test_p6_b200_is_a_b200_type_with_eight_efa_and_its_sourced_price():
    t = aws.instance_type("p6-b200.48xlarge")
    assert (t.gpu, t.gpus, t.network_cards, t.efa_interfaces) == ("B200", 8, 8, 8)
    # karpenter-provider-aws zz_generated.pricing_aws.go @1d927085, us-east-1; no spot figure read: unpriced.
    assert t.price("on-demand") == 113.9328 and "karpenter_pricing" in t.sources and t.price("spot") is None


@pytest.mark.parametrize("name", ["g6f.xlarge", "gr6f.4xlarge", "g7.2xlarge", "g7e.48xlarge", "p6-b300.48xlarge",
                                  "p6e-gb200.36xlarge", "p6e-gb300.36xlarge"])
def test_new_aws_gpu_families_are_gpu_types(name):
    assert aws.is_gpu_type(name)


@pytest.mark.parametrize("name", ["a4x-highgpu-4g", "g4-standard-48"])
def test_new_gcp_gpu_families_have_gpus(name):
    assert gcp.machine_has_gpus(name)


@pytest.mark.parametrize("name", ["a3-highgpu-1g", "a3-highgpu-2g", "a3-highgpu-4g"])
def test_small_a3_high_is_not_sold_on_demand(name):
    m = gcp.machine(name)
    assert not m.sold_on_demand and m.on_demand is None
    assert set(m.sale_options) == {"spot", "flex-start"}
    assert m.price("on-demand", m.fixed_count) is None and m.price("spot", m.fixed_count) > 0


def test_versions_tcpxo_and_autoscaler_pairs():
    assert versions.CLUSTER_AUTOSCALER.version == "9.59.0" and versions.CLUSTER_AUTOSCALER.app_version == "v1.35.0"
    assert set(versions.EKS_KUBERNETES_VERSIONS) <= set(versions.CLUSTER_AUTOSCALER_IMAGES)
    # kubernetes/autoscaler README "Releases": the autoscaler's minor is the cluster's minor, never another one.
    for minor, tag in versions.CLUSTER_AUTOSCALER_IMAGES.items():
        assert re.fullmatch(rf"v{re.escape(minor)}\.\d+", tag), (minor, tag)
    assert "bd4a7491672b48dfec28f3679b679a614f6cbbc7" in versions.GKE_GPUDIRECT_MANIFESTS["TCPXO"]["nccl-installer"]


def test_eks_136_and_extended_support_cost():
    assert "1.36" in versions.EKS_KUBERNETES_VERSIONS
    day = dt.date(2026, 12, 2)
    v134 = catalog.eks_kubernetes_version("1.34", day)
    assert (v134.status, v134.hourly_price) == ("extended", 0.60)  # extended billing starts on the EOSS day
    assert catalog.eks_kubernetes_version("1.34", dt.date(2026, 12, 1)).hourly_price == 0.10
    assert catalog.eks_kubernetes_version("1.35", day).status == "standard"
    assert catalog.eks_kubernetes_version("1.33", dt.date(2027, 7, 29)).status == "unsupported"


def test_default_kubernetes_version_is_in_standard_support_everywhere():
    day = dt.date(2026, 12, 2)
    default = versions.KUBERNETES_DEFAULT
    assert catalog.eks_kubernetes_version(default, day).status == "standard"
    assert catalog.gke_kubernetes_version(default, day).status == "standard"
    assert default in catalog.operator_release(versions.GPU_OPERATOR.version).kubernetes
    assert default in versions.K3S_RELEASES
    assert catalog.gke_kubernetes_version("1.34", day).status == "extended"


# ---- issue 12: instance and machine rows for the families that had none ------------------------------------

@pytest.mark.parametrize("name, gpu, gpus, efa, cards", [
    ("g6f.large", "L4-3Q", 1, 0, 1), ("g6f.4xlarge", "L4-12Q", 1, 0, 1), ("gr6f.4xlarge", "L4-12Q", 1, 0, 1),
    ("g7.2xlarge", "RTX-PRO-4500", 1, 0, 1), ("g7.48xlarge", "RTX-PRO-4500", 8, 2, 2),
    ("g7e.2xlarge", "RTX-PRO-6000", 1, 0, 1), ("g7e.48xlarge", "RTX-PRO-6000", 8, 4, 4),
    ("p6-b300.48xlarge", "B300", 8, 16, 17),
])
def test_new_aws_rows_from_describe_instance_types(name, gpu, gpus, efa, cards):
    t = aws.instance_type(name)
    assert (t.gpu, t.gpus, t.efa_interfaces, t.network_cards) == (gpu, gpus, efa, cards)
    assert "karpenter_types" in t.sources and t.arch == "amd64"  # gr6f is an AMD EPYC host, not Graviton
    # On-demand from karpenter_pricing (the same karpenter-provider-aws commit); no spot figure read: unpriced.
    assert t.price("on-demand") == PRICE_LIST_2026_07_20[name] and "karpenter_pricing" in t.sources
    assert t.price("spot") is None


# InitialOnDemandPricesAWS["us-east-1"] of aws/karpenter-provider-aws pkg/providers/pricing/zz_generated.pricing_aws.go
# @1d927085 ("generated at 2026-07-20T13:44:30Z for us-east-1"), every row issue 32 found unpriced.
PRICE_LIST_2026_07_20 = {
    "p6-b200.48xlarge": 113.9328, "p6-b300.48xlarge": 142.416, "gr6.4xlarge": 1.5392, "gr6f.4xlarge": 1.066,
    "g6f.large": 0.202, "g6f.xlarge": 0.2375, "g6f.2xlarge": 0.475, "g6f.4xlarge": 0.95,
    "g7.2xlarge": 2.52, "g7.4xlarge": 3.04208, "g7.8xlarge": 4.08624, "g7.12xlarge": 7.12832, "g7.24xlarge": 14.25664,
    "g7.48xlarge": 28.51328, "g7e.2xlarge": 3.36312, "g7e.4xlarge": 3.99816, "g7e.8xlarge": 5.26824,
    "g7e.12xlarge": 8.28608, "g7e.24xlarge": 16.57216, "g7e.48xlarge": 33.14432,
}


@pytest.mark.parametrize("name", sorted(PRICE_LIST_2026_07_20))
def test_rows_unpriced_before_issue_32_carry_the_price_list_figure(name):
    assert aws.instance_type(name).price("on-demand") == PRICE_LIST_2026_07_20[name]


def test_fractional_l4_slices_are_their_own_models_without_mig():
    for name, memory, fraction in (("L4-3Q", 3, 0.125), ("L4-6Q", 6, 0.25), ("L4-12Q", 12, 0.5)):
        g = catalog.gpu(name)
        assert (g.fraction_of, g.fraction, g.memory_gb, g.mig_capable) == ("L4", fraction, memory, False)


def test_new_gpu_models_mig_and_driver_facts():
    assert catalog.gpu("B300").mig.profiles["7g.269gb"] == 1 and catalog.gpu("B300").mig.max_instances == 7
    assert catalog.gpu("GB200").mig.profiles["1g.23gb"] == 7
    assert catalog.gpu("RTX-PRO-6000").min_driver_branch == 575 and catalog.gpu("RTX-PRO-6000").mig.max_instances == 4
    assert catalog.gpu("RTX-PRO-4500").mig is None
    assert catalog.gpu("B300").min_driver_branch is None  # not read: the driver-floor check does not judge it


@pytest.mark.parametrize("name, gpu, count, on_demand", [
    ("a4x-highgpu-4g", "GB200", 4, None), ("g4-standard-48", "RTX-PRO-6000", 1, 4.50),
    ("g4-standard-384", "RTX-PRO-6000", 8, 36.00),
])
def test_new_gcp_machine_rows(name, gpu, count, on_demand):
    m = gcp.machine(name)
    assert (m.gpu, m.fixed_count, m.price("on-demand", count)) == (gpu, count, on_demand)
    assert m.price("spot", count) is None
