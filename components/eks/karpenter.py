"""Karpenter: the controller (pinned Helm chart, on the system pool), its IAM role (EKS Pod Identity or IRSA) and
its interruption queue (SQS + EventBridge rules), as the upstream getting-started CloudFormation template builds
them (../shared/reference/karpenter/cloudformation-v<pinned version>.yaml, explained in docs-reference-cloudformation).

Differences from the template, each on purpose: the nodes use the cluster's one node role (EKS already made its
EC2_LINUX access entry for the system node group), so no KarpenterNodeRole; the controller's permissions are one
inline policy instead of six managed ones; the queue is named `<cluster>-karpenter` rather than the cluster's name.
Per GPU pool a KarpenterNodePool (components/eks/karpenter_pool.py) holds the NodePool and EC2NodeClass.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Optional

import pulumi
import pulumi_aws as aws

from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.components.eks.addon import eks_addon
from gpufleet.components.eks.irsa import irsa_role
from gpufleet.components.helm_chart import pinned_release
from gpufleet.base import labels as L
from gpufleet.base import versions
from gpufleet.base.spec.platforms.eks import EksAutoscalerSpec

NAMESPACE = "kube-system"
SERVICE_ACCOUNT = "karpenter"
POD_IDENTITY_AGENT = "eks-pod-identity-agent"
# The EventBridge rules of the upstream template: (rule role, event source, detail-type). Karpenter reads each
# message from the queue and drains/replaces the node before EC2 takes it.
INTERRUPTION_EVENTS = (
    ("scheduled-change", "aws.health", "AWS Health Event"),
    ("spot-interruption", "aws.ec2", "EC2 Spot Instance Interruption Warning"),
    ("rebalance", "aws.ec2", "EC2 Instance Rebalance Recommendation"),
    ("instance-state-change", "aws.ec2", "EC2 Instance State-change Notification"),
    ("capacity-reservation-interruption", "aws.ec2", "EC2 Capacity Reservation Instance Interruption Warning"),
)


@dataclass(frozen=True)
class KarpenterArgs:
    spec: EksAutoscalerSpec
    """cluster.eks.autoscaler (kind karpenter): identity, interruption queue."""
    node_role_arn: pulumi.Input[str]
    """The node role Karpenter passes to the instances it launches (iam:PassRole is scoped to it)."""


def _arn_parts(cluster_arn: str) -> tuple[str, str, str]:
    """(partition, region, account) of arn:<partition>:eks:<region>:<account>:cluster/<name>."""
    parts = cluster_arn.split(":")
    return parts[1], parts[3], parts[4]


def controller_policy(cluster_name: str, cluster_arn: str, node_role_arn: str, queue_arn: Optional[str]) -> str:
    """The upstream template's NodeLifecycle, IAMIntegration, EKSIntegration, Interruption and ResourceDiscovery
    policies in one document, scoped the same way (tags kubernetes.io/cluster/<name> and karpenter.sh/nodepool)."""
    part, region, account = _arn_parts(cluster_arn)
    ec2 = f"arn:{part}:ec2:{region}"
    owned = {f"aws:ResourceTag/kubernetes.io/cluster/{cluster_name}": "owned"}
    req = {f"aws:RequestTag/kubernetes.io/cluster/{cluster_name}": "owned", "aws:RequestTag/eks:eks-cluster-name": cluster_name}
    created = [f"{ec2}:*:{r}/*" for r in ("fleet", "instance", "volume", "network-interface", "launch-template", "spot-instances-request")]
    profile = f"arn:{part}:iam::{account}:instance-profile/*"
    statements = [
        {"Sid": "AllowScopedEC2InstanceAccessActions", "Effect": "Allow", "Action": ["ec2:RunInstances", "ec2:CreateFleet"],
         "Resource": [f"{ec2}::image/*", f"{ec2}::snapshot/*", f"{ec2}:*:security-group/*", f"{ec2}:*:subnet/*",
                      f"{ec2}:*:capacity-reservation/*", f"{ec2}:*:placement-group/*"]},
        {"Sid": "AllowScopedEC2LaunchTemplateAccessActions", "Effect": "Allow", "Action": ["ec2:RunInstances", "ec2:CreateFleet"],
         "Resource": f"{ec2}:*:launch-template/*",
         "Condition": {"StringEquals": owned, "StringLike": {"aws:ResourceTag/karpenter.sh/nodepool": "*"}}},
        {"Sid": "AllowScopedEC2InstanceActionsWithTags", "Effect": "Allow",
         "Action": ["ec2:RunInstances", "ec2:CreateFleet", "ec2:CreateLaunchTemplate"], "Resource": created,
         "Condition": {"StringEquals": req, "StringLike": {"aws:RequestTag/karpenter.sh/nodepool": "*"}}},
        {"Sid": "AllowScopedResourceCreationTagging", "Effect": "Allow", "Action": "ec2:CreateTags", "Resource": created,
         "Condition": {"StringEquals": {**req, "ec2:CreateAction": ["RunInstances", "CreateFleet", "CreateLaunchTemplate"]},
                       "StringLike": {"aws:RequestTag/karpenter.sh/nodepool": "*"}}},
        {"Sid": "AllowScopedResourceTagging", "Effect": "Allow", "Action": "ec2:CreateTags", "Resource": f"{ec2}:*:instance/*",
         "Condition": {"StringEquals": owned, "StringLike": {"aws:ResourceTag/karpenter.sh/nodepool": "*"},
                       "StringEqualsIfExists": {"aws:RequestTag/eks:eks-cluster-name": cluster_name},
                       "ForAllValues:StringEquals": {"aws:TagKeys": ["eks:eks-cluster-name", "karpenter.sh/nodeclaim", "Name"]}}},
        {"Sid": "AllowScopedDeletion", "Effect": "Allow", "Action": ["ec2:TerminateInstances", "ec2:DeleteLaunchTemplate"],
         "Resource": [f"{ec2}:*:instance/*", f"{ec2}:*:launch-template/*"],
         "Condition": {"StringEquals": owned, "StringLike": {"aws:ResourceTag/karpenter.sh/nodepool": "*"}}},
        {"Sid": "AllowPassingInstanceRole", "Effect": "Allow", "Action": "iam:PassRole", "Resource": node_role_arn,
         "Condition": {"StringEquals": {"iam:PassedToService": ["ec2.amazonaws.com", "ec2.amazonaws.com.cn"]}}},
        {"Sid": "AllowScopedInstanceProfileCreationActions", "Effect": "Allow", "Action": ["iam:CreateInstanceProfile"],
         "Resource": profile,
         "Condition": {"StringEquals": {**req, "aws:RequestTag/topology.kubernetes.io/region": region},
                       "StringLike": {"aws:RequestTag/karpenter.k8s.aws/ec2nodeclass": "*"}}},
        {"Sid": "AllowScopedInstanceProfileTagActions", "Effect": "Allow", "Action": ["iam:TagInstanceProfile"], "Resource": profile,
         "Condition": {"StringEquals": {**owned, "aws:ResourceTag/topology.kubernetes.io/region": region, **req,
                                        "aws:RequestTag/topology.kubernetes.io/region": region},
                       "StringLike": {"aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass": "*",
                                      "aws:RequestTag/karpenter.k8s.aws/ec2nodeclass": "*"}}},
        {"Sid": "AllowScopedInstanceProfileActions", "Effect": "Allow",
         "Action": ["iam:AddRoleToInstanceProfile", "iam:RemoveRoleFromInstanceProfile", "iam:DeleteInstanceProfile"],
         "Resource": profile,
         "Condition": {"StringEquals": {**owned, "aws:ResourceTag/topology.kubernetes.io/region": region},
                       "StringLike": {"aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass": "*"}}},
        {"Sid": "AllowAPIServerEndpointDiscovery", "Effect": "Allow", "Action": "eks:DescribeCluster", "Resource": cluster_arn},
        {"Sid": "AllowRegionalReadActions", "Effect": "Allow", "Resource": "*",
         "Action": ["ec2:DescribeCapacityReservations", "ec2:DescribeImages", "ec2:DescribeInstances", "ec2:DescribeInstanceStatus",
                    "ec2:DescribeInstanceTypeOfferings", "ec2:DescribeInstanceTypes", "ec2:DescribeLaunchTemplates",
                    "ec2:DescribePlacementGroups", "ec2:DescribeSecurityGroups", "ec2:DescribeSpotPriceHistory", "ec2:DescribeSubnets"],
         "Condition": {"StringEquals": {"aws:RequestedRegion": region}}},
        {"Sid": "AllowSSMReadActions", "Effect": "Allow", "Action": "ssm:GetParameter",
         "Resource": f"arn:{part}:ssm:{region}::parameter/aws/service/*"},
        {"Sid": "AllowPricingReadActions", "Effect": "Allow", "Action": "pricing:GetProducts", "Resource": "*"},
        {"Sid": "AllowUnscopedInstanceProfileListAction", "Effect": "Allow", "Action": "iam:ListInstanceProfiles", "Resource": "*"},
        {"Sid": "AllowInstanceProfileReadActions", "Effect": "Allow", "Action": "iam:GetInstanceProfile", "Resource": profile},
    ]
    if queue_arn:
        statements.append({"Sid": "AllowInterruptionQueueActions", "Effect": "Allow", "Resource": queue_arn,
                           "Action": ["sqs:DeleteMessage", "sqs:GetQueueUrl", "sqs:ReceiveMessage"]})
    return json.dumps({"Version": "2012-10-17", "Statement": statements}, sort_keys=True)


def queue_policy(queue_arn: str) -> str:
    """EventBridge (and SQS) may send; nothing over plain HTTP (the template's KarpenterInterruptionQueuePolicy)."""
    return json.dumps({
        "Id": "EC2InterruptionPolicy",
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Principal": {"Service": ["events.amazonaws.com", "sqs.amazonaws.com"]},
             "Action": "sqs:SendMessage", "Resource": queue_arn},
            {"Sid": "DenyHTTP", "Effect": "Deny", "Action": "sqs:*", "Resource": queue_arn, "Principal": "*",
             "Condition": {"Bool": {"aws:SecureTransport": False}}},
        ],
    }, sort_keys=True)


def pod_identity_trust() -> str:
    """EKS Pod Identity: the pods.eks.amazonaws.com service assumes the role and tags the session."""
    return json.dumps({"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Principal": {"Service": "pods.eks.amazonaws.com"},
        "Action": ["sts:AssumeRole", "sts:TagSession"],
    }]}, sort_keys=True)


def karpenter_values(cluster_name: str, queue_name: Optional[str], role_arn: Optional[pulumi.Input[str]]) -> dict:
    """Chart values (every key exists in the pinned chart's values.yaml; tests/upstream check it)."""
    values: dict = {
        "settings": {
            "clusterName": cluster_name,
            "interruptionQueue": queue_name or "",
            # Capacity reservations and Capacity Blocks as `karpenter.sh/capacity-type: reserved` (default on in the
            # pinned chart; stated so a chart change cannot turn reserved pools off silently).
            "featureGates": {"reservedCapacity": True},
        },
        # On the on-demand system node group, never on the nodes Karpenter itself launches.
        "nodeSelector": {L.POOL_LABEL: L.SYSTEM_POOL},
    }
    if role_arn is not None:  # IRSA; with Pod Identity the association binds the role to the service account
        values["serviceAccount"] = {"name": SERVICE_ACCOUNT, "annotations": {"eks.amazonaws.com/role-arn": role_arn}}
    else:
        values["serviceAccount"] = {"name": SERVICE_ACCOUNT}
    return values


class Karpenter(pulumi.ComponentResource):
    """`gpufleet:eks:Karpenter`: the pinned Karpenter controller on the system pool, its IAM role (`<name>-role`: EKS
    Pod Identity or IRSA) and its interruption queue (`<name>-queue` with EventBridge rules), as the upstream
    getting-started template builds them. GPU pools then come as KarpenterNodePool, not managed node groups."""

    def __init__(self, name: str, args: KarpenterArgs, access: ClusterAccess, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:eks:Karpenter", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        facts = access.facts
        tags = {L.CLUSTER_TAG: access.name}
        self.queue = self.queue_policy = None
        self.rules: list[aws.cloudwatch.EventRule] = []
        queue_name = None
        if args.spec.interruption_queue:
            queue_name = f"{access.name}-karpenter"
            self.queue = aws.sqs.Queue(
                f"{name}-queue", name=queue_name, message_retention_seconds=300, sqs_managed_sse_enabled=True,
                tags=tags, opts=child,
            )
            self.queue_policy = aws.sqs.QueuePolicy(
                f"{name}-queue-policy", queue_url=self.queue.url, policy=self.queue.arn.apply(queue_policy), opts=child,
            )
            for role, source, detail in INTERRUPTION_EVENTS:
                rule = aws.cloudwatch.EventRule(
                    f"{name}-{role}",
                    event_pattern=json.dumps({"source": [source], "detail-type": [detail]}),
                    tags=tags, opts=child,
                )
                aws.cloudwatch.EventTarget(
                    f"{name}-{role}", rule=rule.name, target_id="KarpenterInterruptionQueueTarget", arn=self.queue.arn,
                    opts=child,
                )
                self.rules.append(rule)
        queue_arn = self.queue.arn if self.queue is not None else None
        policy = pulumi.Output.all(facts["cluster_name"], facts["cluster_arn"], args.node_role_arn, queue_arn).apply(
            # As components/known.py says, an unknown input keeps the policy None; the queue's ARN is None without a
            # queue, so only the cluster's and the node role's must be there.
            lambda a: controller_policy(a[0], a[1], a[2], a[3]) if None not in a[:3] else None
        )
        depends: list[pulumi.Resource] = []
        if args.spec.identity == "irsa":
            self.role = irsa_role(f"{name}-role", access, NAMESPACE, SERVICE_ACCOUNT, self, policy=policy)
            role_arn: Optional[pulumi.Input[str]] = self.role.arn
        else:
            self.role = aws.iam.Role(f"{name}-role", assume_role_policy=pod_identity_trust(), tags=tags, opts=child)
            aws.iam.RolePolicy(f"{name}-role-policy", role=self.role.id, policy=policy, opts=child)
            agent = eks_addon(f"{name}-pod-identity-agent", POD_IDENTITY_AGENT, access, None, self, depends_on=access.ready or [])
            association = aws.eks.PodIdentityAssociation(
                f"{name}-pod-identity", cluster_name=facts["cluster_name"], namespace=NAMESPACE,
                service_account=SERVICE_ACCOUNT, role_arn=self.role.arn, tags=tags, opts=child,
            )
            depends = [agent, association]
            role_arn = None
        chart = versions.KARPENTER
        self.values = karpenter_values(access.name, queue_name, role_arn)
        self.release = pinned_release(name, chart, NAMESPACE, self.values, access, parent=self, depends_on=depends)
        self.register_outputs({"chartVersion": chart.version, "roleArn": self.role.arn, "interruptionQueue": queue_name})
