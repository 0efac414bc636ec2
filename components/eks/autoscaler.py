"""ClusterAutoscaler: the cluster-autoscaler chart (pinned, image matching the cluster's minor) on the
system pool, discovering node groups by tag, with an IRSA role that may only resize this cluster's
groups. GPU pools scale from zero through their node-template tags (components/eks/node_group.py)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Optional

import pulumi

from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.components.eks.irsa import irsa_role
from gpufleet.components.helm_chart import pinned_release
from gpufleet.components.known import known
from gpufleet.base import labels as L
from gpufleet.base import versions
from gpufleet.base.spec.platforms.eks import EksAutoscalerSpec

NAMESPACE = "kube-system"
SERVICE_ACCOUNT = "cluster-autoscaler"


@dataclass(frozen=True)
class ClusterAutoscalerArgs:
    spec: EksAutoscalerSpec
    """Expander and scale-down settings from the stack's cluster.eks.autoscaler."""
    isolated: bool = False
    """Nodes without internet (cluster.eks.network.egress endpoints): the autoscaler reads instance types from its
    built-in list (`--aws-use-static-instance-list=true`, which the EKS User Guide's private-clusters page requires,
    since the pricing API has no VPC endpoint); default: it asks the AWS APIs."""


def autoscaler_policy(cluster_name: str, cluster_arn: str) -> str:
    """Resize and terminate only groups tagged as owned by this cluster; read node groups of this cluster only.
    Describe calls cannot be scoped to resources (IAM service authorization reference)."""
    nodegroups = cluster_arn.replace(":cluster/", ":nodegroup/", 1) + "/*"
    return json.dumps({
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "Describe",
                "Effect": "Allow",
                "Action": [
                    "autoscaling:DescribeAutoScalingGroups",
                    "autoscaling:DescribeAutoScalingInstances",
                    "autoscaling:DescribeLaunchConfigurations",
                    "autoscaling:DescribeScalingActivities",
                    "autoscaling:DescribeTags",
                    "ec2:DescribeImages",
                    "ec2:DescribeInstanceTypes",
                    "ec2:DescribeLaunchTemplateVersions",
                    "ec2:GetInstanceTypesFromInstanceRequirements",
                ],
                "Resource": "*",
            },
            {
                "Sid": "ResizeOwnedGroups",
                "Effect": "Allow",
                "Action": ["autoscaling:SetDesiredCapacity", "autoscaling:TerminateInstanceInAutoScalingGroup"],
                "Resource": "*",
                "Condition": {"StringEquals": {f"aws:ResourceTag/{L.CA_OWNED_TAG.format(cluster=cluster_name)}": "owned"}},
            },
            {"Sid": "ReadNodeGroups", "Effect": "Allow", "Action": ["eks:DescribeNodegroup"], "Resource": nodegroups},
        ],
    }, sort_keys=True)


def autoscaler_values(spec: EksAutoscalerSpec, cluster_name: str, region: str, kubernetes_version: str, role_arn,
                      isolated: bool = False) -> dict:
    values = {
        "cloudProvider": "aws",
        "awsRegion": region,
        "autoDiscovery": {"clusterName": cluster_name},
        "image": {"tag": versions.CLUSTER_AUTOSCALER_IMAGES[kubernetes_version]},
        "rbac": {"serviceAccount": {"name": SERVICE_ACCOUNT, "annotations": {"eks.amazonaws.com/role-arn": role_arn}}},
        # Off the GPU pools, on the on-demand system pool (spot pools never host system components).
        "nodeSelector": {L.POOL_LABEL: L.SYSTEM_POOL},
        "extraArgs": {
            "expander": spec.expander,
            "balance-similar-node-groups": True,
            "skip-nodes-with-system-pods": False,
            "scale-down-unneeded-time": spec.scale_down_unneeded_time,
            "scale-down-delay-after-add": spec.scale_down_delay_after_add,
            "scale-down-utilization-threshold": spec.scale_down_utilization_threshold,
        },
    }
    if isolated:
        values["extraArgs"]["aws-use-static-instance-list"] = True
    return values


class ClusterAutoscaler(pulumi.ComponentResource):
    """`gpufleet:eks:ClusterAutoscaler`: the pinned cluster-autoscaler chart on the system pool, discovering node
    groups by tag, with an IRSA role (`<name>-role`) that may resize only this cluster's groups. Takes the
    cluster's ClusterAccess (its `facts`: region, cluster name and ARN, OIDC provider)."""

    def __init__(self, name: str, args: ClusterAutoscalerArgs, access: ClusterAccess, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:eks:ClusterAutoscaler", name, None, opts)
        facts = access.facts
        policy = pulumi.Output.all(facts["cluster_name"], facts["cluster_arn"]).apply(known(lambda a: autoscaler_policy(a[0], a[1])))
        self.role = irsa_role(f"{name}-role", access, NAMESPACE, SERVICE_ACCOUNT, self, policy=policy)
        chart = versions.CLUSTER_AUTOSCALER
        self.values = autoscaler_values(args.spec, access.name, facts["region"], access.kubernetes_version, self.role.arn,
                                        args.isolated)
        self.release = pinned_release(name, chart, NAMESPACE, self.values, access, parent=self)
        self.register_outputs({"chartVersion": chart.version, "roleArn": self.role.arn})
