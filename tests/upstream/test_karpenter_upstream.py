"""Upstream-format tests (layer 3): Karpenter against the pinned release in ../shared/reference/karpenter/ and
its CRDs in ../shared/reference/crds/karpenter/: chart version, values keys, NodePool / EC2NodeClass schemas,
and the interruption queue's rules and controller permissions against the upstream CloudFormation template."""

import json

import pytest
import yaml

from gpufleet.base import versions
from tests.crd_validate import as_sent, ec2_ids, validate_cr
from tests.helm_values import missing_paths
from tests.helpers import by_type, one
from tests.karpenter_plan import karpenter_eks

pytestmark = pytest.mark.upstream
RELEASE = "kubernetes:helm.sh/v3:Release"


@pytest.fixture(scope="module")
def p():
    return karpenter_eks()


@pytest.fixture
def karpenter_ref(reference):
    path = reference / "karpenter"
    if not path.is_dir():
        pytest.skip(f"Karpenter reference not found at {path}")
    return path


def test_chart_pin_matches_upstream(karpenter_ref):
    chart = yaml.safe_load((karpenter_ref / f"Chart-v{versions.KARPENTER.version}.yaml").read_text())
    assert (chart["name"], chart["version"], chart["appVersion"]) == (
        versions.KARPENTER.name, versions.KARPENTER.version, versions.KARPENTER.app_version)


def test_values_keys_exist_in_the_pinned_chart(p, karpenter_ref):
    values = one(p, RELEASE, "karpenter-gpu-karpenter-release").inputs["values"]
    assert missing_paths(values, karpenter_ref / f"values-v{versions.KARPENTER.version}.yaml") == []


def test_nodepools_and_nodeclasses_validate_against_the_crds(p):
    objs = [r for r in p.resources if r.type.startswith("kubernetes:karpenter.")]
    assert sorted(r.type.rsplit(":", 1)[-1] for r in objs) == ["EC2NodeClass"] * 3 + ["NodePool"] * 3
    for r in objs:
        obj = as_sent({"apiVersion": r.inputs["apiVersion"], "kind": r.inputs["kind"], "metadata": r.inputs["metadata"],
                     "spec": ec2_ids(r.inputs["spec"])})
        assert validate_cr(obj) == [], r.name


def _template(karpenter_ref) -> dict:
    class Loader(yaml.SafeLoader):
        pass

    for tag in ("!Sub", "!GetAtt", "!Ref"):
        Loader.add_constructor(tag, lambda loader, node: loader.construct_scalar(node) if isinstance(node, yaml.ScalarNode) else loader.construct_sequence(node))
    return yaml.load((karpenter_ref / f"cloudformation-v{versions.KARPENTER.version}.yaml").read_text(), Loader=Loader)


def test_interruption_rules_are_the_upstream_templates(p, karpenter_ref):
    upstream = {
        (res["Properties"]["EventPattern"]["source"][0], res["Properties"]["EventPattern"]["detail-type"][0])
        for res in _template(karpenter_ref)["Resources"].values() if res["Type"] == "AWS::Events::Rule"
    }
    ours = {(json.loads(r.inputs["eventPattern"])["source"][0], json.loads(r.inputs["eventPattern"])["detail-type"][0])
            for r in by_type(p, "aws:cloudwatch/eventRule:EventRule")}
    assert ours == upstream
    queue = one(p, "aws:sqs/queue:Queue").inputs
    props = next(r["Properties"] for r in _template(karpenter_ref)["Resources"].values() if r["Type"] == "AWS::SQS::Queue")
    assert (queue["messageRetentionSeconds"], queue["sqsManagedSseEnabled"]) == (props["MessageRetentionPeriod"], props["SqsManagedSseEnabled"])


def test_controller_policy_grants_what_the_template_grants(p, karpenter_ref):
    def actions(doc):
        out = set()
        for s in doc["Statement"]:
            a = s["Action"]
            out |= {a} if isinstance(a, str) else set(a)
        return out

    upstream = set()
    for res in _template(karpenter_ref)["Resources"].values():
        if res["Type"] == "AWS::IAM::ManagedPolicy" and "Controller" in res["Properties"]["ManagedPolicyName"]:
            doc = res["Properties"]["PolicyDocument"]
            upstream |= actions(json.loads(doc) if isinstance(doc, str) and doc.lstrip().startswith("{") else doc)
    ours = actions(json.loads(one(p, "aws:iam/rolePolicy:RolePolicy", "karpenter-gpu-karpenter-role-policy").inputs["policy"]))
    # The zonal shift permission is only needed with settings.enableZonalShift (off in gpufleet).
    assert upstream - ours == {"arc-zonal-shift:GetManagedResource"}
    assert ours - upstream == set()
