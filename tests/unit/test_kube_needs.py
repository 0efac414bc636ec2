"""Kubernetes upgrades say what must move together (issue 51, docs/upgrades.md): every plan lists what its Kubernetes
minor needs (the GPU Operator's supported versions, each chart's Chart.yaml kubeVersion, the built-in API versions of
the objects it emits), each with its source; one not met is a warning."""

from __future__ import annotations

import pytest

from gpufleet.app.plan.kube_needs import satisfies
from gpufleet.app.plan.render import to_json
from tests.helpers import CHARTS, plan_config


@pytest.mark.parametrize("minor, constraint, ok", [
    ("1.35", ">= 1.16.0-0", True),
    ("1.31", ">=1.32.0-0", False),
    ("1.32", ">=1.32.0-0", True),
    ("1.35", ">=v1.23.0-0", True),
    ("1.36", ">=1.24.0-0 <1.36.0-0", False),
    ("1.35", ">=1.24.0-0, <1.36.0-0", True),
    ("1.20", ">=1.29 || <1.21", True),
    ("1.35", "~1.35", None),
])
def test_chart_kube_version_constraints(minor, constraint, ok):
    assert satisfies(minor, constraint) is ok


def _k3s(kubernetes: str, operator: str) -> dict:
    return {
        "gpufleet:cluster": {"platform": "k3s", "name": "up", "kubernetesVersion": kubernetes,
                             "k3s": {"sshUser": "ubuntu", "servers": [{"name": "cp-1", "address": "203.0.113.10"}]}},
        "gpufleet:nodePools": [{"name": "h100", "gpu": "H100-80GB", "gpusPerNode": 8, "pricePerNodeHour": 24.0,
                                "hosts": [{"name": "h-1", "address": "203.0.113.41"}]}],
        "gpufleet:gpuOperator": {"version": operator, "driver": {"source": "operator"}},
        "gpufleet:sshPrivateKey": {"secure": "v1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=="},
    }


def test_a_minor_bump_lists_what_the_new_version_needs_and_warns_what_it_does_not_meet():
    if not (CHARTS / "gpu-operator-v25.10.1.tgz").is_file():
        pytest.skip(f"the reference chart archives are not in {CHARTS}")
    doc = to_json(plan_config(_k3s("1.36", "v25.10.1"), policies=False))
    assert doc["kubernetes"] == {"version": "1.36", "needs": [
        {"what": "GPU Operator v25.10.1", "requires": "supports Kubernetes 1.30, 1.31, 1.32, 1.33, 1.34, 1.35",
         "ok": False, "source": "gpufleet/base/catalog/drivers.yaml gpu_operator_releases (NVIDIA GPU Operator platform "
                                "support)"},
        {"what": "chart gpu-operator v25.10.1", "requires": "kubeVersion '>= 1.16.0-0'", "ok": True,
         "source": "Chart.yaml of gpu-operator-v25.10.1.tgz"},
    ]}
    assert [w["message"] for w in doc["warnings"] if w["path"] == "gpufleet:cluster.kubernetesVersion"
            and "is not met by" in w["message"]] == [
        "Kubernetes 1.36 is not met by GPU Operator v25.10.1: it supports Kubernetes 1.30, 1.31, 1.32, 1.33, 1.34, 1.35 "
        "(gpufleet/base/catalog/drivers.yaml gpu_operator_releases (NVIDIA GPU Operator platform support)); move it "
        "with the cluster, or stay on a minor it supports"]


def test_the_review_of_a_minor_bump_lists_what_the_new_minor_needs():
    from gpufleet.app.review import render, review_plans

    base = to_json(plan_config(_k3s("1.35", "v26.7.0"), policies=False))
    head = to_json(plan_config(_k3s("1.36", "v26.7.0"), policies=False))
    review = review_plans(base, head)
    assert review.kubernetes_bump == [
        "Kubernetes 1.35 -> 1.36: what 1.36 needs from the stack",
        "[ok] GPU Operator v26.7.0: supports Kubernetes 1.33, 1.34, 1.35, 1.36 (gpufleet/base/catalog/drivers.yaml "
        "gpu_operator_releases (NVIDIA GPU Operator platform support))",
        "[ok] chart gpu-operator v26.7.0: kubeVersion '>= 1.16.0-0' (Chart.yaml of gpu-operator-v26.7.0.tgz)",
    ]
    assert "#### Kubernetes 1.35 -&gt; 1.36: what 1.36 needs from the stack" in render(review, "markdown")


def test_an_eks_plan_lists_the_cloud_add_ons_its_minor_needs():
    """The EKS add-ons gpufleet installs move with the minor (EKS's default version, resolved at `pulumi up`); the
    self-managed ones EKS installed are named with the version EKS lists for the minor, or the command to ask for it."""
    from tests.helpers import planned

    needs = [n for n in to_json(planned("prod-eks"))["kubernetes"]["needs"] if n["what"].startswith("EKS ")]
    moves = ("EKS's default version for Kubernetes 1.35, resolved at `pulumi up` (aws.eks.getAddonVersion): gpufleet "
             "moves it with the minor")
    not_updated = "EKS installed it with the cluster and does not update it with the minor"
    table = ("EKS User Guide, 'Update an Amazon EKS add-on' and the add-on's version table (gpufleet/base/versions.py "
             "EKS_SELF_MANAGED_ADDONS)")
    assert [(n["what"], n["requires"], n["ok"]) for n in needs] == [
        ("EKS add-on aws-ebs-csi-driver", moves, True),
        ("EKS add-on aws-fsx-csi-driver", moves, True),
        ("EKS add-on eks-node-monitoring-agent", moves, True),
        ("EKS self-managed add-on coredns", f"update it to v1.14.2-eksbuild.4, the version EKS lists for 1.35: "
                                            f"{not_updated}, nor does gpufleet", None),
        ("EKS self-managed add-on kube-proxy", f"update it to v1.35.3-eksbuild.13, the version EKS lists for 1.35: "
                                               f"{not_updated}, nor does gpufleet", None),
        ("EKS self-managed add-on vpc-cni", "no version recorded for 1.35: `aws eks describe-addon-versions "
                                            f"--addon-name vpc-cni --kubernetes-version 1.35`; {not_updated}", None),
    ]
    assert {n["source"] for n in needs[3:]} == {table}


def test_a_pinned_eks_add_on_is_not_judged_offline(monkeypatch):
    from types import SimpleNamespace

    from gpufleet.base import platforms, versions

    monkeypatch.setitem(versions.EKS_ADDONS, "aws-ebs-csi-driver", "v1.50.0-eksbuild.1")
    spec = SimpleNamespace(cluster=SimpleNamespace(kubernetes_version="1.36"))
    addon = SimpleNamespace(type="aws:eks/addon:Addon", inputs={"addonName": "aws-ebs-csi-driver"})
    rows = platforms.get("eks").versions.addon_needs(spec, [addon])
    assert rows[0] == ("EKS add-on aws-ebs-csi-driver", "pinned v1.50.0-eksbuild.1 (gpufleet/base/versions.py EKS_ADDONS), "
                       "not checked offline: `aws eks describe-addon-versions --addon-name aws-ebs-csi-driver "
                       "--kubernetes-version 1.36` must list it", None,
                       "EKS User Guide, 'Verify Amazon EKS add-on version compatibility with a cluster'")
    assert rows[1:] == [(f"EKS self-managed add-on {name}", *rest) for name, *rest in (
        ("coredns", "no version recorded for 1.36: `aws eks describe-addon-versions --addon-name coredns "
                    "--kubernetes-version 1.36`; EKS installed it with the cluster and does not update it with the minor"),
        ("kube-proxy", "update it to v1.36.0-eksbuild.14, the version EKS lists for 1.36: EKS installed it with the "
                       "cluster and does not update it with the minor, nor does gpufleet"),
        ("vpc-cni", "no version recorded for 1.36: `aws eks describe-addon-versions --addon-name vpc-cni "
                    "--kubernetes-version 1.36`; EKS installed it with the cluster and does not update it with the minor"),
    ) for rest in [[rest[0], None, "EKS User Guide, 'Update an Amazon EKS add-on' and the add-on's version table "
                                   "(gpufleet/base/versions.py EKS_SELF_MANAGED_ADDONS)"]]]
