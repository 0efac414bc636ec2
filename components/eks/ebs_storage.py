"""EbsStorage: the EBS CSI driver as an EKS add-on (IRSA role with the AWS managed policy) and an
encrypted gp3 StorageClass that is the cluster's default."""

from __future__ import annotations

from typing import Optional

import pulumi
import pulumi_kubernetes as k8s

from gpufleet.base import labels
from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.components.eks.addon import eks_addon
from gpufleet.components.eks.irsa import irsa_role

ADDON = "aws-ebs-csi-driver"
SERVICE_ACCOUNT = "ebs-csi-controller-sa"
POLICY_ARN = "arn:aws:iam::aws:policy/service-role/AmazonEBSCSIDriverPolicy"
STORAGE_CLASS = "gp3"


def storage_class_manifest() -> dict:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": STORAGE_CLASS, "annotations": {labels.DEFAULT_STORAGE_CLASS_ANNOTATION: "true"}},
        "provisioner": "ebs.csi.aws.com",
        "parameters": {"type": "gp3", "encrypted": "true"},
        "reclaimPolicy": "Delete",
        # Volumes are created in the zone of the pod's node, not before it is scheduled.
        "volumeBindingMode": "WaitForFirstConsumer",
        "allowVolumeExpansion": True,
    }


class EbsStorage(pulumi.ComponentResource):
    """`gpufleet:eks:EbsStorage`: the EBS CSI driver as an EKS add-on (`<name>-addon`, IRSA role `<name>-role` with the
    AWS managed policy) and an encrypted gp3 StorageClass (`<name>-sc`), the cluster's default."""

    def __init__(self, name: str, access: ClusterAccess, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:eks:EbsStorage", name, None, opts)
        self.role = irsa_role(f"{name}-role", access, "kube-system", SERVICE_ACCOUNT, self, managed_policy_arns=(POLICY_ARN,))
        self.addon = eks_addon(f"{name}-addon", ADDON, access, self.role.arn, self, depends_on=access.ready or [])
        m = storage_class_manifest()
        self.storage_class = k8s.storage.v1.StorageClass(
            f"{name}-sc",
            metadata=m["metadata"],
            provisioner=m["provisioner"],
            parameters=m["parameters"],
            reclaim_policy=m["reclaimPolicy"],
            volume_binding_mode=m["volumeBindingMode"],
            allow_volume_expansion=m["allowVolumeExpansion"],
            opts=pulumi.ResourceOptions(parent=self, provider=access.provider, depends_on=[self.addon]),
        )
        self.register_outputs({"storageClass": STORAGE_CLASS})
