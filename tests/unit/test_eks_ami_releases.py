"""Pinned EKS node images, reviewed bumps (issue 50): every Kubernetes minor gpufleet plans for on EKS has a pinned AL2023
AMI release with its date and NVIDIA driver; a pool may choose another known release (validated); moving a pool to
another release reviews as a rolling replacement of its nodes with the old and new driver; the plan warns when a
release a pool runs is over 90 days old."""

from __future__ import annotations

import datetime as dt

import pytest

from gpufleet.app.review import render, review_plans
from gpufleet.base import versions
from gpufleet.base.platforms.eks.versions import AMI_RELEASE_WARNING_DAYS, EksVersions
from tests.helpers import example_config, load_config, spec_problems

NG = "aws:eks/nodeGroup:NodeGroup"
NODECLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"


# ---- the pin table -----------------------------------------------------------------------------------------------

def test_every_eks_minor_has_a_pin_the_newest_known_release_of_that_minor():
    assert sorted(versions.EKS_AL2023_RELEASE_PINS) == sorted(versions.EKS_KUBERNETES_VERSIONS)
    for minor, pin in versions.EKS_AL2023_RELEASE_PINS.items():
        assert versions.eks_al2023_releases(minor)[0] == pin
        assert versions.eks_al2023_release(minor).release == pin


def test_each_release_row_is_consistent_with_its_release_version():
    for key, r in versions.EKS_AL2023_RELEASES.items():
        assert key == r.release
        patch, date = r.release.split("-")
        assert date == r.date.replace("-", "") and r.tag == f"v{date}"
        assert r.minor in versions.EKS_KUBERNETES_VERSIONS and patch.startswith(r.minor + ".")
        assert r.driver_branch in (570, 575, 580)


def test_the_rows_record_the_driver_branch_moving_on_1_33():
    """amazon-eks-ami CHANGELOG: 1.33 went 570 -> 575 (v20250715) -> 570 (v20250920) -> 580 (v20251112)."""
    rows = sorted((r for r in versions.EKS_AL2023_RELEASES.values() if r.minor == "1.33"), key=lambda r: r.date)
    assert [(r.tag, r.driver_branch) for r in rows[:4]] == [
        ("v20250715", 575), ("v20250920", 570), ("v20251023", 570), ("v20251112", 580)]


def test_no_release_is_recorded_for_a_minor_its_own_notes_say_it_breaks():
    """amazon-eks-ami#2845: v20260930 and v20261003 ship kernel 6.12.110 (kernel panic, 1.31-1.35; fixed in v20261012),
    so neither may become a row, nor so a pin or a pool's amiRelease, on those minors; 1.36 runs kernel 6.18."""
    assert [r.release for r in versions.EKS_AL2023_RELEASES.values() if r.known_defect] == []
    # Made-up rows (patch and driver are placeholders): only the tag and the minor decide.
    assert versions.EksAmiRelease("1.35.0-20261003", "2026-10-03", "580.0.0").known_defect
    assert versions.EksAmiRelease("1.32.0-20260930", "2026-09-30", "580.0.0").known_defect
    assert not versions.EksAmiRelease("1.36.0-20261003", "2026-10-03", "580.0.0").known_defect
    assert not versions.EksAmiRelease("1.35.0-20261012", "2026-10-12", "580.0.0").known_defect


def test_karpenter_alias_is_the_pinned_release_of_either_family():
    assert versions.karpenter_ami_alias("al2023-nvidia", "1.33") == "al2023@v20260714"
    assert versions.karpenter_ami_alias("al2023-nvidia", "1.33", "1.33.5-20251112") == "al2023@v20251112"
    assert versions.karpenter_ami_alias("bottlerocket-nvidia", "1.33") == "bottlerocket@v1.65.0"
    assert versions.karpenter_ami_alias("bottlerocket-nvidia", "1.33", "1.48.0") == "bottlerocket@v1.48.0"


# ---- the Bottlerocket table --------------------------------------------------------------------------------------

def test_every_eks_minor_has_a_bottlerocket_pin_the_newest_dated_release_with_its_variant():
    assert sorted(versions.BOTTLEROCKET_RELEASE_PINS) == sorted(versions.EKS_KUBERNETES_VERSIONS)
    for minor, pin in versions.BOTTLEROCKET_RELEASE_PINS.items():
        assert versions.bottlerocket_releases(minor)[0] == pin
        image = versions.node_image("bottlerocket-nvidia", minor)
        assert (image.release, image.tag, image.date, image.driver) == ("1.65.0", "v1.65.0", "2026-09-03", "580.178.04")


def test_the_bottlerocket_rows_record_each_minors_driver_and_the_r570_to_r580_move():
    """bottlerocket.dev GPU driver pages: 1.32/1.33 ran R570 in 1.48.0 and R580 from 1.53.0; 1.34 R580 throughout;
    1.35 first in 1.53.0, 1.36 first recorded in 1.62.0; 1.65.0 580.178.04 on each."""
    def branches(minor):
        return [(v, versions.node_image("bottlerocket-nvidia", minor, v).driver_branch)
                for v in reversed(versions.bottlerocket_releases(minor))]
    assert branches("1.33") == [("1.48.0", 570), ("1.53.0", 580), ("1.57.0", 580), ("1.62.0", 580), ("1.65.0", 580)]
    assert branches("1.34") == [("1.48.0", 580), ("1.53.0", 580), ("1.57.0", 580), ("1.62.0", 580), ("1.65.0", 580)]
    assert versions.bottlerocket_releases("1.35") == ["1.65.0", "1.62.0", "1.57.0", "1.53.0"]
    assert versions.bottlerocket_releases("1.36") == ["1.65.0", "1.62.0"]
    for r in versions.BOTTLEROCKET_RELEASES.values():
        assert {m for m, _ in r.drivers} <= set(versions.EKS_KUBERNETES_VERSIONS)
        assert dt.date.fromisoformat(r.date) and r.tag == "v" + r.version


# ---- a pool's own release, validated ----------------------------------------------------------------------------

def _eks(**pool) -> dict:
    c = example_config("prod-eks")
    c["gpufleet:nodePools"][0].update(pool)
    return c


def test_a_known_release_of_the_minor_is_accepted():
    spec = load_config(_eks(amiRelease="1.35.4-20260505"), "s")
    assert spec.node_pools[0].ami_release == "1.35.4-20260505"


def test_an_unknown_release_is_refused_naming_the_allowed_ones():
    assert spec_problems(_eks(amiRelease="1.34.9-20260714"), stack="s") == [
        "stack 's': gpufleet:nodePools[0].amiRelease: not an EKS AL2023 AMI release gpufleet knows for Kubernetes 1.35 "
        "(allowed: 1.35.6-20260714, 1.35.4-20260505, 1.35.0-20260116; a newer release is added to "
        "gpufleet/base/versions.py EKS_AL2023_RELEASES with its driver and source) (got '1.34.9-20260714')"]


def test_a_bottlerocket_managed_node_group_takes_a_known_release_of_its_minor_and_refuses_others():
    spec = load_config(_eks(ami="bottlerocket-nvidia", amiRelease="1.57.0"), "s")
    assert spec.node_pools[0].ami_release == "1.57.0"
    c = _eks(ami="bottlerocket-nvidia", amiRelease="1.48.0")  # no aws-k8s-1.35-nvidia variant in 1.48.0
    assert spec_problems(c, stack="s") == [
        "stack 's': gpufleet:nodePools[0].amiRelease: not a Bottlerocket release gpufleet knows for Kubernetes 1.35 "
        "(allowed: 1.65.0, 1.62.0, 1.57.0, 1.53.0; a newer release is added to gpufleet/base/versions.py BOTTLEROCKET_RELEASES "
        "with its driver and source) (got '1.48.0')"]


def test_a_bottlerocket_node_group_reads_its_pinned_releases_own_ssm_parameter():
    """bottlerocket-os/bottlerocket QUICKSTART-EKS.md: a specific version replaces `latest` in the parameter's name."""
    assert versions.eks_ami("bottlerocket-nvidia", "1.35", release="1.62.0") == (
        "BOTTLEROCKET_x86_64_NVIDIA", "/aws/service/bottlerocket/aws-k8s-1.35-nvidia/x86_64/1.62.0/image_version")


def _karpenter(**pool) -> dict:
    c = example_config("karpenter-eks")  # Kubernetes 1.35; nodePools[2] l4-burst runs bottlerocket-nvidia
    c["gpufleet:nodePools"][2].update(pool)
    return c


def test_a_known_bottlerocket_release_of_the_minor_is_accepted_on_karpenter():
    spec = load_config(_karpenter(amiRelease="1.53.0"), "s")
    assert spec.node_pools[2].ami_release == "1.53.0"


def test_a_bottlerocket_release_without_the_minors_variant_is_refused_naming_the_allowed_ones():
    assert spec_problems(_karpenter(amiRelease="1.48.0"), stack="s") == [
        "stack 's': gpufleet:nodePools[2].amiRelease: not a Bottlerocket release gpufleet knows for Kubernetes 1.35 "
        "(allowed: 1.65.0, 1.62.0, 1.57.0, 1.53.0; a newer release is added to gpufleet/base/versions.py BOTTLEROCKET_RELEASES "
        "with its driver and source) (got '1.48.0')"]


def test_an_unknown_or_al2023_release_on_a_bottlerocket_pool_is_refused():
    for value in ("1.68.0", "1.35.6-20260714"):
        (problem,) = spec_problems(_karpenter(amiRelease=value), stack="s")
        assert problem.startswith("stack 's': gpufleet:nodePools[2].amiRelease: not a Bottlerocket release gpufleet "
                                  "knows for Kubernetes 1.35 (allowed: 1.65.0, 1.62.0, 1.57.0, 1.53.0;")
        assert problem.endswith(f"(got '{value}')")


def test_a_bottlerocket_release_on_1_33_whose_r570_driver_cannot_run_cuda_13_is_refused():
    c = _karpenter(amiRelease="1.48.0")
    c["gpufleet:cluster"]["kubernetesVersion"] = "1.33"
    c["gpufleet:workloads"] = {"cudaVersions": ["13.0"]}
    assert spec_problems(c, stack="s") == [
        "stack 's': gpufleet:nodePools[2].amiRelease: its NVIDIA driver 570.172.08 (branch 570) cannot run CUDA 13.0 "
        "(workloads.cudaVersions): driver 570.172.08 is older than 580.65.06, the minimum for CUDA 13.0 "
        "(got '1.48.0')"]


def test_a_release_on_another_platform_is_refused():
    c = example_config("prod-gke")
    c["gpufleet:nodePools"][0]["amiRelease"] = "1.35.6-20260714"
    (problem,) = spec_problems(c, stack="s")
    assert problem.startswith("stack 's': gpufleet:nodePools[0].amiRelease: ")


def test_a_hostile_release_value_is_refused_on_one_line():
    (problem,) = spec_problems(_eks(amiRelease="1.35\n::error::x"), stack="s")
    assert problem == ("stack 's': gpufleet:nodePools[0].amiRelease: holds the control character U+000A; use plain "
                       "printable text on one line: '1.35\\n::error::x'")


# ---- the age warning -----------------------------------------------------------------------------------------------

def _age_warnings(config: dict, day: dt.date) -> list[tuple[str, str]]:
    return [(w.path, w.message) for w in EksVersions().node_image_warnings("s", load_config(config, "s"), day)]


def test_no_warning_within_the_threshold():
    pin = dt.date.fromisoformat(versions.eks_al2023_release("1.35").date)
    assert _age_warnings(example_config("prod-eks"), pin + dt.timedelta(days=AMI_RELEASE_WARNING_DAYS)) == []


def test_the_pin_warns_once_at_node_pools_and_a_chosen_release_at_its_pool():
    found = _age_warnings(_eks(amiRelease="1.35.0-20260116"), dt.date(2026, 12, 5))
    assert found == [
        ("gpufleet:nodePools",
         "EKS AL2023 AMI release 1.35.6-20260714 (v20260714, NVIDIA driver 580.159.03), run by the system pool, pool "
         "'l4-infer', is 144 days old on 2026-12-05 (over 90): newer releases carry kernel, containerd and NVIDIA driver "
         "fixes; it is gpufleet's pin for EKS 1.35: check awslabs/amazon-eks-ami's releases and bump "
         "EKS_AL2023_RELEASE_PINS in gpufleet/base/versions.py (with the release's driver and source), a reviewed "
         "rolling replacement of every pool's nodes"),
        ("gpufleet:nodePools[0].amiRelease",
         "EKS AL2023 AMI release 1.35.0-20260116 (v20260116, NVIDIA driver 580.105.08), run by pool 'h100-train', is "
         "323 days old on 2026-12-05 (over 90): newer releases carry kernel, containerd and NVIDIA driver fixes; move to "
         "a newer one (gpufleet pins 1.35.6-20260714), a rolling replacement of the pool's nodes the review shows with "
         "the driver it ships"),
    ]


def test_a_pool_naming_the_pin_itself_is_warned_at_its_key_and_the_pin_still_at_node_pools():
    """The same release reached two ways: pool 0 wrote it (its fix is its amiRelease), the system pool and pool 1 take
    the pin (the fix is a bump of the pin table); neither warning may swallow the other or name the other's pools."""
    found = _age_warnings(_eks(amiRelease=versions.EKS_AL2023_RELEASE_PINS["1.35"]), dt.date(2026, 12, 5))
    assert [path for path, _ in found] == ["gpufleet:nodePools[0].amiRelease", "gpufleet:nodePools"]
    assert "run by pool 'h100-train', is 144 days old" in found[0][1] and "move to a newer one" in found[0][1]
    assert "run by the system pool, pool 'l4-infer', is 144 days old" in found[1][1]
    assert "it is gpufleet's pin for EKS 1.35" in found[1][1]


def test_bottlerocket_managed_node_groups_get_the_age_warning_of_their_pin_and_no_float_note():
    c = _eks(ami="bottlerocket-nvidia")
    c["gpufleet:nodePools"][1]["ami"] = "bottlerocket-nvidia"
    found = _age_warnings(c, dt.date(2026, 12, 5))
    assert [w for w in found if w[0].endswith(".ami")] == []
    assert ("gpufleet:nodePools",
            "Bottlerocket release 1.65.0 (released 2026-09-03, NVIDIA driver 580.178.04), run by pool 'h100-train', "
            "pool 'l4-infer', is 93 days old on 2026-12-05 (over 90): newer releases carry kernel, containerd and "
            "NVIDIA driver fixes; it is gpufleet's pin for EKS 1.35: check bottlerocket.dev's GPU driver pages and the "
            "bottlerocket-os/bottlerocket releases and bump BOTTLEROCKET_RELEASE_PINS in gpufleet/base/versions.py (with "
            "the release's driver and source), a reviewed rolling replacement of every Bottlerocket pool's nodes") in found


def test_a_karpenter_bottlerocket_pool_gets_the_age_warning_of_its_pin_and_no_float_note():
    found = _age_warnings(example_config("karpenter-eks"), dt.date(2026, 12, 5))
    assert [w for w in found if w[0].endswith(".ami")] == []
    assert ("gpufleet:nodePools",
            "Bottlerocket release 1.65.0 (released 2026-09-03, NVIDIA driver 580.178.04), run by pool 'l4-burst', is 93 "
            "days old on 2026-12-05 (over 90): newer releases carry kernel, containerd and NVIDIA driver fixes; it is "
            "gpufleet's pin for EKS 1.35: check bottlerocket.dev's GPU driver pages and the bottlerocket-os/bottlerocket "
            "releases and bump BOTTLEROCKET_RELEASE_PINS in gpufleet/base/versions.py (with the release's driver and "
            "source), a reviewed rolling replacement of every Bottlerocket pool's nodes") in found


def test_a_karpenter_bottlerocket_pin_within_the_threshold_and_a_chosen_old_release():
    pin = dt.date.fromisoformat(versions.BOTTLEROCKET_RELEASES["1.65.0"].date)
    day = pin + dt.timedelta(days=AMI_RELEASE_WARNING_DAYS)
    assert [w for w in _age_warnings(example_config("karpenter-eks"), day) if "Bottlerocket" in w[1]] == []
    found = [w for w in _age_warnings(_karpenter(amiRelease="1.57.0"), day) if "Bottlerocket" in w[1]]
    assert found == [("gpufleet:nodePools[2].amiRelease",
                      "Bottlerocket release 1.57.0 (released 2026-03-25, NVIDIA driver 580.126.09), run by pool "
                      "'l4-burst', is 252 days old on 2026-12-02 (over 90): newer releases carry kernel, containerd and "
                      "NVIDIA driver fixes; move to a newer one (gpufleet pins 1.65.0), a rolling replacement of the "
                      "pool's nodes the review shows with the driver it ships")]


# ---- the review of a bump ------------------------------------------------------------------------------------------

def _plan(resources: list[dict]) -> dict:
    return {"stack": "s", "resources": resources, "violations": [], "capacity": [], "cost": {}}


def _node_group(release: str) -> dict:
    return {"urn": "urn:pulumi:s::p::gpufleet:eks:EksNodeGroup$aws:eks/nodeGroup:NodeGroup::s-pool-h100-ng", "type": NG,
            "name": "s-pool-h100-ng", "parent": None,
            "inputs": {"releaseVersion": release, "amiType": "AL2023_x86_64_NVIDIA", "updateConfig": {"maxUnavailable": 2.0}}}


def _node_class(alias: str) -> dict:
    return {"urn": f"urn:pulumi:s::p::kubernetes:karpenter.k8s.aws/v1:EC2NodeClass::s-pool-h100-nodeclass",
            "type": NODECLASS, "name": "s-pool-h100-nodeclass", "parent": None,
            "inputs": {"spec": {"amiSelectorTerms": [{"alias": alias}], "role": "r"}}}


def test_a_release_bump_reviews_as_a_rolling_replacement_with_the_old_and_new_driver_branch():
    review = review_plans(_plan([_node_group("1.33.5-20251023")]), _plan([_node_group("1.33.13-20260714")]))
    (change,) = review.disruptive
    assert change.op == "update" and change.replace_reasons == []
    assert change.rollout == (
        "every node is replaced by one of AMI release 1.33.13-20260714 (was 1.33.5-20251023): NVIDIA driver 570.195.03 "
        "(branch 570) -> 580.159.03 (branch 580); EKS launches nodes of the new release, then cordons and drains the old "
        "ones, 2 at a time (updateConfig; EKS User Guide, 'Understand each phase of node updates')")
    md = render(review, "markdown")
    assert ("- **REPLACES THE NODES of node pool `s-pool-h100-ng`**, rolling (`aws:eks/nodeGroup:NodeGroup`, in (stack)): "
            "every node is replaced by one of AMI release 1.33.13-20260714 (was 1.33.5-20251023): NVIDIA driver 570.195.03 "
            "(branch 570) -&gt; 580.159.03 (branch 580); EKS launches") in md
    text = render(review, "text")
    assert "  ! REPLACES THE NODES of node pool s-pool-h100-ng, rolling (aws:eks/nodeGroup:NodeGroup): every node" in text
    import json

    (j,) = [c for c in json.loads(render(review, "json"))["changes"] if c["type"] == NG]
    assert j["disruptive"] is True and j["rollout"] == change.rollout


def test_a_release_from_ssm_before_says_its_driver_is_unknown():
    before = _node_group("the release in SSM /aws/service/eks/optimized-ami/1.35/amazon-linux-2023/x86_64/nvidia/"
                         "recommended/release_version at deploy")
    (change,) = review_plans(_plan([before]), _plan([_node_group("1.35.6-20260714")])).disruptive
    assert ("NVIDIA driver not known to gpufleet (a release not in versions.EKS_AL2023_RELEASES or "
            "BOTTLEROCKET_RELEASES) -> 580.159.03 (branch 580)") in change.rollout


def test_an_unrecorded_al2023_release_is_never_read_as_a_bottlerocket_version():
    """"1.35.9-20261119" has the shape of a Bottlerocket "1.N.P-<commit>": an AL2023 AMI type reads it as AL2023's."""
    (change,) = review_plans(_plan([_node_group("1.35.6-20260714")]), _plan([_node_group("1.35.9-20261119")])).disruptive
    assert ("NVIDIA driver 580.159.03 (branch 580) -> not known to gpufleet (a release not in "
            "versions.EKS_AL2023_RELEASES or BOTTLEROCKET_RELEASES);") in change.rollout


def _bottlerocket_node_group(release: str) -> dict:
    r = _node_group(release)
    r["inputs"]["amiType"] = "BOTTLEROCKET_x86_64_NVIDIA"
    return r


def test_a_bottlerocket_node_group_bump_reviews_with_the_drivers_of_its_minor():
    """As planned: the value of each release's SSM parameter, whose path names the minor and the version."""
    at = "the release in SSM /aws/service/bottlerocket/aws-k8s-1.33-nvidia/x86_64/{}/image_version at deploy"
    (change,) = review_plans(_plan([_bottlerocket_node_group(at.format("1.48.0"))]),
                             _plan([_bottlerocket_node_group(at.format("1.62.0"))])).disruptive
    assert change.rollout.startswith(
        f"every node is replaced by one of AMI release {at.format('1.62.0')} (was {at.format('1.48.0')}): NVIDIA "
        "driver 570.172.08 (branch 570) -> 580.159.03 (branch 580); EKS launches nodes of the new release")


def test_a_deployed_bottlerocket_release_version_names_the_drivers_of_its_release():
    """As EKS holds it ("1.N.P-<commit>", no minor): each driver of the release with its minors when they differ."""
    (change,) = review_plans(_plan([_bottlerocket_node_group("1.48.0-0123abcd")]),
                             _plan([_bottlerocket_node_group("1.62.0-89abcdef")])).disruptive
    assert ("NVIDIA driver 570.172.08 (branch 570) on 1.32, 1.33, 580.65.06 (branch 580) on 1.34 -> 580.159.03 "
            "(branch 580);") in change.rollout


def test_a_karpenter_alias_bump_reviews_as_drift_replacing_the_nodes():
    review = review_plans(_plan([_node_class("al2023@latest")]), _plan([_node_class("al2023@v20260714")]))
    (change,) = review.disruptive
    assert change.rollout == (
        "every node is replaced by one of AMI al2023@v20260714 (was al2023@latest): NVIDIA driver whatever the newest "
        "release ships when Karpenter resolves it -> 580.159.03 (branch 580); Karpenter marks each node drifted and "
        "replaces it, as the NodePool's disruption budgets allow (karpenter.sh, 'Disruption': Drift)")


def test_a_bottlerocket_alias_bump_reviews_as_drift_with_the_old_and_new_drivers():
    review = review_plans(_plan([_node_class("bottlerocket@v1.53.0")]), _plan([_node_class("bottlerocket@v1.62.0")]))
    (change,) = review.disruptive
    assert change.rollout == (
        "every node is replaced by one of AMI bottlerocket@v1.62.0 (was bottlerocket@v1.53.0): NVIDIA driver 580.95.05 "
        "(branch 580) -> 580.159.03 (branch 580); Karpenter marks each node drifted and replaces it, as the NodePool's "
        "disruption budgets allow (karpenter.sh, 'Disruption': Drift)")


def test_a_bottlerocket_bump_from_a_release_whose_drivers_differ_per_minor_names_each():
    (change,) = review_plans(_plan([_node_class("bottlerocket@v1.48.0")]),
                             _plan([_node_class("bottlerocket@v1.62.0")])).disruptive
    assert ("NVIDIA driver 570.172.08 (branch 570) on 1.32, 1.33, 580.65.06 (branch 580) on 1.34 -> 580.159.03 "
            "(branch 580);") in change.rollout


def test_moving_off_bottlerocket_latest_says_the_old_driver_was_unknown():
    (change,) = review_plans(_plan([_node_class("bottlerocket@latest")]),
                             _plan([_node_class("bottlerocket@v1.62.0")])).disruptive
    assert ("NVIDIA driver whatever the newest release ships when Karpenter resolves it -> 580.159.03 (branch 580)"
            in change.rollout)


def test_a_cpu_node_group_bump_names_no_driver():
    before, after = _node_group("1.35.4-20260505"), _node_group("1.35.6-20260714")
    for r in (before, after):
        r["inputs"]["amiType"] = "AL2023_x86_64_STANDARD"
    (change,) = review_plans(_plan([before]), _plan([after])).disruptive
    assert change.rollout.startswith("every node is replaced by one of AMI release 1.35.6-20260714 (was "
                                     "1.35.4-20260505): no NVIDIA driver (a CPU AMI); EKS launches")


@pytest.mark.parametrize("inputs", [{"amiType": "AL2023_x86_64_NVIDIA", "labels": {"a": "b"}}])
def test_other_node_group_updates_leave_the_nodes_alone(inputs):
    before, after = _node_group("1.35.6-20260714"), _node_group("1.35.6-20260714")
    after["inputs"]["labels"] = inputs["labels"]
    (change,) = review_plans(_plan([before]), _plan([after])).changes
    assert change.rollout is None and not change.disruptive



def test_a_release_whose_driver_cannot_run_the_workloads_cuda_is_refused():
    c = _eks(amiRelease="1.33.5-20251023")
    c["gpufleet:cluster"]["kubernetesVersion"] = "1.33"
    c["gpufleet:workloads"] = {"cudaVersions": ["12.8", "13.0"]}
    assert spec_problems(c, stack="s") == [
        "stack 's': gpufleet:nodePools[0].amiRelease: its NVIDIA driver 570.195.03 (branch 570) cannot run CUDA 13.0 "
        "(workloads.cudaVersions): driver 570.195.03 is older than 580.65.06, the minimum for CUDA 13.0 "
        "(got '1.33.5-20251023')"]
