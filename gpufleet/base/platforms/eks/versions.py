"""eks: versions traits (gpufleet/base/platforms/contract/versions.py says what each one means)."""

from __future__ import annotations

import datetime as dt
from typing import Any, Optional

from gpufleet.base import versions
from gpufleet.base.catalog import kubernetes as k8s_catalog
from gpufleet.base.platforms.contract.versions import CONTROL_PLANE, KUBELET_SKEW, MoveRule, NodeDriver, VersionTraits
from gpufleet.base.spec.checks.lifecycle_checks import calendar_warnings
from gpufleet.base.spec.errors import Problem


NAMESPACE = "gpufleet"
# Warn when an AMI release a pool runs is older than this. gpufleet's own choice, not an AWS rule (AWS publishes no
# support window for an EKS AMI release): awslabs/amazon-eks-ami CHANGELOG.md (81fec2e8) lists a release every 1-5 weeks
# in 2026 (v20260107 ... v20260714; the longest gap v20260505 -> v20260610, 36 days), each with kernel and package
# security updates, so 90 days means at least two releases missed; the same quarter as the lifecycle and catalog
# warnings (lifecycle_checks.SUPPORT_WARNING_DAYS, catalog_checks.STALE_AFTER_DAYS).
AMI_RELEASE_WARNING_DAYS = 90


def _pinned_pools(spec: Any, system: bool = True) -> dict[tuple[str, str], list[tuple[Optional[int], str]]]:
    """(AMI family, release) -> the pools running it: (index when the pool chose it with amiRelease, else None; name).
    The system pool runs the AL2023 pin (its al2023-standard variant); `system` False leaves it out."""
    minor = spec.cluster.kubernetes_version
    users: dict[tuple[str, str], list[tuple[Optional[int], str]]] = {}
    if system:
        users.setdefault(("al2023", versions.EKS_AL2023_RELEASE_PINS[minor]), []).append((None, "the system pool"))
    for i, pool in enumerate(spec.node_pools):
        family = "bottlerocket" if pool.ami.startswith("bottlerocket") else "al2023"
        pins = versions.node_image_pins(pool.ami)
        chosen = pool.ami_release if pool.ami_release in versions.node_image_releases(pool.ami, minor) else None
        users.setdefault((family, chosen or pins[minor]), []).append((i if chosen else None, f"pool '{pool.name}'"))
    return users


_BUMP = {
    "al2023": "check awslabs/amazon-eks-ami's releases and bump EKS_AL2023_RELEASE_PINS",
    "bottlerocket": "check bottlerocket.dev's GPU driver pages and the bottlerocket-os/bottlerocket releases and bump "
                    "BOTTLEROCKET_RELEASE_PINS",
}


class EksVersions(VersionTraits):
    kubernetes_versions = versions.EKS_KUBERNETES_VERSIONS
    unknown_version = "is not an EKS version gpufleet plans for"
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

    def node_image_warnings(self, stack: str, spec: Any, day: dt.date) -> list:
        """An AMI release the stack runs (AL2023 or Bottlerocket) that is over AMI_RELEASE_WARNING_DAYS old on `day`:
        one warning per release, at the pools that chose it (`nodePools[i].amiRelease`, the release as its value) and,
        for the pools that take gpufleet's pin, at `nodePools` (where a pool could choose another; the fix is a
        reviewed bump of the pin), with the minor as its value. A pool that names the pin itself is warned at its own
        key, the others still at `nodePools`; each warning names the pools it is about."""
        minor = spec.cluster.kubernetes_version
        if minor not in versions.EKS_AL2023_RELEASE_PINS:
            return []  # not a minor gpufleet plans for on EKS: the spec refuses it
        out = []
        for (family, release), pools in _pinned_pools(spec).items():
            ami = "bottlerocket-nvidia" if family == "bottlerocket" else "al2023-nvidia"
            facts = versions.node_image(ami, minor, release)
            age = (day - dt.date.fromisoformat(facts.date)).days
            if age <= AMI_RELEASE_WARNING_DAYS:
                continue
            chosen = [(i, name) for i, name in pools if i is not None]
            pinned = [name for i, name in pools if i is None]
            when = f"{facts.tag}, " if family == "al2023" else f"released {facts.date}, "
            old = (f"{facts.family} release {release} ({when}NVIDIA driver {facts.driver}), run by {{}}, is {age} "
                   f"days old on {day.isoformat()} (over {AMI_RELEASE_WARNING_DAYS}): newer releases carry kernel, "
                   "containerd and NVIDIA driver fixes")
            pin = versions.node_image_pins(ami)[minor]
            out += [Problem(stack, f"{NAMESPACE}:nodePools[{i}].amiRelease",
                            f"{old.format(', '.join(name for _, name in chosen))}; move to a newer one (gpufleet pins "
                            f"{pin}), a rolling replacement of the pool's nodes the review shows with the driver it "
                            "ships", release) for i, _ in chosen]
            if pinned:
                out.append(Problem(stack, f"{NAMESPACE}:nodePools",
                                   f"{old.format(', '.join(pinned))}; it is gpufleet's pin for EKS {minor}: "
                                   f"{_BUMP[family]} in gpufleet/base/versions.py (with the release's driver and "
                                   "source), a reviewed rolling replacement of every "
                                   f"{'Bottlerocket ' if family == 'bottlerocket' else ''}"
                                   "pool's nodes", minor))
        return out

    def node_drivers(self, spec: Any, drivers: list[tuple[str, str]]) -> list[NodeDriver]:
        """The NVIDIA driver of the AMI release each GPU pool's nodes run (versions.node_image: the pool's amiRelease,
        else gpufleet's pin of its AMI family for the cluster's minor, EKS_AL2023_RELEASE_PINS or
        BOTTLEROCKET_RELEASE_PINS; a Bottlerocket release's driver is its aws-k8s-<minor>-nvidia variant's). Not
        `drivers`: that is the catalog's one driver per AMI family (aws_instances.yaml amis, a floor across releases),
        which may be a driver no node runs. One per release, as node_image_warnings: a release pools chose at each
        such pool's `nodePools[i].amiRelease` (the fix: another release of the minor), gpufleet's pin at `nodePools`
        (the fix: a reviewed bump of the pin table, or a pool's own amiRelease meanwhile).

        Managed node groups (components/eks/node_group.py) and Karpenter node classes (versions.karpenter_ami_alias:
        `al2023@vYYYYMMDD`, `bottlerocket@v1.N.P`) both take the release from versions.node_image, so one reading
        covers both: Karpenter resolves an alias to that release's image for the cluster's minor, the nvidia variant
        for GPU instance types (aws/karpenter-provider-aws pkg/providers/amifamily/al2023.go resolvePath at 41cd7465:
        /aws/service/eks/optimized-ami/<minor>/amazon-linux-2023/<arch>/nvidia/amazon-eks-node-al2023-<arch>-nvidia-
        <minor>-<version>/image_id). The system pool is left out: its al2023-standard AMI has no NVIDIA driver. No
        other pool is: every EKS pool runs an NVIDIA AMI (nodePools[*].ami is al2023-nvidia or bottlerocket-nvidia,
        the spec refuses an instance type without a GPU and AMD GPUs, which run on k3s only)."""
        minor = spec.cluster.kubernetes_version
        if minor not in versions.EKS_AL2023_RELEASE_PINS:
            return []  # not a minor gpufleet plans for on EKS: the spec refuses it
        out: list[NodeDriver] = []
        for (family, release), pools in _pinned_pools(spec, system=False).items():
            ami = "bottlerocket-nvidia" if family == "bottlerocket" else "al2023-nvidia"
            facts, pin = versions.node_image(ami, minor, release), versions.node_image(ami, minor)
            runs = f"{facts.family} release {release}, run by {{}}, ships NVIDIA driver {facts.driver}"
            out += [NodeDriver(f"nodePools[{i}].amiRelease", facts.driver, release,
                               f"{runs.format(name)}: move nodePools[{i}].amiRelease to a release on a supported branch "
                               f"(gpufleet pins {pin.release}, NVIDIA driver {pin.driver}), a rolling replacement of "
                               "the pool's nodes") for i, name in pools if i is not None]
            pinned = [name for i, name in pools if i is None]
            if pinned:
                table = "BOTTLEROCKET_RELEASE_PINS" if family == "bottlerocket" else "EKS_AL2023_RELEASE_PINS"
                out.append(NodeDriver("nodePools", facts.driver, release,
                                      f"{runs.format(', '.join(pinned))} and is gpufleet's pin for EKS {minor}: bump "
                                      f"{table}[\"{minor}\"] in gpufleet/base/versions.py to a release on a supported "
                                      "branch (with its driver and source), a reviewed rolling replacement of the "
                                      "pools' nodes, or choose one with nodePools[i].amiRelease"))
        return out

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
