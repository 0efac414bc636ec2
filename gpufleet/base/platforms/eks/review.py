"""eks: review traits (gpufleet/base/platforms/contract/review.py says what each one means).

Rows for pulumi-aws resources: bridged from hashicorp/terraform-provider-aws, which replaces a resource when an input
its schema marks `ForceNew` changes.
"""

from __future__ import annotations

from typing import Any

from gpufleet.base import labels as L
from gpufleet.base.platforms.contract.review import ReplaceTable, ReviewTraits, VersionedPart
from gpufleet.base.platforms.contract.versions import CONTROL_PLANE, NODE_POOL

_TF_AWS = "hashicorp/terraform-provider-aws"

_KEY = "cluster.kubernetesVersion"
"""The stack key that sets every version these parts run (gpufleet:cluster.kubernetesVersion)."""

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
