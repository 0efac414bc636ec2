"""Upstream-format tests (layer 3): what the EKS platform generates against the real upstream formats
in ../shared/reference: Helm values key paths, StorageClass parameters, Kubernetes schemas."""

import pytest
import yaml

from gpufleet.base import versions
from tests.eks_plan import prod_eks
from tests.helm_values import missing_paths
from tests.helpers import by_type, one
from tests.k8s_validate import validate_strict

pytestmark = pytest.mark.upstream
RELEASE = "kubernetes:helm.sh/v3:Release"
SC = "kubernetes:storage.k8s.io/v1:StorageClass"


@pytest.fixture(scope="module")
def p():
    return prod_eks()[0]


def test_efa_device_plugin_values_exist_upstream(p, reference):
    upstream = yaml.safe_load((reference / "aws" / f"efa-k8s-device-plugin-values-{versions.EFA_DEVICE_PLUGIN.version}.yaml").read_text())
    chart = yaml.safe_load((reference / "aws" / f"efa-k8s-device-plugin-Chart-{versions.EFA_DEVICE_PLUGIN.version}.yaml").read_text())
    assert (chart["version"], chart["appVersion"]) == (versions.EFA_DEVICE_PLUGIN.version, versions.EFA_DEVICE_PLUGIN.app_version)
    values = one(p, RELEASE, "prod-gpu-efa-device-plugin-release").inputs["values"]
    # nodeSelector's own keys are free-form (upstream: {}), so check the top-level paths.
    assert set(values) <= set(upstream)
    assert isinstance(upstream["nodeSelector"], dict) and isinstance(upstream["tolerations"], list)


def test_gpu_operator_values_exist_upstream(p, reference):
    upstream = reference / "gpu-operator" / f"values-{versions.GPU_OPERATOR.version}.yaml"
    values = one(p, RELEASE, "prod-gpu-gpu-operator-release").inputs["values"]
    assert missing_paths(values, upstream) == []


def _reference_parameters(reference, pattern):
    keys = set()
    for f in sorted((reference / "aws").glob(pattern)):
        keys |= set(yaml.safe_load(f.read_text())["parameters"])
    assert keys, pattern
    return keys


def test_fsx_storage_class_parameters_exist_upstream(p, reference):
    sc = one(p, SC, "prod-gpu-fsx-sc").inputs
    assert set(sc["parameters"]) <= _reference_parameters(reference, "fsx-storageclass-*.yaml")
    ref = yaml.safe_load((reference / "aws" / "fsx-storageclass-dynamic_provisioning.yaml").read_text())
    assert sc["provisioner"] == ref["provisioner"] and sc["mountOptions"] == ref["mountOptions"]
    # Every value is a string, as StorageClass parameters must be.
    assert all(isinstance(v, str) for v in sc["parameters"].values())


def test_fsx_s3_link_parameters_exist_upstream(reference):
    from gpufleet.components.eks.fsx_storage import storage_class_parameters
    from gpufleet.base.spec.platforms.eks import FsxLustreSpec

    spec = FsxLustreSpec.model_validate({"deploymentType": "SCRATCH_2", "perUnitStorageThroughput": None,
                                         "s3ImportPath": "s3://datasets", "s3ExportPath": "s3://datasets/export"})
    params = storage_class_parameters(spec, "subnet-0aaa1111", "sg-0aaa1111")
    ref = yaml.safe_load((reference / "aws" / "fsx-storageclass-dynamic_provisioning_s3.yaml").read_text())["parameters"]
    assert set(params) == set(ref)


def _k8s_object(r):
    obj = {k: v for k, v in r.inputs.items() if k not in ("__defaults",)}
    obj.setdefault("apiVersion", "storage.k8s.io/v1")
    obj.setdefault("kind", "StorageClass")
    return obj


def test_storage_classes_validate_strictly(p):
    for r in by_type(p, SC):
        validate_strict(_k8s_object(r), versions.KUBERNETES_DEFAULT)
