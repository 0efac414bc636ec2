"""AmpQueryAccess: an IAM role one Kubernetes service account assumes (IRSA) to query one Amazon Managed Service
for Prometheus workspace. gpufleet gives it to KEDA's operator with `metrics.backend: amp`, so ScaledObjects'
prometheus triggers can read the workspace.

- IRSA, as gpufleet's other EKS add-ons (autoscaler, EBS and FSx CSI drivers: components/eks/irsa.py); KEDA's
  chart annotates its operator's ServiceAccount with the role (`podIdentity.aws.irsa`), and KEDA's `aws` pod
  identity provider uses the operator's role when no `roleArn` is given (keda.sh/docs/2.20/authentication-providers/aws).
- The policy allows only the workspace's query actions on that workspace: `aps:QueryMetrics`, `aps:GetSeries`,
  `aps:GetLabels`, `aps:GetMetricMetadata`, the four actions of the AWS managed policy AmazonPrometheusQueryAccess
  (docs.aws.amazon.com/aws-managed-policy/latest/reference/AmazonPrometheusQueryAccess.html), which grants them on
  `*`; here the resource is the workspace's ARN.
- The query endpoint is `https://aps-workspaces.<region>.amazonaws.com/workspaces/<workspace id>`: the AMP User Guide
  queries `<that>/api/v1/query` with SigV4-signed requests ("Use awscurl to query with Prometheus-compatible APIs",
  docs.aws.amazon.com/prometheus/latest/userguide/AMP-compatible-APIs.html), and KEDA's prometheus scaler appends
  `/api/v1/query` to its `serverAddress` itself (kedacore/keda pkg/scalers/prometheus_scaler.go, ExecutePromQuery),
  as KEDA's own AMP example writes it (keda.sh/docs/2.20/scalers/prometheus, "Example: Amazon Managed Service for
  Prometheus (AMP)").

IAM roles and policies are free: nothing here is billed by the hour.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Optional

import pulumi

from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.components.eks.irsa import irsa_role

# AmazonPrometheusQueryAccess v1 (AWS managed policy reference, link above), in its own order.
QUERY_ACTIONS = ("aps:GetLabels", "aps:GetMetricMetadata", "aps:GetSeries", "aps:QueryMetrics")


def query_policy(workspace_arn: str) -> str:
    """Query actions on one workspace, nothing else."""
    return json.dumps({
        "Version": "2012-10-17",
        "Statement": [{"Sid": "QueryWorkspace", "Effect": "Allow", "Action": list(QUERY_ACTIONS), "Resource": workspace_arn}],
    }, sort_keys=True)


def query_endpoint(region: str, workspace_id: str) -> str:
    """The workspace's Prometheus-compatible query endpoint, as KEDA's `serverAddress` takes it (no /api/v1/query)."""
    return f"https://aps-workspaces.{region}.amazonaws.com/workspaces/{workspace_id}"


@dataclass(frozen=True)
class AmpQueryAccessArgs:
    workspace_arn: pulumi.Input[str]
    """The AMP workspace the role may query (the stack's, or `metrics.ampWorkspaceArn`)."""
    namespace: str
    """Namespace of the service account that assumes the role (KEDA's: `keda`)."""
    service_account: str
    """The service account that assumes the role (KEDA's operator: `keda-operator`, the chart's default name)."""


class AmpQueryAccess(pulumi.ComponentResource):
    """`<name>-role`: an IRSA role for one service account with a query-only policy on one AMP workspace."""

    def __init__(self, name: str, args: AmpQueryAccessArgs, access: ClusterAccess, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:eks:AmpQueryAccess", name, None, opts)
        policy = pulumi.Output.from_input(args.workspace_arn).apply(query_policy)
        self.role = irsa_role(f"{name}-role", access, args.namespace, args.service_account, self, policy=policy)
        self.register_outputs({"roleArn": self.role.arn})
