"""IAM roles for Kubernetes service accounts (IRSA): a role only one service account of one cluster can
assume, through the cluster's OIDC provider. Used by the autoscaler and the CSI add-ons."""

from __future__ import annotations

import json
from typing import Optional

import pulumi
import pulumi_aws as aws

from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.components.known import known
from gpufleet.base import labels as L


def trust_policy(provider_arn: str, issuer: str, namespace: str, service_account: str) -> str:
    """Only `system:serviceaccount:<namespace>:<service_account>` of this cluster's issuer, for STS."""
    host = issuer.removeprefix("https://")
    return json.dumps({
        "Version": "2012-10-17",
        "Statement": [{
            "Effect": "Allow",
            "Principal": {"Federated": provider_arn},
            "Action": "sts:AssumeRoleWithWebIdentity",
            "Condition": {"StringEquals": {
                f"{host}:sub": f"system:serviceaccount:{namespace}:{service_account}",
                f"{host}:aud": "sts.amazonaws.com",
            }},
        }],
    }, sort_keys=True)


def irsa_role(
    name: str,
    access: ClusterAccess,
    namespace: str,
    service_account: str,
    parent: pulumi.Resource,
    managed_policy_arns: tuple[str, ...] = (),
    policy: Optional[pulumi.Input[str]] = None,
) -> aws.iam.Role:
    """`<name>` role trusted by one service account, with AWS managed policies and/or an inline policy."""
    facts = access.facts
    assume = pulumi.Output.all(facts["oidc_provider_arn"], facts["oidc_issuer"]).apply(
        known(lambda a: trust_policy(a[0], a[1], namespace, service_account))
    )
    opts = pulumi.ResourceOptions(parent=parent)
    role = aws.iam.Role(name, assume_role_policy=assume, tags={L.CLUSTER_TAG: access.name}, opts=opts)
    for i, arn in enumerate(managed_policy_arns):
        aws.iam.RolePolicyAttachment(f"{name}-{arn.rsplit('/', 1)[-1]}", role=role.name, policy_arn=arn, opts=opts)
    if policy is not None:
        aws.iam.RolePolicy(f"{name}-policy", role=role.id, policy=policy, opts=opts)
    return role
