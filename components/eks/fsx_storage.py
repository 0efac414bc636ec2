"""FsxLustreStorage: the FSx for Lustre CSI driver as an EKS add-on (IRSA role with the driver's
documented policy), a security group for Lustre traffic from the nodes (and rules on the nodes' group for
traffic from the file servers), and a StorageClass that
provisions a file system per PVC in the zone of the training pool (keys as in the driver's examples)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Optional

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.components.protection import exemption, protect
from gpufleet.components.eks.addon import eks_addon
from gpufleet.components.eks.irsa import irsa_role
from gpufleet.base import labels as L
from gpufleet.base.spec.platforms.eks import FsxLustreSpec
from gpufleet.base.spec.features.protection import ProtectionSpec

ADDON = "aws-fsx-csi-driver"
SERVICE_ACCOUNT = "fsx-csi-controller-sa"
LUSTRE_PORTS = ((988, 988), (1018, 1023))  # FSx for Lustre User Guide, "File system access control with Amazon VPC"


@dataclass(frozen=True)
class FsxLustreStorageArgs:
    spec: FsxLustreSpec
    """Deployment type, throughput, S3 link and StorageClass name."""
    subnet_id: pulumi.Input[str]
    """The one subnet file systems are created in (the training pool's zone)."""
    vpc_id: pulumi.Input[str]
    """VPC of the subnet."""
    protection: ProtectionSpec = ProtectionSpec()
    """Protect the shared file system and its PersistentVolume (Pulumi `protect`); default: on."""


def driver_policy() -> str:
    """The policy the aws-fsx-csi-driver docs give its controller (docs/install.md)."""
    return json.dumps({
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Action": ["iam:CreateServiceLinkedRole", "iam:AttachRolePolicy", "iam:PutRolePolicy"],
                "Resource": "arn:aws:iam::*:role/aws-service-role/s3.data-source.lustre.fsx.amazonaws.com/*",
            },
            {
                "Effect": "Allow",
                "Action": "iam:CreateServiceLinkedRole",
                "Resource": "*",
                "Condition": {"StringLike": {"iam:AWSServiceName": ["fsx.amazonaws.com"]}},
            },
            {
                "Effect": "Allow",
                "Action": ["s3:ListBucket", "fsx:CreateFileSystem", "fsx:DeleteFileSystem", "fsx:DescribeFileSystems", "fsx:TagResource", "fsx:UpdateFileSystem"],
                "Resource": "*",
            },
        ],
    }, sort_keys=True)


def storage_class_parameters(spec: FsxLustreSpec, subnet_id: str, security_group_id: str) -> dict[str, str]:
    params = {"subnetId": subnet_id, "securityGroupIds": security_group_id, "deploymentType": spec.deployment_type}
    if spec.deployment_type.startswith("PERSISTENT") and spec.per_unit_storage_throughput is not None:
        params["perUnitStorageThroughput"] = str(spec.per_unit_storage_throughput)
    if spec.s3_import_path:
        params["s3ImportPath"] = spec.s3_import_path
    if spec.s3_export_path:
        params["s3ExportPath"] = spec.s3_export_path
    return params


class FsxLustreStorage(pulumi.ComponentResource):
    """`gpufleet:eks:FsxLustreStorage`: the FSx for Lustre CSI driver as an EKS add-on (`<name>-addon`, IRSA role
    `<name>-role`), a security group for Lustre traffic (`<name>-sg`) and a StorageClass (`<name>-sc`) that
    provisions a file system per claim in the training pool's zone; with a shared file system, its volume
    (`<name>-shared`, `<name>-shared-pv`)."""

    def __init__(self, name: str, args: FsxLustreStorageArgs, access: ClusterAccess, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:eks:FsxLustreStorage", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        cluster_sg = access.facts["cluster_security_group_id"]
        self.security_group = aws.ec2.SecurityGroup(
            f"{name}-sg",
            description=f"FSx for Lustre of {access.name}: Lustre from the cluster's nodes",
            vpc_id=args.vpc_id,
            ingress=[
                rule
                for lo, hi in LUSTRE_PORTS
                for rule in (
                    {"protocol": "tcp", "from_port": lo, "to_port": hi, "security_groups": [cluster_sg], "description": "Lustre from nodes"},
                    {"protocol": "tcp", "from_port": lo, "to_port": hi, "self": True, "description": "Lustre between file servers"},
                )
            ],
            egress=[{"protocol": "-1", "from_port": 0, "to_port": 0, "cidr_blocks": ["0.0.0.0/0"], "description": "replies and S3"}],
            tags={L.CLUSTER_TAG: access.name},
            opts=child,
        )
        # The clients' side: Lustre file servers also open connections to their clients, so the nodes' group (the
        # cluster security group, on every node group) must let them in (FSx for Lustre User Guide, "Lustre client
        # VPC security group rules": inbound 988 and 1018-1023 from the file systems' groups). EKS's cluster
        # group only admits itself.
        self.client_rules = [
            aws.vpc.SecurityGroupIngressRule(
                f"{name}-client-{lo}-{hi}",
                security_group_id=cluster_sg,
                referenced_security_group_id=self.security_group.id,
                ip_protocol="tcp",
                from_port=lo,
                to_port=hi,
                description="Lustre from FSx file servers",
                tags={L.CLUSTER_TAG: access.name},
                opts=child,
            )
            for lo, hi in LUSTRE_PORTS
        ]
        self.role = irsa_role(f"{name}-role", access, "kube-system", SERVICE_ACCOUNT, self, policy=driver_policy())
        self.addon = eks_addon(f"{name}-addon", ADDON, access, self.role.arn, self, depends_on=access.ready or [])
        params = pulumi.Output.all(args.subnet_id, self.security_group.id).apply(
            lambda a: storage_class_parameters(args.spec, a[0], a[1])
        )
        self.storage_class = k8s.storage.v1.StorageClass(
            f"{name}-sc",
            metadata={"name": args.spec.storage_class_name},
            provisioner="fsx.csi.aws.com",
            parameters=params,
            reclaim_policy=args.spec.reclaim_policy,
            mount_options=["flock"],
            opts=pulumi.ResourceOptions(parent=self, provider=access.provider, depends_on=[self.addon]),
        )
        self.file_system = None
        self.associations: list = []
        if args.spec.shared is not None:
            self._shared(name, args, access)
        self.register_outputs({"storageClass": args.spec.storage_class_name})

    def _shared(self, name: str, args: FsxLustreStorageArgs, access: ClusterAccess) -> None:
        """One PERSISTENT_2 file system for the cluster, its S3 links and a PersistentVolume for it (static
        provisioning, as the aws-fsx-csi-driver examples/kubernetes/static_provisioning and ai-on-eks do)."""
        spec, shared = args.spec, args.spec.shared
        child = pulumi.ResourceOptions(parent=self)
        self.file_system = aws.fsx.LustreFileSystem(
            f"{name}-shared",
            deployment_type="PERSISTENT_2",
            file_system_type_version="2.15",
            storage_type="SSD",
            storage_capacity=shared.storage_capacity_gib,
            per_unit_storage_throughput=spec.per_unit_storage_throughput,
            subnet_ids=args.subnet_id,  # one subnet: pulumi_aws takes it as a string
            security_group_ids=[self.security_group.id],
            tags={L.CLUSTER_TAG: access.name, "Name": f"{access.name}-shared", **exemption(args.protection)},
            # The shared file system holds the datasets and checkpoints: `pulumi destroy` or a replacing
            # change must not delete it unannounced (issue 21). Its S3 links are stateless and stay unprotected.
            opts=protect(args.protection, parent=self),
        )
        events = ["NEW", "CHANGED", "DELETED"]
        for i, dra in enumerate(shared.data_repository_associations):
            s3 = {}
            if dra.auto_import:
                s3["auto_import_policy"] = {"events": events}
            if dra.auto_export:
                s3["auto_export_policy"] = {"events": events}
            self.associations.append(aws.fsx.DataRepositoryAssociation(
                f"{name}-shared-dra-{i}",
                file_system_id=self.file_system.id,
                data_repository_path=dra.s3_path,
                file_system_path=dra.file_system_path,
                s3=s3 or None,
                tags={L.CLUSTER_TAG: access.name},
                opts=child,
            ))
        self.shared_volume = k8s.core.v1.PersistentVolume(
            f"{name}-shared-pv",
            metadata={"name": f"{spec.storage_class_name}-shared", "annotations": exemption(args.protection)},
            spec={
                "capacity": {"storage": f"{shared.storage_capacity_gib}Gi"},
                "volumeMode": "Filesystem",
                "accessModes": ["ReadWriteMany"],
                "persistentVolumeReclaimPolicy": "Retain",
                "storageClassName": spec.storage_class_name,
                "mountOptions": ["flock"],
                "csi": {
                    "driver": "fsx.csi.aws.com",
                    "volumeHandle": self.file_system.id,
                    "volumeAttributes": {"dnsname": self.file_system.dns_name, "mountname": self.file_system.mount_name},
                },
            },
            opts=protect(args.protection, parent=self, provider=access.provider, depends_on=[self.addon]),
        )
