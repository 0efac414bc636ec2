"""Component tests (layer 2): KEDA on the managed Prometheus backends gets the address and the identity it needs.

- amp (EKS): an IRSA role for KEDA's operator that may only query the stack's workspace
  (components/eks/amp_query_access.py), the chart's `podIdentity.aws.irsa` values, a ClusterTriggerAuthentication
  `podIdentity.provider: aws`, and the workspace's query endpoint as KEDA's `prometheusServerAddress`;
- gke-managed (GKE): a Google service account with Monitoring Viewer that the operator's Kubernetes ServiceAccount may
  act as (components/gke/keda_identity.py), the chart's `podIdentity.gcp` values and a ClusterTriggerAuthentication
  `podIdentity.provider: gcp`;
- neither without KEDA, nor with an in-cluster Prometheus.
"""

from __future__ import annotations

import json

import pulumi
import pytest

from gpufleet.base import labels as L
from gpufleet.components.eks.amp_query_access import QUERY_ACTIONS, query_endpoint, query_policy
from gpufleet.app.plan.mocks import PLAN_ACCOUNT, PLAN_OIDC_ISSUER
from tests.amp_plan import WORKSPACE_ARN, amp_existing_workspace, amp_teams
from tests.gke_managed_plan import managed
from gpufleet.testing import mocked_id, mocked_output, run as run_under_mocks
from tests.helpers import by_type, example_config, one, parent_of, planned
from gpufleet.base.versions import chart_name_of

RELEASE = "kubernetes:helm.sh/v3:Release"
CTA = "kubernetes:keda.sh/v1alpha1:ClusterTriggerAuthentication"
ROLE, ROLE_POLICY = "aws:iam/role:Role", "aws:iam/rolePolicy:RolePolicy"
AMP_QUERY = "gpufleet:eks:AmpQueryAccess"
GKE_IDENTITY = "gpufleet:gke:KedaWorkloadIdentity"
GSA, PROJECT_MEMBER, GSA_MEMBER = ("gcp:serviceaccount/account:Account", "gcp:projects/iAMMember:IAMMember",
                                   "gcp:serviceaccount/iAMMember:IAMMember")


def _keda_values(p) -> dict:
    return next(r for r in by_type(p, RELEASE) if chart_name_of(r.inputs["chart"], r.inputs["version"]) == "keda").inputs["values"]


def _cluster_outputs(config: dict, stack: str) -> dict:
    """KEDA's component outputs after a real GpuCluster under the plan's mocks (Outputs resolved as `pulumi up` would)."""
    from gpufleet.components.gpu_cluster import GpuCluster, GpuClusterArgs

    outputs: dict = {}

    def program():
        cluster = GpuCluster(config["gpufleet:cluster"].get("name", stack), GpuClusterArgs.from_config(config, stack=stack))
        keda = cluster.workloads["keda"]
        pulumi.Output.from_input(keda.prometheus_server_address).apply(lambda v: outputs.__setitem__("address", v))
        auth = keda.trigger_authentication
        if auth is not None:
            auth.metadata.apply(lambda m: outputs.__setitem__("auth", m["name"]))

    run_under_mocks(program, stack=stack, config=config)
    return outputs


# --- amp (EKS) ---------------------------------------------------------------------------------------------------

def test_amp_keda_operator_gets_a_query_only_irsa_role():
    p = amp_teams()
    component = one(p, AMP_QUERY)
    assert component.name == "teams-eks-keda-amp-query"
    assert parent_of(p, component).type == "gpufleet:index:GpuCluster"
    role = one(p, ROLE, "teams-eks-keda-amp-query-role")
    assert parent_of(p, role).name == component.name
    host = PLAN_OIDC_ISSUER.removeprefix("https://")
    (statement,) = json.loads(role.inputs["assumeRolePolicy"])["Statement"]
    assert statement["Action"] == "sts:AssumeRoleWithWebIdentity"
    assert statement["Principal"] == {"Federated": f"arn:aws:iam::{PLAN_ACCOUNT}:oidc-provider/{host}"}
    # Only KEDA's operator (the chart's ServiceAccount keda-operator in namespace keda) may assume it.
    assert statement["Condition"] == {"StringEquals": {f"{host}:sub": "system:serviceaccount:keda:keda-operator",
                                                       f"{host}:aud": "sts.amazonaws.com"}}
    assert role.inputs["tags"] == {L.CLUSTER_TAG: "teams-eks"}

    policy = json.loads(one(p, ROLE_POLICY, "teams-eks-keda-amp-query-role-policy").inputs["policy"])
    workspace = one(p, "aws:amp/workspace:Workspace")
    workspace_arn = f"arn:aws:aps:us-east-1:{PLAN_ACCOUNT}:workspace/{mocked_id(workspace)}"  # AMP's ARN (service aps)
    assert policy["Statement"] == [{"Sid": "QueryWorkspace", "Effect": "Allow", "Resource": workspace_arn,
                                    "Action": ["aps:GetLabels", "aps:GetMetricMetadata", "aps:GetSeries", "aps:QueryMetrics"]}]


def test_amp_keda_is_annotated_with_the_role_and_gets_an_aws_trigger_authentication():
    p = amp_teams()
    values = _keda_values(p)
    assert values["podIdentity"] == {"aws": {"irsa": {
        "enabled": True, "roleArn": mocked_output(one(p, "aws:iam/role:Role", "teams-eks-keda-amp-query-role"), "arn")}}}
    cta = one(p, CTA)
    assert cta.name == "teams-eks-keda-prometheus-auth" and parent_of(p, cta).type == "gpufleet:addons:Keda"
    assert cta.inputs == {"apiVersion": "keda.sh/v1alpha1", "kind": "ClusterTriggerAuthentication",
                          "metadata": {"name": "gpufleet-prometheus"}, "spec": {"podIdentity": {"provider": "aws"}}}
    # Its CRD comes with KEDA's chart: the object waits for the release.
    release = next(r for r in by_type(p, RELEASE) if chart_name_of(r.inputs["chart"], r.inputs["version"]) == "keda")
    assert release.urn in cta.dependencies


def test_amp_keda_address_is_the_workspace_query_endpoint():
    from tests.amp_plan import amp_config

    outputs = _cluster_outputs(amp_config(), "teams-amp")
    workspace_id = mocked_id(one(amp_teams(), "aws:amp/workspace:Workspace"))
    assert outputs["address"] == f"https://aps-workspaces.us-east-1.amazonaws.com/workspaces/{workspace_id}"
    assert outputs["auth"] == L.KEDA_PROMETHEUS_AUTH


def test_amp_existing_workspace_scopes_the_role_and_the_address_to_it():
    config = example_config("prod-eks")
    config["gpufleet:addons"] = {"keda": {"enabled": True}}
    config["gpufleet:observability"] = {"metrics": {"backend": "amp", "ampWorkspaceArn": WORKSPACE_ARN}}
    outputs = _cluster_outputs(config, "prod-amp-keda")
    assert outputs["address"] == "https://aps-workspaces.us-east-1.amazonaws.com/workspaces/ws-1234abcd-5678-ef90-ab12-cdef3456a78"
    assert json.loads(query_policy(WORKSPACE_ARN))["Statement"][0]["Resource"] == WORKSPACE_ARN
    assert query_endpoint("eu-west-1", "ws-1") == "https://aps-workspaces.eu-west-1.amazonaws.com/workspaces/ws-1"
    assert QUERY_ACTIONS == ("aps:GetLabels", "aps:GetMetricMetadata", "aps:GetSeries", "aps:QueryMetrics")


def test_amp_without_keda_creates_no_query_role():
    p = amp_existing_workspace()  # prod-eks: KEDA off
    assert not by_type(p, AMP_QUERY) and not by_type(p, CTA)


# --- gke-managed (GKE) -------------------------------------------------------------------------------------------

def test_gke_keda_gets_a_google_service_account_with_monitoring_viewer():
    p = managed()
    component = one(p, GKE_IDENTITY)
    assert component.name == "dws-gke-keda-identity" and parent_of(p, component).type == "gpufleet:index:GpuCluster"
    gsa = one(p, GSA, "dws-gke-keda-identity-account")
    assert parent_of(p, gsa).name == component.name
    assert gsa.inputs["accountId"] == "keda-dws-gke" and gsa.inputs["project"] == "my-gpu-project"
    email = "keda-dws-gke@my-gpu-project.iam.gserviceaccount.com"
    viewer = one(p, PROJECT_MEMBER, "dws-gke-keda-identity-monitoring-viewer")
    assert viewer.inputs == {"project": "my-gpu-project", "role": "roles/monitoring.viewer", "member": f"serviceAccount:{email}"}
    user = one(p, GSA_MEMBER, "dws-gke-keda-identity-workload-identity-user")
    assert user.inputs == {
        "serviceAccountId": f"projects/my-gpu-project/serviceAccounts/{email}",
        "role": "roles/iam.workloadIdentityUser",
        # the cluster's workload pool (components/gke/cluster.py) and KEDA's operator ServiceAccount
        "member": "serviceAccount:my-gpu-project.svc.id.goog[keda/keda-operator]",
    }
    cluster = one(p, "gcp:container/cluster:Cluster")
    assert cluster.inputs["workloadIdentityConfig"] == {"workloadPool": "my-gpu-project.svc.id.goog"}


def test_gke_keda_is_annotated_with_the_service_account_and_gets_a_gcp_trigger_authentication():
    p = managed()
    assert _keda_values(p)["podIdentity"] == {"gcp": {
        "enabled": True, "gcpIAMServiceAccount": "keda-dws-gke@my-gpu-project.iam.gserviceaccount.com"}}
    cta = one(p, CTA)
    assert cta.inputs["metadata"] == {"name": L.KEDA_PROMETHEUS_AUTH}
    assert cta.inputs["spec"] == {"podIdentity": {"provider": "gcp"}}


def test_gke_keda_address_stays_the_managed_query_api():
    config = example_config("prod-gke")
    config["gpufleet:addons"] = {"keda": {"enabled": True}}
    outputs = _cluster_outputs(config, "prod-gke")
    assert outputs == {"address": "https://monitoring.googleapis.com/v1/projects/my-gpu-project/location/global/prometheus",
                       "auth": L.KEDA_PROMETHEUS_AUTH}


@pytest.mark.parametrize("stack", ["prod-gke", "teams"])
def test_no_identity_without_keda_or_with_an_in_cluster_prometheus(stack):
    """prod-gke runs gke-managed without KEDA; teams (k3s) runs KEDA without a managed backend."""
    p = planned(stack)
    assert not by_type(p, GKE_IDENTITY) and not by_type(p, AMP_QUERY) and not by_type(p, CTA)
    if stack == "teams":
        assert "podIdentity" not in _keda_values(p)
