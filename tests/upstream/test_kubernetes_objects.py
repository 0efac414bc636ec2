"""Upstream-format tests (layer 3): every core Kubernetes object each example stack declares validates
strictly against the OpenAPI schema of the stack's Kubernetes version."""

import pytest

from gpufleet.plan.engine import plan
from tests.helpers import STACKS, example
from tests.k8s_validate import as_object, is_core, k8s_objects, validate_strict


@pytest.mark.parametrize("stack", STACKS)
def test_core_objects_validate_strictly(stack):
    p = plan(example(stack), evaluate_policies=False)
    version = p.spec.cluster.kubernetes_version
    objects = [as_object(r) for r in k8s_objects(p.resources)]
    core = [o for o in objects if is_core(o, f"{version}.0")]
    assert core, "every stack declares at least the GPU Operator namespace"
    for obj in core:
        validate_strict(obj, version)


def test_validator_rejects_unknown_fields():
    """Guard against a validator that accepts anything: strict mode must reject a typo."""
    import kubernetes_validate

    with pytest.raises(kubernetes_validate.ValidationError):
        validate_strict({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x", "lables": {}}}, "1.34")
