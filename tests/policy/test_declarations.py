"""What gpufleet declares for the pack on the GPU Operator's namespace (policies/README.md)."""

from gpufleet.base.labels import CUDA_VERSIONS_ANNOTATION, PREINSTALLED_DRIVER_ANNOTATION
from tests.helpers import one, planned


def test_ha_stack_declares_cuda_versions_and_preinstalled_driver():
    ns = one(planned("ha"), "kubernetes:core/v1:Namespace")
    assert ns.inputs["metadata"]["annotations"] == {CUDA_VERSIONS_ANNOTATION: "12.8,13.0", PREINSTALLED_DRIVER_ANNOTATION: "580.95.05"}


def test_operator_driver_is_not_declared_as_preinstalled(dev_plan):
    ns = one(dev_plan, "kubernetes:core/v1:Namespace")
    assert ns.inputs["metadata"]["annotations"] == {CUDA_VERSIONS_ANNOTATION: "12.8"}
