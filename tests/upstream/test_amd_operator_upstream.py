"""Upstream-format tests for AMD pools (issue 17): what gpufleet writes for the AMD GPU Operator is what the pinned
release reads.

- every DeviceConfig validates strictly against the release's DeviceConfig CRD (../shared/reference/crds/);
- every Helm values key path exists in the chart's values.yaml (../shared/reference/amd-gpu-operator/). The chart
  archive itself is not in ../shared/reference/charts, so it is not rendered with helm (the last test says so
  by skipping when the archive is absent);
- the Device Config Manager's config.json has the upstream shape (docs/dcm/device-config-manager-configmap.md and
  the example config.json): profile fields, `numGPUsAssigned` adding up to the node's GPUs.
"""

from __future__ import annotations

import copy
import json

import pytest

from gpufleet.base import versions
from tests.crd_validate import validate_cr
from tests.helm_values import missing_paths
from tests.helpers import REFERENCE, by_type, planned

DEVICE_CONFIG = "kubernetes:amd.com/v1alpha1:DeviceConfig"
RELEASE = "kubernetes:helm.sh/v3:Release"
CONFIG_MAP = "kubernetes:core/v1:ConfigMap"
AMD = REFERENCE / "amd-gpu-operator"


@pytest.fixture(scope="module")
def lab():
    return planned("amd-lab")


def _cr(r) -> dict:
    return {"apiVersion": r.revealed["apiVersion"], "kind": r.revealed["kind"], "metadata": r.revealed["metadata"],
            "spec": r.revealed["spec"]}


def test_every_device_config_validates_against_the_crd(lab, reference):
    crs = by_type(lab, DEVICE_CONFIG)
    assert {r.name for r in crs} == {"amd-lab-amd-gpu-operator-device-config-mi300x-cpx",
                                     "amd-lab-amd-gpu-operator-device-config-mi300x-train"}
    for r in crs:
        assert validate_cr(_cr(r)) == [], r.name


def test_a_field_the_crd_lacks_is_caught(lab, reference):
    """The strict check is live: a misspelt operand field fails."""
    cr = copy.deepcopy(_cr(by_type(lab, DEVICE_CONFIG)[0]))  # the plan is shared: change a copy
    cr["spec"]["devicePlugin"]["enableDevicePlugins"] = True
    assert any("enableDevicePlugins" in e for e in validate_cr(cr))


def test_values_keys_exist_in_the_pinned_chart(lab, reference):
    (release,) = [r for r in by_type(lab, RELEASE) if r.inputs["name"] == versions.AMD_GPU_OPERATOR.name]
    assert release.inputs["version"] == versions.AMD_GPU_OPERATOR.version
    upstream = AMD / f"values-{release.inputs['version']}.yaml"
    if not upstream.exists():
        pytest.skip(f"no upstream values.yaml for AMD GPU Operator {release.inputs['version']} in {AMD}")
    values = release.revealed["values"]
    assert missing_paths(values, upstream) == []
    # The chart's own DeviceConfig would select every AMD node a second time.
    assert values["crds"]["defaultCR"]["install"] is False


def test_pinned_chart_matches_the_reference_chart_yaml(reference):
    import yaml

    chart = yaml.safe_load((AMD / f"Chart-{versions.AMD_GPU_OPERATOR.version}.yaml").read_text())
    assert (chart["name"], chart["version"], chart["appVersion"]) == (
        versions.AMD_GPU_OPERATOR.name, versions.AMD_GPU_OPERATOR.version, versions.AMD_GPU_OPERATOR.app_version)


def test_driver_default_is_the_charts(reference):
    import yaml

    values = yaml.safe_load((AMD / f"values-{versions.AMD_GPU_OPERATOR.version}.yaml").read_text())
    assert values["deviceConfig"]["spec"]["driver"]["version"] == versions.AMD_GPU_DRIVER_DEFAULT


def test_dcm_config_has_the_upstream_shape(lab, reference):
    (cm,) = [r for r in by_type(lab, CONFIG_MAP) if r.name == "amd-lab-amd-gpu-operator-dcm-config"]
    config = json.loads(cm.revealed["data"]["config.json"])
    upstream = json.loads((AMD / "examples" / "configManager" / "config.json").read_text())
    assert set(config) <= set(upstream)
    upstream_profile = next(iter(upstream["gpu-config-profiles"].values()))
    assert config["gpu-config-profiles"] == {"mi300x-cpx": {
        "skippedGPUs": {"ids": []},
        "profiles": [{"computePartition": "CPX", "memoryPartition": "NPS4", "numGPUsAssigned": 8}],
    }}
    for profile in config["gpu-config-profiles"].values():
        assert set(profile) <= set(upstream_profile)
        for part in profile["profiles"]:
            assert set(part) <= set(upstream_profile["profiles"][0])
    # The DeviceConfig of the partitioned pool points its DCM at this ConfigMap.
    cpx = next(r for r in by_type(lab, DEVICE_CONFIG) if r.name.endswith("mi300x-cpx"))
    assert cpx.revealed["spec"]["configManager"] == {
        "enable": True, "config": {"name": "gpufleet-dcm-config"},
        "configManagerTolerations": [{"key": "amd.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
    }


def test_amd_chart_is_rendered_when_its_archive_is_present(reference):
    chart = next(iter((REFERENCE / "charts").glob(f"{versions.AMD_GPU_OPERATOR.name}-*.tgz")), None)
    if chart is None:
        pytest.skip(f"the AMD GPU Operator chart archive is not in {REFERENCE / 'charts'}: values keys are checked "
                    "against values.yaml only, the chart is not rendered")
    from tests.helm import template

    objs = template(chart, {}, "kube-amd-gpu")
    assert objs
