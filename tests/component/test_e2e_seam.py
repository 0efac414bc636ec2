"""The e2e tier's seams (tests/e2e/seam.py) under mocks: what they change once installed, and only that; and that the
shipped package knows nothing of them (their config keys do nothing where they are not installed)."""

from __future__ import annotations

import pytest

from gpufleet.base.spec import SpecError
from tests.e2e import seam
from tests.helpers import by_type, example_config, one, plan_config

MIRROR = "http://127.0.0.1:8879/charts"
RELEASE = "kubernetes:helm.sh/v3:Release"


def seamed_plan(config: dict, stack: str):
    """The plan with the seams installed, as the e2e tier's program installs them (undone afterwards)."""
    with pytest.MonkeyPatch.context() as patch:
        seam.install(patch.setattr)
        return plan_config(config, stack)


@pytest.fixture(scope="module")
def plans():
    """lab (NFS, RDMA, sharing) without and with both seams."""
    base = example_config("lab")
    seamed = {**base, "gpufleet-e2e:noKubelets": True, "gpufleet-e2e:chartRepository": MIRROR}
    return plan_config(base, "lab"), seamed_plan(seamed, "lab")


def test_the_shipped_package_refuses_the_seam_keys():
    """Without tests/e2e/seam.py installed, the keys are refused like any key outside the allow-list (issue 48):
    nothing in the product reads them, and a stack file cannot turn them on."""
    with pytest.raises(SpecError) as err:
        plan_config({**example_config("lab"), "gpufleet-e2e:noKubelets": True, "gpufleet-e2e:chartRepository": MIRROR},
                    "lab")
    assert {p.path for p in err.value.problems} == {"gpufleet-e2e:noKubelets", "gpufleet-e2e:chartRepository"}
    for folder in ("gpufleet", "components", "policies"):
        for path in (seam.ROOT / folder).rglob("*.py"):
            assert "gpufleet-e2e" not in path.read_text(), path


def test_the_seam_changes_inputs_only_never_which_resources_or_their_urns(plans):
    """The tier reaches its API server through the existing platform (issue 40), not by swapping a platform: the
    transformation leaves every resource and URN as the product plans them."""
    real, seamed = plans
    assert [r.urn for r in seamed.resources] == [r.urn for r in real.resources]
    assert by_type(seamed, "gpufleet:k3s:K3sNodePool")


def test_chart_repository_seam_points_every_release_at_the_mirror(plans):
    real, seamed = plans
    releases = by_type(seamed, RELEASE)
    assert len(releases) == len(by_type(real, RELEASE)) == 3
    for r in releases:
        assert r.inputs["repositoryOpts"] == {"repo": MIRROR}, r.name
        assert not r.inputs["chart"].startswith("oci://"), r.name
        assert r.inputs["skipAwait"] is True, r.name
        assert r.inputs["disableWebhooks"] is True, r.name  # Helm's --no-hooks: a hook Job never runs there
    # The mirror serves a chart by its name: the release's name (an OCI reference or an archive URL names it too).
    versions = {r.name: (r.inputs["name"], r.inputs["version"]) for r in real.resources if r.type == RELEASE}
    charts = {r.name: (r.inputs["chart"].rsplit("/", 1)[-1], r.inputs["version"]) for r in releases}
    assert charts == versions


def test_without_seams_releases_wait_and_claims_have_no_skip_annotation(plans):
    real, seamed = plans
    for r in by_type(real, RELEASE):
        assert "skipAwait" not in r.inputs, r.name
        assert "disableWebhooks" not in r.inputs, r.name
    claim = one(real, "kubernetes:core/v1:PersistentVolumeClaim")
    assert "pulumi.com/skipAwait" not in (claim.inputs["metadata"].get("annotations") or {})
    seamed_claim = one(seamed, "kubernetes:core/v1:PersistentVolumeClaim")
    assert seamed_claim.inputs["metadata"]["annotations"]["pulumi.com/skipAwait"] == "true"


def test_no_kubelets_seam_skips_the_nic_cluster_policys_readiness_wait_only_there(plans):
    """No operator pod reports the policy ready on a kubelet-less API server: without skipAwait the real `up` waits
    out its 20-minute timeout (the e2e tier's first real run did). Real stacks keep the wait."""
    real, seamed = plans
    kind = "kubernetes:mellanox.com/v1alpha1:NicClusterPolicy"
    real_annotations = one(real, kind).inputs["metadata"]["annotations"]
    assert real_annotations == {"pulumi.com/waitFor": "jsonpath={.status.state}=ready"}
    assert one(seamed, kind).inputs["metadata"]["annotations"] == {**real_annotations, "pulumi.com/skipAwait": "true"}


def test_no_kubelets_seam_skips_the_resource_quotas_status_wait_only_there():
    """The provider waits for a ResourceQuota's status (the quota controller's); no controller manager runs behind
    the seam's API server, so the first real `up` of `teams` timed out there. Real stacks keep the wait."""
    base = example_config("teams")
    real = plan_config(base, "teams")
    seamed = seamed_plan({**base, "gpufleet-e2e:noKubelets": True}, "teams")
    quotas = by_type(real, "kubernetes:core/v1:ResourceQuota")
    assert quotas and all("annotations" not in q.inputs["metadata"] for q in quotas)
    seamed_quotas = by_type(seamed, "kubernetes:core/v1:ResourceQuota")
    assert len(seamed_quotas) == len(quotas)
    assert all(q.inputs["metadata"]["annotations"] == {"pulumi.com/skipAwait": "true"} for q in seamed_quotas)


def test_no_kubelets_seam_skips_the_npd_daemonsets_rollout_wait_only_there(plans):
    """node-problem-detector's DaemonSets (k3s nodeHealth) report rollout through the DaemonSet controller and
    kubelets, neither of which runs behind the seam's API server. Real stacks keep the wait."""
    real, seamed = plans
    names = {"lab-node-health-daemonset", "lab-node-health-gpu-daemonset", "lab-node-health-sa"}
    for r in real.resources:
        if r.name in names:
            assert "annotations" not in r.inputs["metadata"], r.name
    seamed_objects = [r for r in seamed.resources if r.name in names]
    assert len(seamed_objects) == 3
    assert all(r.inputs["metadata"]["annotations"] == {"pulumi.com/skipAwait": "true"} for r in seamed_objects)
