"""Support calendars (issue 32): the GKE extended-support fee, lifecycle warnings for every versioned component, the
injectable date, and the example stacks planning without version warnings; on EKS the driver branch of the AMI release
each GPU pool runs (issue 50).

Every date is passed explicitly: nothing here depends on the wall clock.
"""

from __future__ import annotations

import datetime as dt

import pytest

from gpufleet.app import cli
from gpufleet.app.review import render as render_review
from gpufleet.app.review import review_plans
from gpufleet.base import versions
from gpufleet.base.catalog import aws as aws_catalog
from gpufleet.base.catalog import charges, lifecycle
from gpufleet.base.catalog.charges import Missing, Rate
from gpufleet.base.spec import SpecError
from gpufleet.base.spec.checks.catalog_checks import catalog_warnings
from gpufleet.base.spec.checks.lifecycle_checks import SUPPORT_WARNING_DAYS
from tests.helpers import example_config, load_config, plan_config

DAY = dt.date(2026, 12, 4)  # the date the calendars were read
STACKS = ["ai-on-eks", "amd-lab", "dev", "dws-gke", "ha", "karpenter-eks", "lab", "p5-efa", "prod-eks", "prod-gke",
          "teams", "teams-eks"]
# Paths lifecycle findings are reported on (gpufleet/base/spec/checks/lifecycle_checks.py).
LIFECYCLE_PATHS = ("gpufleet:cluster.kubernetesVersion", "gpufleet:gpuOperator.version", "gpufleet:gpuOperator.driver.version",
                   "gpufleet:nodePools[*].gke.gpuDriverVersion")


def _warnings(config: dict, day: dt.date) -> list[str]:
    return [f"{w.path}: {w.message}" for w in catalog_warnings("s", load_config(config, "s"), day)]


def _lifecycle(config: dict, day: dt.date) -> list[str]:
    """Lifecycle findings: by path, and EKS's driver warnings by their message (they share gpufleet:nodePools and
    nodePools[i].amiRelease with the AMI age warnings, which are not lifecycle findings)."""
    return [w for w in _warnings(config, day) if w.startswith(LIFECYCLE_PATHS) or ": NVIDIA driver branch R" in w]


# ---- GKE extended-support fee (charges.yaml gke.extended_support, kubernetes.yaml gke.versions) ------------------

def test_gke_fee_on_the_extended_channel_adds_the_extended_support_fee():
    fee = charges.gke_cluster_fee("1.34", "EXTENDED")  # 1.34 left GKE standard support on 2026-10-01
    assert isinstance(fee, Rate) and fee.value == pytest.approx(0.60)
    assert "GKE 1.34 in extended support (since 2026-10-01) on the Extended channel: 0.10 + 0.50" in fee.source
    assert "cloud.google.com/kubernetes-engine/pricing" in fee.source


def test_gke_fee_outside_the_extended_channel_stays_standard_and_says_why():
    fee = charges.gke_cluster_fee("1.34", "REGULAR")
    assert fee.value == pytest.approx(0.10) and "GKE upgrades the cluster rather than bill extended support" in fee.source
    assert charges.gke_cluster_fee("1.35", "EXTENDED").value == pytest.approx(0.10)  # standard support until 2027-04-11
    assert isinstance(charges.gke_cluster_fee("1.29", "REGULAR"), Missing)


def test_gke_calendar_has_dates_for_every_minor_gpufleet_plans_but_the_newest():
    statuses = {v: charges.gke_support(v, DAY) for v in versions.GKE_KUBERNETES_VERSIONS}
    assert statuses == {"1.32": ("extended", "2026-04-11"), "1.33": ("extended", "2026-08-03"),
                        "1.34": ("extended", "2026-10-01"), "1.35": ("standard", "2027-04-11"),
                        "1.36": ("standard", None)}  # 1.36: dates not read; recorded as standard


def test_gke_plan_prices_an_extended_channel_cluster_at_the_extended_fee():
    c = example_config("prod-gke")
    c["gpufleet:cluster"]["kubernetesVersion"] = "1.34"
    c["gpufleet:cluster"]["gke"]["releaseChannel"] = "EXTENDED"
    p = plan_config(c, policies=False)
    (item,) = [i for i in p.cost.items if i.kind == "control-plane"]
    assert item.unit_hourly == pytest.approx(0.60)
    assert any("GKE 1.34 is in extended support since 2026-10-01: the cluster management fee is 0.60" in n
               for n in p.cost.notes)


# ---- lifecycle warnings ------------------------------------------------------------------------------------------

def test_gpu_operator_end_of_support_and_deprecated_releases_warn():
    c = example_config("prod-eks")
    c["gpufleet:gpuOperator"] = {"version": "v25.10.1", "driver": {"source": "preinstalled"}}
    (w,) = [w for w in _lifecycle(c, DAY) if "gpuOperator.version" in w]
    assert w.startswith("gpufleet:gpuOperator.version: GPU Operator v25.10.1 is past the end of its support (NVIDIA GPU "
                        "Operator life-cycle policy")
    c["gpufleet:gpuOperator"]["version"] = "v26.3.3"
    (w,) = [w for w in _lifecycle(c, DAY) if "gpuOperator.version" in w]
    assert "GPU Operator v26.3.3 is deprecated: critical bug and CVE fixes only" in w
    c["gpufleet:gpuOperator"]["version"] = versions.GPU_OPERATOR.version
    assert not [w for w in _lifecycle(c, DAY) if "gpuOperator.version" in w]


def test_driver_branch_warns_within_the_window_and_after_its_end():
    c = example_config("dev")
    c["gpufleet:gpuOperator"] = {"driver": {"source": "operator", "version": "595.71.05"}}  # R595 ends 2027-03-31
    end = dt.date(2027, 3, 31)
    assert not [w for w in _lifecycle(c, end - dt.timedelta(days=SUPPORT_WARNING_DAYS + 1)) if "driver" in w]
    (w,) = [w for w in _lifecycle(c, end - dt.timedelta(days=SUPPORT_WARNING_DAYS)) if "driver" in w]
    assert ("gpufleet:gpuOperator.driver.version: NVIDIA driver branch R595 (PB) reaches the end of its support in 90 days "
            "(2027-03-31; NVIDIA Data Center Drivers") in w
    (w,) = [w for w in _lifecycle(c, end + dt.timedelta(days=1)) if "driver" in w]
    assert "reached the end of its support on 2027-03-31" in w


def test_driver_branch_past_its_end_and_unknown_branch_warn():
    assert lifecycle.driver_branch(570).status == "end_of_support"
    assert lifecycle.driver_branch(535).end == dt.date(2026, 6, 30)
    older = lifecycle.driver_branch(550)  # not in NVIDIA's table of supported branches, older than its newest
    assert older.status == "end_of_support" and older.source.startswith("not among the supported branches of NVIDIA")
    unknown = lifecycle.driver_branch(999)  # newer than any branch the table lists
    assert unknown.status == "unknown" and "R999 is not in lifecycle.yaml" in unknown.source


def test_k3s_minor_warns_before_upstream_end_of_life():
    c = example_config("dev")
    c["gpufleet:cluster"]["kubernetesVersion"] = "1.35"  # upstream end of life 2027-02-28
    assert not _lifecycle(c, dt.date(2026, 11, 29))  # 91 days before
    (w,) = _lifecycle(c, dt.date(2026, 11, 30))  # 90 days before
    assert w.startswith("gpufleet:cluster.kubernetesVersion: k3s 1.35 (Kubernetes 1.35 upstream) reaches the end of its "
                        "support in 90 days (2027-02-28; kubernetes.io/releases/")


def test_eks_version_warns_before_standard_support_ends_with_the_extended_price():
    c = example_config("prod-eks")  # 1.35: EKS standard support until 2027-03-27
    assert not [w for w in _lifecycle(c, dt.date(2026, 12, 26)) if "kubernetesVersion" in w]  # 91 days before
    (w,) = [w for w in _lifecycle(c, dt.date(2026, 12, 27)) if "kubernetesVersion" in w]
    assert w.startswith("gpufleet:cluster.kubernetesVersion: EKS 1.35 leaves standard support in 90 days (2027-03-27; ")
    assert "in extended support the control plane costs USD 0.60 per cluster-hour instead of 0.10" in w


def test_gke_version_past_standard_support_names_the_channel_and_the_fee():
    c = example_config("prod-gke")
    c["gpufleet:cluster"]["kubernetesVersion"] = "1.34"
    (w,) = [w for w in _lifecycle(c, DAY) if "kubernetesVersion" in w]
    assert ("GKE 1.34 is past standard support since 2026-10-01 (extended support; on the REGULAR channel GKE upgrades "
            "the cluster at the end of standard support (only the Extended channel keeps the minor, at USD 0.60 per "
            "cluster-hour instead of 0.10))") in w


def test_gke_135_driver_is_judged_like_134s_cos_125():
    """Issue 49: GKE 1.35 runs COS 125 like 1.34, so its DEFAULT is R535 (past its end of support): a pool on DEFAULT
    is told so, where it used to get "not recorded"."""
    c = example_config("prod-gke")
    c["gpufleet:nodePools"][1]["gke"].pop("gpuDriverVersion")
    found = [w for w in _warnings(c, DAY) if "gke.gpuDriverVersion" in w]
    assert len(found) == 1 and "R535" in found[0] and "pool 'l4-infer'" in found[0]
    assert not any("does not record which driver branch GKE 1.35 installs" in w for w in _warnings(c, DAY))


def test_no_calendar_is_recorded_with_its_reason():
    assert "ROCm/gpu-operator" in lifecycle.no_calendar("amd_gpu_operator")
    assert "compatibility matrices, not support calendars" in lifecycle.no_calendar("charts")


# ---- example stacks --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("stack", STACKS)
def test_example_stacks_plan_without_version_or_lifecycle_warnings(stack):
    c = example_config(stack)
    found = _lifecycle(c, DAY)
    assert found == []
    if c["gpufleet:cluster"]["platform"] == "k3s":
        # k3s 1.35 leaves upstream support on 2027-02-28, inside the 90-day window: the k3s stacks run the newest
        # k3s minor gpufleet pins, so they plan without that warning.
        assert c["gpufleet:cluster"]["kubernetesVersion"] == max(versions.K3S_RELEASES, key=lambda v: tuple(map(int, v.split("."))))
    else:
        assert c["gpufleet:cluster"]["kubernetesVersion"] == versions.KUBERNETES_DEFAULT


# ---- the date is injectable; bad input exits 2 -------------------------------------------------------------------

def test_plan_today_option_judges_calendars_on_that_date(capsys):
    import json

    assert cli.main(["plan", "prod-eks", "--format", "json", "--today", "2027-01-10"]) == 0
    warnings = [w["message"] for w in json.loads(capsys.readouterr().out)["warnings"]]
    assert any(m.startswith("EKS 1.35 leaves standard support in 76 days (2027-03-27") for m in warnings)


@pytest.mark.parametrize("value", ["2027-13-01", "tomorrow", "04/12/2026"])
def test_plan_today_option_refuses_a_bad_date(capsys, value):
    assert cli.main(["plan", "prod-eks", "--today", value]) == 2
    assert capsys.readouterr().err == f"gpufleet: --today {value!r}: not a date; write it as YYYY-MM-DD (e.g. 2027-01-31)\n"


def test_plan_today_option_is_for_one_stack(capsys):
    assert cli.main(["plan", "--all", "--today", "2027-01-10"]) == 2
    assert capsys.readouterr().err == ("gpufleet: --today applies to one STACK, not --all (set GPUFLEET_TODAY for "
                                       "every stack)\n")


def test_review_lists_the_head_plans_warnings_marking_new_ones():
    base = {"stack": "s", "resources": [], "warnings": [{"path": "p", "message": "old one"}]}
    head = {"stack": "s", "resources": [], "warnings": [{"path": "p", "message": "old one"},
                                                        {"path": "gpufleet:cluster.kubernetesVersion", "message": "EKS 1.35 leaves"}]}
    review = review_plans(base, head)
    assert [(w.message, w.new) for w in review.warnings] == [("old one", False), ("EKS 1.35 leaves", True)]
    md = render_review(review, "markdown")
    assert "#### Plan warnings" in md and "- **new** `gpufleet:cluster.kubernetesVersion`: EKS 1.35 leaves" in md
    assert "(new) gpufleet:cluster.kubernetesVersion: EKS 1.35 leaves" in render_review(review, "text")
    assert render_review(review, "json").count('"new": true') == 1


def test_a_bad_pinned_date_in_the_environment_exits_2(capsys, monkeypatch):
    monkeypatch.setenv("GPUFLEET_TODAY", "next week")
    assert cli.main(["plan", "dev"]) == 2
    assert capsys.readouterr().err == "gpufleet: GPUFLEET_TODAY='next week': not a date; write it as YYYY-MM-DD (e.g. 2027-01-31)\n"
    with pytest.raises(SpecError, match="GPUFLEET_TODAY: not a date"):  # the API path (no CLI in front)
        catalog_warnings("s", load_config(example_config("dev"), "s"))


# ---- EKS: the driver of the AMI release each GPU pool runs (VersionTraits.node_drivers) --------------------------

NVIDIA_CALENDAR = lifecycle.driver_branch(580).source  # the calendar's citation, as every driver warning quotes it


def _eks_small(minor: str, kind: str = "cluster-autoscaler", *pools: dict) -> dict:
    """An EKS stack of one L4 pool per `pools` entry (its extra keys), CUDA 12.8 only (so an R570 release is valid)."""
    return {"aws:region": "us-east-1",
            "gpufleet:cluster": {"platform": "eks", "name": "c", "kubernetesVersion": minor,
                                 "eks": {"network": {"availabilityZones": ["us-east-1a", "us-east-1b"]},
                                         "autoscaler": {"kind": kind}}},
            "gpufleet:nodePools": [{"name": f"l4-{i}", "instanceType": "g6.xlarge", **p} for i, p in enumerate(pools or [{}])],
            "gpufleet:gpuOperator": {"driver": {"source": "preinstalled"}},
            "gpufleet:workloads": {"cudaVersions": ["12.8"]}}


def _driver_warnings(config: dict, day: dt.date = DAY) -> list[tuple[str, str, object]]:
    return [(w.path, w.message, w.value) for w in catalog_warnings("s", load_config(config, "s"), day)
            if w.message.startswith("NVIDIA driver branch")]


@pytest.mark.parametrize("kind", ["cluster-autoscaler", "karpenter"])
def test_an_eks_pool_whose_ami_release_ships_an_end_of_life_branch_warns_at_its_ami_release(kind):
    """1.34.1-20251016 ships 570.195.03 (EKS_AL2023_RELEASES); R570 is past its end of life. Read from the release,
    not from the catalog's one driver per AMI family (580.159.03), which would find nothing. A Karpenter node class
    takes the same release (alias al2023@v20251016), so it warns the same."""
    assert aws_catalog.ami("al2023-nvidia").driver_floor == "580.159.03"
    assert "docs.nvidia.com/datacenter/tesla/drivers/620/" in NVIDIA_CALENDAR
    assert versions.karpenter_ami_alias("al2023-nvidia", "1.34", "1.34.1-20251016") == "al2023@v20251016"
    assert _driver_warnings(_eks_small("1.34", kind, {"amiRelease": "1.34.1-20251016"})) == [
        ("gpufleet:nodePools[0].amiRelease",
         f"NVIDIA driver branch R570 (PB) is past the end of its support ({NVIDIA_CALENDAR}); EKS AL2023 AMI release "
         "1.34.1-20251016, run by pool 'l4-0', ships NVIDIA driver 570.195.03: move nodePools[0].amiRelease to a "
         "release on a supported branch (gpufleet pins 1.34.9-20260714, NVIDIA driver 580.159.03), a rolling "
         "replacement of the pool's nodes", "1.34.1-20251016")]


def test_the_pinned_release_does_not_warn_while_its_branch_is_supported_then_warns_at_the_pin():
    """The pin for 1.34 ships R580 (LTSB, end of life 2028-06-30): no warning today; 90 days before its end, one at
    `nodePools` naming the pin table to bump."""
    assert versions.node_image("al2023-nvidia", "1.34").driver == "580.159.03"
    assert _driver_warnings(_eks_small("1.34")) == []
    assert _driver_warnings(_eks_small("1.34"), dt.date(2028, 4, 1)) == [
        ("gpufleet:nodePools",
         f"NVIDIA driver branch R580 (LTSB) reaches the end of its support in 90 days (2028-06-30; {NVIDIA_CALENDAR}); "
         "EKS AL2023 AMI release 1.34.9-20260714, run by pool 'l4-0', ships NVIDIA driver 580.159.03 and is gpufleet's "
         "pin for EKS 1.34: bump EKS_AL2023_RELEASE_PINS[\"1.34\"] in gpufleet/base/versions.py to a release on a "
         "supported branch (with its driver and source), a reviewed rolling replacement of the pools' nodes, or choose "
         "one with nodePools[i].amiRelease", "1.34.9-20260714")]


@pytest.mark.parametrize("kind", ["cluster-autoscaler", "karpenter"])
def test_a_bottlerocket_pools_driver_is_read_from_its_release_for_the_minor(kind):
    """Bottlerocket 1.48.0 ships R570 in its aws-k8s-1.33-nvidia variant but 580.65.06 in aws-k8s-1.34-nvidia
    (BOTTLEROCKET_RELEASES): the same release warns on 1.33 only."""
    pool = {"ami": "bottlerocket-nvidia", "amiRelease": "1.48.0"}
    assert _driver_warnings(_eks_small("1.33", kind, pool)) == [
        ("gpufleet:nodePools[0].amiRelease",
         f"NVIDIA driver branch R570 (PB) is past the end of its support ({NVIDIA_CALENDAR}); Bottlerocket release "
         "1.48.0, run by pool 'l4-0', ships NVIDIA driver 570.172.08: move nodePools[0].amiRelease to a release on a "
         "supported branch (gpufleet pins 1.65.0, NVIDIA driver 580.178.04), a rolling replacement of the pool's "
         "nodes", "1.48.0")]
    assert _driver_warnings(_eks_small("1.34", kind, pool)) == []


def test_only_gpu_pools_are_judged_each_at_the_key_of_its_own_release():
    """Pool 0 names the pin itself (its fix is its amiRelease), pool 1 takes the pin (the fix is the pin table), pool 2
    is Bottlerocket's pin; the system pool also runs the AL2023 pin, but its standard AMI has no NVIDIA driver."""
    c = _eks_small("1.34", "cluster-autoscaler", {"amiRelease": "1.34.9-20260714"}, {}, {"ami": "bottlerocket-nvidia"})
    assert [(path, value) for path, _, value in _driver_warnings(c, dt.date(2028, 4, 1))] == [
        ("gpufleet:nodePools[0].amiRelease", "1.34.9-20260714"), ("gpufleet:nodePools", "1.34.9-20260714"),
        ("gpufleet:nodePools", "1.65.0")]
    c = _eks_small("1.34", "cluster-autoscaler", {"amiRelease": "1.34.7-20260505"})  # R580 too; the pin left to the system pool
    assert [(path, value) for path, _, value in _driver_warnings(c, dt.date(2028, 4, 1))] == [
        ("gpufleet:nodePools[0].amiRelease", "1.34.7-20260505")]
