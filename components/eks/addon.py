"""An EKS managed add-on at a pinned version (gpufleet.base.versions.EKS_ADDONS) or, when unpinned, the
default build EKS publishes for the cluster's Kubernetes version (resolved at deploy time and recorded
as the add-on's input, so a change is a visible diff)."""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.base import versions


def eks_addon(name: str, addon: str, access: ClusterAccess, role_arn: pulumi.Input[str], parent: pulumi.Resource, depends_on=()) -> aws.eks.Addon:
    version = versions.EKS_ADDONS.get(addon)
    if version is None:
        version = aws.eks.get_addon_version_output(
            addon_name=addon, kubernetes_version=access.kubernetes_version, most_recent=False,
            opts=pulumi.InvokeOutputOptions(parent=parent),
        ).version
    return aws.eks.Addon(
        name,
        cluster_name=access.facts["cluster_name"],
        addon_name=addon,
        addon_version=version,
        service_account_role_arn=role_arn,
        resolve_conflicts_on_create="OVERWRITE",
        resolve_conflicts_on_update="PRESERVE",
        opts=pulumi.ResourceOptions(parent=parent, depends_on=list(depends_on)),
    )
