"""eks: versions traits (gpufleet/base/platforms/contract/versions.py says what each one means)."""

from __future__ import annotations

import datetime as dt
from typing import Any, Optional

from gpufleet.base import versions
from gpufleet.base.catalog import kubernetes as k8s_catalog
from gpufleet.base.platforms.contract.versions import CONTROL_PLANE, KUBELET_SKEW, MoveRule, VersionTraits
from gpufleet.base.spec.checks.lifecycle_checks import calendar_warnings


class EksVersions(VersionTraits):
    kubernetes_versions = versions.EKS_KUBERNETES_VERSIONS
    unknown_version = "is not an EKS version gpufleet plans for"
    # An EKS GPU AMI's catalog driver is a floor (aws_instances.yaml amis), not the branch the AMI ships: AWS moves
    # the AMI's driver branch itself, so judging the floor's branch would warn about a driver the nodes may not run.
    driver_branch_judged = False
    move_rules = (
        MoveRule(CONTROL_PLANE, "no-downgrade",
                 source="EKS User Guide, 'Update existing cluster to new Kubernetes version' "
                        "(docs.aws.amazon.com/eks/latest/userguide/update-cluster.html): once you upgrade a cluster, you "
                        "can't downgrade to a previous version",
                 instead="a lower minor needs a new cluster (and a migration of the workloads)"),
        MoveRule(CONTROL_PLANE, "step", limit=1,
                 source="EKS User Guide, 'Update existing cluster to new Kubernetes version' (update-cluster.html): "
                        "EKS updates the control plane one minor version at a time (eksctl's 'Cluster upgrades' page: "
                        "upgrades of more than one Kubernetes version are not supported)"),
        KUBELET_SKEW,
    )

    def kubernetes_warnings(self, stack: str, spec: Any, day: dt.date) -> list:
        """EKS's calendar (catalog kubernetes.yaml), with the extended cluster-hour price."""
        cost = (f"; in extended support the control plane costs USD {k8s_catalog.eks_cluster_hourly_price('extended'):.2f} "
                f"per cluster-hour instead of {k8s_catalog.eks_cluster_hourly_price('standard'):.2f}")
        return calendar_warnings(stack, spec, day, "EKS", k8s_catalog.eks_kubernetes_version, cost)

    def addon_needs(self, spec: Any, resources: list) -> list[tuple[str, str, Optional[bool], str]]:
        """The EKS add-ons gpufleet installs (aws:eks/addon:Addon, components/eks/addon.py) and the self-managed ones EKS
        installs (versions.EKS_SELF_MANAGED_ADDONS), for the stack's minor."""
        minor = spec.cluster.kubernetes_version
        out: list[tuple[str, str, Optional[bool], str]] = []
        installed = sorted({str(r.inputs.get("addonName")) for r in resources
                            if r.type == ADDON and r.inputs.get("addonName")})
        for name in installed:
            pinned = versions.EKS_ADDONS.get(name)
            if pinned is None:
                out.append((f"EKS add-on {name}", f"EKS's default version for Kubernetes {minor}, resolved at `pulumi up` "
                            "(aws.eks.getAddonVersion): gpufleet moves it with the minor", True,
                            "components/eks/addon.py; EKS API DescribeAddonVersions (defaultVersion per clusterVersion)"))
            else:
                out.append((f"EKS add-on {name}", f"pinned {pinned} (gpufleet/base/versions.py EKS_ADDONS), not checked "
                            f"offline: `aws eks describe-addon-versions --addon-name {name} --kubernetes-version {minor}` "
                            "must list it", None, "EKS User Guide, 'Verify Amazon EKS add-on version compatibility with a "
                            "cluster'"))
        for name, table in sorted(versions.EKS_SELF_MANAGED_ADDONS.items()):
            version = table.get(minor)
            requires = (f"update it to {version}, the version EKS lists for {minor}: EKS installed it with the cluster "
                        "and does not update it with the minor, nor does gpufleet") if version else (
                f"no version recorded for {minor}: `aws eks describe-addon-versions --addon-name {name} "
                f"--kubernetes-version {minor}`; EKS installed it with the cluster and does not update it with the minor")
            out.append((f"EKS self-managed add-on {name}", requires, None,
                        "EKS User Guide, 'Update an Amazon EKS add-on' and the add-on's version table "
                        "(gpufleet/base/versions.py EKS_SELF_MANAGED_ADDONS)"))
        return out


ADDON = "aws:eks/addon:Addon"
