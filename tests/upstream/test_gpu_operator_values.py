"""Upstream-format tests: the GPU Operator values we compute use only keys the pinned chart has."""

import pytest

from gpufleet.components.gpu_stack.operator import operator_values
from gpufleet.base import versions
from tests.helm_values import key_paths, missing_paths
from tests.helpers import STACKS, by_type, planned


def _operator_values(stack):
    p = planned(stack)
    releases = [r for r in by_type(p, "kubernetes:helm.sh/v3:Release") if r.inputs["chart"] == "gpu-operator"]
    return [(r.inputs["version"], r.revealed["values"]) for r in releases]


# Keys values.yaml only shows commented out (with their meaning) but the chart's templates read: the DCGM exporter's
# metrics list, `dcgmExporter.config.{name,create,data}` (templates/clusterpolicy.yaml and
# templates/dcgm_exporter_config.yaml; tests/upstream/test_observability_upstream.py checks them in the chart).
COMMENTED_IN_VALUES = {"dcgmExporter.config.name", "dcgmExporter.config.create", "dcgmExporter.config.data"}
# Keys of the NFD subchart (Chart.lock: node-feature-discovery 0.19.0), in its own values.yaml, not the parent's:
# registry.mirror sets its image.repository; tests/upstream/test_registry_mirror_render.py renders it with the chart.
SUBCHART_KEYS = {"node-feature-discovery.image.repository"}


@pytest.mark.parametrize("stack", STACKS)
def test_every_key_path_exists_in_upstream_values(stack, reference):
    for version, values in _operator_values(stack):
        upstream = reference / "gpu-operator" / f"values-{version}.yaml"
        if not upstream.exists():
            pytest.skip(f"no upstream values.yaml for GPU Operator {version} in {upstream.parent}")
        missing = missing_paths(values, upstream)
        assert [m for m in missing if m not in COMMENTED_IN_VALUES | SUBCHART_KEYS] == []
        missing = [m for m in missing if m not in SUBCHART_KEYS]
        if missing:  # the commented block is there in this release's values.yaml too
            assert "# config:" in upstream.read_text() and "# create: true" in upstream.read_text()


def test_key_path_check_catches_a_removed_key(reference):
    """operator.defaultRuntime was removed in v25.3.0: the check must flag it (DESIGN.md §7)."""
    upstream = reference / "gpu-operator" / f"values-{versions.GPU_OPERATOR.version}.yaml"
    assert missing_paths({"operator": {"defaultRuntime": "containerd"}}, upstream) == ["operator.defaultRuntime"]
    assert "toolkit.env" in key_paths({"toolkit": {"env": [{"name": "A", "value": "b"}]}})
