"""Upstream-format tests (layer 3): the custom resources of the DWS example (stacks/Pulumi.dws-gke.yaml) validate
against the Kueue CRDs in ../shared/reference/crds/kueue/ (incl. ProvisioningRequestConfig), and the provisioning
class gpufleet names is one a ProvisioningRequest accepts."""

import pytest
import yaml

from gpufleet.base import labels as L
from tests.crd_validate import CRDS, as_sent, validate_cr
from tests.helpers import planned

pytestmark = pytest.mark.upstream


@pytest.fixture(scope="module")
def p():
    return planned("dws-gke")


def test_kueue_objects_validate_against_the_crds(p):
    objs = [r for r in p.resources if r.type.startswith("kubernetes:kueue.x-k8s.io/")]
    kinds = sorted({r.type.rsplit(":", 1)[-1] for r in objs})
    # Topology: the reserved A3 Ultra pool h200-train is topology-aware (docs/topology.md).
    assert kinds == ["AdmissionCheck", "ClusterQueue", "LocalQueue", "ProvisioningRequestConfig", "ResourceFlavor", "Topology"]
    for r in objs:
        obj = as_sent({k: r.inputs[k] for k in ("apiVersion", "kind", "metadata", "spec") if k in r.inputs})
        assert validate_cr(obj) == [], r.name


def test_provisioning_request_accepts_the_class_name():
    path = CRDS / "cluster-autoscaler" / "autoscaling.x-k8s.io_provisioningrequests.yaml"
    if not path.is_file():
        pytest.skip(f"ProvisioningRequest CRD not found at {path}")
    crd = yaml.safe_load(path.read_text())
    v1 = next(v for v in crd["spec"]["versions"] if v["name"] == "v1")
    field = v1["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["provisioningClassName"]
    assert field["type"] == "string" and "enum" not in field  # any class: GKE adds queued-provisioning.gke.io
    assert len(L.GKE_QUEUED_PROVISIONING_CLASS) <= field.get("maxLength", 253)
