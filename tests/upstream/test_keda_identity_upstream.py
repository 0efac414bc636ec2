"""Upstream-format tests (layers 3 and 6): KEDA's identity on the managed Prometheus backends, against the pinned
KEDA chart (../shared/reference/charts/keda-<version>.tgz) rendered by a real helm.

- The ClusterTriggerAuthentication gpufleet creates validates strictly against that chart's own CRD
  (templates/crds/crd-clustertriggerauthentications.yaml: ../shared/reference/crds/keda holds only ScaledObject and
  ScaledJob, so the CRD is taken from the chart render, with its Helm templating resolved by helm itself).
- The `podIdentity` values gpufleet sets exist in the chart's values.yaml, and rendered they annotate the operator's
  ServiceAccount `keda/keda-operator` (the subject the IAM role trusts and the Google service account lets act as it)
  with the role ARN (IRSA) or the Google service account (Workload Identity).
- The AMP example's trigger names that ClusterTriggerAuthentication and carries `awsRegion`.
"""

from __future__ import annotations

import json
import re
import tarfile

import pytest
import yaml

from gpufleet.app.plan.mocks import autoname
from gpufleet.base import labels as L
from gpufleet.base import versions
from gpufleet.components.workloads.keda import NAMESPACE, OPERATOR_SERVICE_ACCOUNT
from tests.amp_plan import amp_teams
from tests.crd_validate import _strict, as_sent
from tests.gke_managed_plan import managed
from tests.helm_values import key_paths
from tests.helpers import ROOT, by_type, one
from gpufleet.base.versions import chart_name_of

CTA = "kubernetes:keda.sh/v1alpha1:ClusterTriggerAuthentication"
PLANS = {"amp": amp_teams, "gke-managed": managed}


def _archive(reference):
    path = reference / "charts" / f"keda-{versions.KEDA.version}.tgz"
    if not path.is_file():
        pytest.skip(f"no KEDA chart archive at {path}")
    return path


def _render(reference, values: dict) -> list[dict]:
    from tests.helm import template

    return template(_archive(reference), values, NAMESPACE, release="keda")


def _keda_values(p) -> dict:
    return next(r for r in by_type(p, "kubernetes:helm.sh/v3:Release") if chart_name_of(r.inputs["chart"], r.inputs["version"]) == "keda").inputs["values"]


@pytest.fixture
def cta_schema(reference):
    docs = _render(reference, {})
    crd = next(d for d in docs if d.get("kind") == "CustomResourceDefinition"
               and d["spec"]["names"]["kind"] == "ClusterTriggerAuthentication")
    assert crd["spec"]["group"] == "keda.sh" and crd["spec"]["scope"] == "Cluster"
    return _strict(next(v for v in crd["spec"]["versions"] if v["name"] == "v1alpha1")["schema"]["openAPIV3Schema"])


def _errors(schema, obj) -> list[str]:
    import jsonschema

    return [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in jsonschema.Draft7Validator(schema).iter_errors(obj)]


@pytest.mark.parametrize("backend", sorted(PLANS))
def test_trigger_authentication_validates_strictly_against_the_charts_crd(cta_schema, backend):
    cta = one(PLANS[backend](), CTA)
    obj = as_sent(cta.inputs)
    assert obj["metadata"]["name"] == L.KEDA_PROMETHEUS_AUTH
    assert _errors(cta_schema, obj) == []
    # The strict schema does catch a wrong provider and a field the CRD lacks.
    bad = json.loads(json.dumps(obj))
    bad["spec"]["podIdentity"]["provider"] = "aws-irsa"
    bad["spec"]["podIdentity"]["awsRegion"] = "us-east-1"
    errors = "\n".join(_errors(cta_schema, bad))
    assert "'aws-irsa' is not one of" in errors and "'awsRegion' was unexpected" in errors


@pytest.mark.parametrize("backend", sorted(PLANS))
def test_pod_identity_values_exist_in_the_pinned_chart(reference, backend):
    with tarfile.open(_archive(reference)) as tar:
        upstream = yaml.safe_load(tar.extractfile("keda/values.yaml").read())
    paths = [p for p in key_paths(_keda_values(PLANS[backend]())) if p.startswith("podIdentity.")]
    assert paths == ({"amp": ["podIdentity.aws.irsa.enabled", "podIdentity.aws.irsa.roleArn"],
                      "gke-managed": ["podIdentity.gcp.enabled", "podIdentity.gcp.gcpIAMServiceAccount"]}[backend])
    for path in paths:
        node = upstream
        for part in path.split("."):
            assert isinstance(node, dict) and part in node, path
            node = node[part]
    assert upstream["serviceAccount"]["operator"]["name"] == OPERATOR_SERVICE_ACCOUNT


@pytest.mark.parametrize("backend, annotation", [
    ("amp", ("eks.amazonaws.com/role-arn", f"arn:aws:iam::123456789012:role/{autoname('aws:iam/role:Role', 'teams-eks-keda-amp-query-role')}")),
    ("gke-managed", ("iam.gke.io/gcp-service-account", "keda-dws-gke@my-gpu-project.iam.gserviceaccount.com")),
])
def test_rendered_operator_service_account_carries_the_identity(reference, backend, annotation):
    docs = _render(reference, _keda_values(PLANS[backend]()))
    accounts = [d for d in docs if d["kind"] == "ServiceAccount" and d["metadata"].get("annotations", {}).get(annotation[0])]
    assert [(a["metadata"]["namespace"], a["metadata"]["name"]) for a in accounts] == [(NAMESPACE, OPERATOR_SERVICE_ACCOUNT)]
    assert accounts[0]["metadata"]["annotations"][annotation[0]] == annotation[1]
    # The operator Deployment runs as that ServiceAccount.
    operator = next(d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == "keda-operator")
    assert operator["spec"]["template"]["spec"]["serviceAccountName"] == OPERATOR_SERVICE_ACCOUNT


def test_amp_example_trigger_signs_for_the_region_with_gpufleets_authentication():
    (obj,) = [d for d in yaml.safe_load_all((ROOT / "examples/inference-keda-amp-scaledobject.yaml").read_text()) if d]
    (trigger,) = obj["spec"]["triggers"]
    assert trigger["type"] == "prometheus"
    assert trigger["authenticationRef"] == {"kind": "ClusterTriggerAuthentication", "name": L.KEDA_PROMETHEUS_AUTH}
    meta = trigger["metadata"]
    match = re.fullmatch(r"https://aps-workspaces\.([a-z0-9-]+)\.amazonaws\.com/workspaces/(ws-[0-9a-f-]+)", meta["serverAddress"])
    assert match and match.group(1) == meta["awsRegion"]
