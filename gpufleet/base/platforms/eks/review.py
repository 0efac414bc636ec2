"""eks: review traits (gpufleet/base/platforms/contract/review.py says what each one means).

Rows for pulumi-aws resources: bridged from hashicorp/terraform-provider-aws, which replaces a resource when an input
its schema marks `ForceNew` changes.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from gpufleet.base import versions
from gpufleet.base import labels as L
from gpufleet.base.platforms.contract.review import ReplaceTable, ReviewTraits, VersionedPart
from gpufleet.base.platforms.contract.versions import CONTROL_PLANE, NODE_POOL

_TF_AWS = "hashicorp/terraform-provider-aws"

_KEY = "cluster.kubernetesVersion"
"""The stack key that sets every version these parts run (gpufleet:cluster.kubernetesVersion)."""

NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
NODE_CLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"

# EKS User Guide, "Understand each phase of node updates" (managed-node-update-behavior.html): an update to a new AMI
# release makes a launch template version with the target AMI, scales the group up (new nodes in the same zones), then
# cordons and drains the old nodes, at most `updateConfig.maxUnavailable` at a time (default 1, quota 100), respecting
# PodDisruptionBudgets, and scales down.
MNG_UPDATE = ("EKS launches nodes of the new release, then cordons and drains the old ones, {pace} at a time "
              "(updateConfig; EKS User Guide, 'Understand each phase of node updates')")
# Karpenter's drift (karpenter.sh docs, "Disruption", Drift): a NodeClaim whose EC2NodeClass no longer selects its AMI is
# drifted and replaced, as the NodePool's disruption budgets allow (karpenter-provider-aws, "Managing AMIs": pinning
# the alias version and moving it is how AMI upgrades are rolled out).
DRIFT = ("Karpenter marks each node drifted and replaces it, as the NodePool's disruption budgets allow "
         "(karpenter.sh, 'Disruption': Drift)")


# A Bottlerocket node group's releaseVersion: as EKS holds it ("1.N.P-<commit>"), or as the plan shows the value of
# the pinned release's SSM parameter (".../aws-k8s-<minor>-nvidia/x86_64/1.N.P/image_version", versions.EKS_AMIS).
_BOTTLEROCKET_VERSION = re.compile(r"(?:^(\d+\.\d+\.\d+)-[0-9a-f]+$|/aws-k8s-(\d+\.\d+)-nvidia/[^/]+/(\d+\.\d+\.\d+)/)")


def _driver(release: Any, ami_type: Any) -> str:
    """The NVIDIA driver a node group's AMI release ships (an AL2023 release of versions.EKS_AL2023_RELEASES, or for a
    Bottlerocket AMI type a release of BOTTLEROCKET_RELEASES), or why it is not known. The AMI type decides how the
    release reads: an AL2023 "1.N.P-YYYYMMDD" has the same shape as a Bottlerocket "1.N.P-<commit>"."""
    known = versions.EKS_AL2023_RELEASES.get(str(release))
    if known:
        return f"{known.driver} (branch {known.driver_branch})"
    bottlerocket = _BOTTLEROCKET_VERSION.search(str(release)) if "BOTTLEROCKET" in str(ami_type) else None
    if bottlerocket:
        version = bottlerocket.group(1) or bottlerocket.group(3)
        return _release_drivers("bottlerocket", version, bottlerocket.group(2))
    return "not known to gpufleet (a release not in versions.EKS_AL2023_RELEASES or BOTTLEROCKET_RELEASES)"


def _tag_driver(alias: Any) -> str:
    """The driver of a Karpenter alias: `al2023@vYYYYMMDD`, `bottlerocket@v1.N.P` (the node class does not name the
    cluster's minor, so a release whose variants differ lists each driver with its minors)."""
    family, _, tag = str(alias).partition("@")
    if tag == "latest":
        return "whatever the newest release ships when Karpenter resolves it"
    return _release_drivers(family, tag.removeprefix("v") if family == "bottlerocket" else tag)


def _release_drivers(family: str, release: str, minor: Optional[str] = None) -> str:
    """The driver of an AL2023 release tag (vYYYYMMDD: the one every known release of that date ships) or of a
    Bottlerocket version's aws-k8s-<minor>-nvidia variants (`minor`'s only, when known)."""
    if family == "al2023":
        per_minor = {r.minor: r.driver for r in versions.EKS_AL2023_RELEASES.values() if r.tag == release}
    elif family == "bottlerocket" and release in versions.BOTTLEROCKET_RELEASES:
        per_minor = dict(versions.BOTTLEROCKET_RELEASES[release].drivers)
    else:
        per_minor = {}
    if minor is not None:
        per_minor = {m: d for m, d in per_minor.items() if m == minor}
    drivers = sorted(set(per_minor.values()))
    if len(drivers) == 1:
        return f"{drivers[0]} (branch {drivers[0].split('.', 1)[0]})"
    if drivers and family == "bottlerocket":
        return ", ".join(f"{d} (branch {d.split('.', 1)[0]}) on {', '.join(sorted(m for m, v in per_minor.items() if v == d))}"
                         for d in drivers)
    return "not known to gpufleet"


def _alias(inputs: dict) -> Any:
    terms = ((inputs.get("spec") or {}).get("amiSelectorTerms") or [{}]) if isinstance(inputs, dict) else [{}]
    return (terms[0] or {}).get("alias") if isinstance(terms[0], dict) else None


class EksReview(ReviewTraits):
    replace_tables = {
        "aws:eks/nodeGroup:NodeGroup": ReplaceTable(
            paths=(
                "amiType", "capacityType", "clusterName", "diskSize", "instanceTypes", "launchTemplate.id",
                "launchTemplate.name", "nodeGroupName", "nodeGroupNamePrefix", "nodeRoleArn", "remoteAccess",
                "subnetIds",
            ),
            source=f"{_TF_AWS} internal/service/eks/node_group.go, resource schema ForceNew",
            checked=True,
        ),
        "aws:eks/cluster:Cluster": ReplaceTable(
            paths=(
                "name", "roleArn", "bootstrapSelfManagedAddons", "accessConfig.bootstrapClusterCreatorAdminPermissions",
                "kubernetesNetworkConfig.ipFamily", "kubernetesNetworkConfig.serviceIpv4Cidr",
                "outpostConfig.controlPlaneInstanceType", "outpostConfig.controlPlanePlacement.groupName",
                "remoteNetworkConfig",
            ),
            conditional=("encryptionConfig", "computeConfig.nodeRoleArn"),
            source=f"{_TF_AWS} internal/service/eks/cluster.go, schema ForceNew and CustomizeDiff "
            "(removing encryptionConfig, or changing an existing computeConfig.nodeRoleArn, forces replacement)",
            checked=True,
        ),
        "aws:fsx/lustreFileSystem:LustreFileSystem": ReplaceTable(
            paths=(
                "deploymentType", "subnetIds", "securityGroupIds", "storageType", "kmsKeyId", "importPath", "exportPath",
                "importedFileChunkSize", "driveCacheType", "efaEnabled",
            ),
            conditional=("storageCapacity",),
            source="Terraform AWS provider docs, aws_fsx_lustre_file_system (storageCapacity can only grow in place)",
            checked=False,
        ),
        "aws:efs/fileSystem:FileSystem": ReplaceTable(
            paths=("creationToken", "encrypted", "kmsKeyId", "performanceMode", "availabilityZoneName"),
            source="Terraform AWS provider docs, aws_efs_file_system",
            checked=False,
        ),
        "aws:ec2/vpc:Vpc": ReplaceTable(
            paths=("cidrBlock", "ipv4IpamPoolId", "ipv4NetmaskLength"),
            source="Terraform AWS provider docs, aws_vpc",
            checked=False,
        ),
    }

    # The GPU node groups' autoscaling-options tags (components/eks/node_group.py; their Auto Scaling group copies,
    # aws:autoscaling/tag:Tag, carry the same values and are not listed twice).
    scale_down_settings = {
        "aws:eks/nodeGroup:NodeGroup": {
            f"tags.{L.CA_TEMPLATE_OPTION}scaledowngpuutilizationthreshold":
                "a GPU node with more of its GPUs requested is never removed; 0: only nodes without GPU pods",
            f"tags.{L.CA_TEMPLATE_OPTION}scaledownunneededtime": "how long a GPU node stays unneeded before it goes",
            f"tags.{L.CA_TEMPLATE_OPTION}scaledownunreadytime": "how long an unready GPU node stays before it goes",
            f"tags.{L.CA_TEMPLATE_OPTION}scaledownutilizationthreshold":
                "CPU and memory threshold, used while a node's GPUs are not advertised",
            f"tags.{L.CA_TEMPLATE_OPTION}": "a per group override of the autoscaler's flags",
        },
    }

    disruptive_kinds = {
        "aws:eks/cluster:Cluster": "cluster",
        "aws:eks/nodeGroup:NodeGroup": "node pool",
        "aws:fsx/lustreFileSystem:LustreFileSystem": "file system",
        "aws:efs/fileSystem:FileSystem": "file system",
        "aws:ec2/vpc:Vpc": "network",
    }

    stateful = {
        "aws:eks/cluster:Cluster": "every Kubernetes object of the cluster (its etcd), and what runs on it",
        "aws:kms/key:Key": "the key the cluster's Secrets are encrypted with (without it they cannot be read)",
        "aws:ebs/volume:Volume": "the volume's data",
        "aws:efs/fileSystem:FileSystem": "the file system's data",
        "aws:fsx/lustreFileSystem:LustreFileSystem": "the file system's data",
        # AMP User Guide, "Delete an Amazon Managed Service for Prometheus workspace": "Deleting a workspace deletes the
        # data that has been ingested into it" (DeleteWorkspace API reference: permanently, within one month).
        "aws:amp/workspace:Workspace": "every metric sample ingested into the workspace (its alert history too): a new workspace starts empty",
    }

    def node_rollout(self, type_: str, before: dict, after: dict) -> Optional[str]:
        """A node group's AMI release moved (`releaseVersion`), or a Karpenter node class's AMI alias: every node of the
        pool is replaced by one of the new release, rolling, with the NVIDIA driver each release ships (issue 50)."""
        if type_ == NODE_GROUP and before.get("releaseVersion") != after.get("releaseVersion"):
            update = after.get("updateConfig") or {}
            pace = (f"{update['maxUnavailablePercentage']:g}%" if update.get("maxUnavailablePercentage") is not None
                    else f"{update.get('maxUnavailable', 1):g}")
            old, new = before.get("releaseVersion"), after.get("releaseVersion")
            ami_type = after.get("amiType", "")
            driver = (f"NVIDIA driver {_driver(old, ami_type)} -> {_driver(new, ami_type)}" if "NVIDIA" in str(ami_type)
                      else "no NVIDIA driver (a CPU AMI)")
            return f"every node is replaced by one of AMI release {new} (was {old}): {driver}; {MNG_UPDATE.format(pace=pace)}"
        if type_ == NODE_CLASS and _alias(before) != _alias(after):
            old, new = _alias(before), _alias(after)
            return (f"every node is replaced by one of AMI {new} (was {old}): NVIDIA driver {_tag_driver(old)} -> "
                    f"{_tag_driver(new)}; {DRIFT}")
        return None

    def kubernetes_parts(self, type_: str, inputs: dict) -> list[VersionedPart]:
        """The cluster's `version`; a node group's `version` only when set (gpufleet sets none: a node group takes the
        AMI release of the cluster's minor, so it follows the control plane)."""
        if type_ == "aws:eks/cluster:Cluster" and inputs.get("version"):
            return [VersionedPart(CONTROL_PLANE, str(inputs.get("name") or ""), str(inputs["version"]), _KEY)]
        if type_ == "aws:eks/nodeGroup:NodeGroup" and inputs.get("version"):
            return [VersionedPart(NODE_POOL, str(inputs.get("nodeGroupName") or ""), str(inputs["version"]), _KEY)]
        return []

    def versions(self, type_: str, inputs: dict) -> list[tuple[str, Any]]:
        if type_ == "aws:eks/cluster:Cluster":
            return [("Kubernetes (EKS control plane)", inputs.get("version"))]
        if type_ == "aws:eks/nodeGroup:NodeGroup":
            return [("Kubernetes (EKS node groups)", inputs.get("version")), ("EKS AMI release", inputs.get("releaseVersion"))]
        if type_ == "aws:eks/addon:Addon":
            return [(f"EKS add-on {inputs.get('addonName', '?')}", inputs.get("addonVersion"))]
        return []
