"""Upstream formats of the DRA layer (issue 34): NVIDIA's DRA driver for GPUs renders with the real chart and gpufleet's
values, and every DeviceClass it renders, every ResourceClaimTemplate and ComputeDomain gpufleet declares validates
(kubernetes-validate strict at the stacks' Kubernetes version; the ComputeDomain CRD in ../shared/reference)."""

from __future__ import annotations

import kubernetes_validate
import pytest

from gpufleet.base import versions
from gpufleet.components.gpu_stack.dra_driver import NAMESPACE, DraClaimPool, DraDriverArgs, claim_templates, driver_values
from gpufleet.base.spec.dra import ComputeDomainSpec
from tests.crd_validate import validate_cr
from tests.helm import template
from tests.helm_values import missing_paths
from tests.helpers import by_type, planned
from tests.k8s_validate import as_object

K8S = versions.KUBERNETES_DEFAULT
ARGS = DraDriverArgs(pools=[DraClaimPool("gb200"), DraClaimPool("h100-mig", ("1g.10gb", "3g.40gb"))],
                     node_taints=[{"key": "gpufleet.io/spot", "value": "true", "effect": "NoSchedule"}],
                     compute_domains=[ComputeDomainSpec(name="train", pool="gb200")])


@pytest.fixture
def chart(reference):
    path = reference / "charts" / f"{versions.DRA_DRIVER_NVIDIA_GPU.name}-{versions.DRA_DRIVER_NVIDIA_GPU.version}.tgz"
    if not path.is_file():
        pytest.skip(f"DRA driver chart not found at {path}")
    return path


def test_values_exist_in_the_charts_values(reference):
    values = reference / "dra-driver-nvidia-gpu" / f"values-v{versions.DRA_DRIVER_NVIDIA_GPU.version}.yaml"
    assert missing_paths(driver_values(ARGS), values) == []


def test_chart_renders_with_gpufleets_values_and_every_object_validates(chart):
    objs = template(chart, driver_values(ARGS), NAMESPACE, release=versions.DRA_DRIVER_NVIDIA_GPU.name, kube_version=f"{K8S}.0")
    classes = {o["metadata"]["name"]: o for o in objs if o["kind"] == "DeviceClass"}
    assert {"gpu.nvidia.com", "mig.nvidia.com", "compute-domain-default-channel.nvidia.com"} <= set(classes)
    assert all(c["apiVersion"] == "resource.k8s.io/v1" for c in classes.values())
    for obj in objs:
        kubernetes_validate.validate(obj, f"{K8S}.0", strict=True)
    plugin = next(o for o in objs if o["kind"] == "DaemonSet" and "kubelet-plugin" in o["metadata"]["name"])
    pod = plugin["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"gpufleet.io/gpu-allocation": "dra"}
    assert {"key": "gpufleet.io/spot", "operator": "Exists", "effect": "NoSchedule"} in pod["tolerations"]


def test_chart_refuses_gpu_resources_without_the_override(chart):
    with pytest.raises(AssertionError, match="gpuResourcesEnabledOverride"):
        template(chart, {**driver_values(ARGS), "gpuResourcesEnabledOverride": False}, NAMESPACE, kube_version=f"{K8S}.0")


def test_claim_templates_validate_strictly():
    templates = claim_templates(DraClaimPool("h100-mig", ("1g.10gb",)))
    assert set(templates) == {"h100-mig-gpu", "h100-mig-mig-1g-10gb"}
    for name, spec in templates.items():
        obj = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
               "metadata": {"name": name, "namespace": "default"}, "spec": spec}
        kubernetes_validate.validate(obj, f"{K8S}.0", strict=True)


@pytest.mark.parametrize("stack", ["nvl72-k3s", "nvl72-gke", "nvl72-eks"])
def test_nvl72_stacks_objects_validate(stack, reference):
    plan = planned(stack)
    claims = by_type(plan, "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate")
    assert [c.name.rsplit("-dra-driver-", 1)[1] for c in claims] == ["claim-default-gb200-gpu"]
    for c in claims:
        kubernetes_validate.validate(as_object(c), f"{K8S}.0", strict=True)
    domains = by_type(plan, "kubernetes:resource.nvidia.com/v1beta1:ComputeDomain")
    assert len(domains) == 1
    for d in domains:
        assert validate_cr(as_object(d)) == []
        assert as_object(d)["spec"]["channel"]["resourceClaimTemplate"]["name"] == "train-channel"
