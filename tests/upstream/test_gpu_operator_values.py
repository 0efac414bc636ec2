"""Upstream-format tests: the GPU Operator values we compute use only keys the pinned chart has."""

import pytest

from gpufleet.components.gpu_stack.operator import operator_values
from gpufleet import versions
from gpufleet.plan.engine import plan
from tests.helm_values import key_paths, missing_paths
from tests.helpers import STACKS, by_type, example


def _operator_values(stack):
    p = plan(example(stack), evaluate_policies=False)
    releases = [r for r in by_type(p, "kubernetes:helm.sh/v3:Release") if r.inputs["chart"] == "gpu-operator"]
    return [(r.inputs["version"], r.revealed["values"]) for r in releases]


@pytest.mark.parametrize("stack", STACKS)
def test_every_key_path_exists_in_upstream_values(stack, reference):
    for version, values in _operator_values(stack):
        upstream = reference / "gpu-operator" / f"values-{version}.yaml"
        if not upstream.exists():
            pytest.skip(f"no upstream values.yaml for GPU Operator {version} in {upstream.parent}")
        assert missing_paths(values, upstream) == []


def test_key_path_check_catches_a_removed_key(reference):
    """operator.defaultRuntime was removed in v25.3.0: the check must flag it (DESIGN.md §7)."""
    upstream = reference / "gpu-operator" / f"values-{versions.GPU_OPERATOR.version}.yaml"
    assert missing_paths({"operator": {"defaultRuntime": "containerd"}}, upstream) == ["operator.defaultRuntime"]
    assert "toolkit.env" in key_paths({"toolkit": {"env": [{"name": "A", "value": "b"}]}})
