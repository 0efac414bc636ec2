"""AksStorage: StorageClasses on AKS's built-in CSI drivers (turned on by AksCluster's storage profile).

`gpufleet-rwo`: Azure Disk CSI (disk.csi.azure.com), the cluster default, bound where the pod lands. `gpufleet-rwx`:
Azure Files CSI (file.csi.azure.com) NFS shares on Premium storage, ReadWriteMany, when the stack asks for files.
`gpufleet-blob`: Blob CSI (blob.csi.azure.com) with BlobFuse2, when it asks for blob. Parameters as the drivers
document them (kubernetes-sigs/azuredisk-csi-driver docs/driver-parameters.md `skuName`; azurefile-csi-driver
docs/driver-parameters.md `skuName`, `protocol: nfs`; blob-csi-driver docs/driver-parameters.md `protocol: fuse2`).
AKS's own classes (managed-csi, azurefile-csi, azureblob-fuse-premium: articles/aks/csi-storage-drivers.md) stay.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pulumi
import pulumi_kubernetes as k8s

from gpufleet.base import labels
from gpufleet.base.spec.platforms.aks import AksStorageSpec
from gpufleet.components.cluster_access import ClusterAccess

RWO_CLASS = "gpufleet-rwo"
RWX_CLASS = "gpufleet-rwx"
BLOB_CLASS = "gpufleet-blob"
DISK_DRIVER = "disk.csi.azure.com"
FILE_DRIVER = "file.csi.azure.com"
BLOB_DRIVER = "blob.csi.azure.com"


@dataclass(frozen=True)
class AksStorageArgs:
    spec: AksStorageSpec
    """Disk SKU, Azure Files and Blob choices, reclaim policy."""


class AksStorage(pulumi.ComponentResource):
    """`gpufleet:aks:AksStorage`: StorageClasses on AKS's built-in CSI drivers: `<name>-rwo` (Azure Disk, the cluster
    default), and when the stack asks for them `<name>-rwx` (Azure Files NFS) and `<name>-blob` (Blob CSI)."""

    def __init__(self, name: str, args: AksStorageArgs, access: ClusterAccess, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:aks:AksStorage", name, None, opts)
        spec = args.spec
        child = pulumi.ResourceOptions(parent=self, provider=access.provider, depends_on=access.ready or [])
        # AKS marks `default` (managed-csi) as the default class too; Kubernetes >= 1.26 picks the newest default class,
        # so claims without a class get this one.
        self.rwo = k8s.storage.v1.StorageClass(
            f"{name}-rwo",
            metadata={"name": RWO_CLASS, "annotations": {labels.DEFAULT_STORAGE_CLASS_ANNOTATION: "true"}},
            provisioner=DISK_DRIVER,
            parameters={"skuName": spec.disk_sku},
            volume_binding_mode="WaitForFirstConsumer",
            allow_volume_expansion=True,
            reclaim_policy="Delete",
            opts=child,
        )
        classes = [RWO_CLASS]
        self.rwx = self.blob = None
        if spec.files:
            # NFS on Premium file shares: POSIX semantics and no SMB credentials on the nodes.
            self.rwx = k8s.storage.v1.StorageClass(
                f"{name}-rwx",
                metadata={"name": RWX_CLASS},
                provisioner=FILE_DRIVER,
                parameters={"skuName": "Premium_LRS", "protocol": "nfs"},
                volume_binding_mode="Immediate",
                allow_volume_expansion=True,
                # Retain by default: a share holds datasets and checkpoints that outlive a deleted claim.
                reclaim_policy=spec.reclaim_policy,
                opts=child,
            )
            classes.append(RWX_CLASS)
        if spec.blob:
            self.blob = k8s.storage.v1.StorageClass(
                f"{name}-blob",
                metadata={"name": BLOB_CLASS},
                provisioner=BLOB_DRIVER,
                parameters={"skuName": "Premium_LRS", "protocol": "fuse2"},
                volume_binding_mode="Immediate",
                allow_volume_expansion=True,
                reclaim_policy=spec.reclaim_policy,
                mount_options=["-o allow_other", "--file-cache-timeout-in-seconds=120"],
                opts=child,
            )
            classes.append(BLOB_CLASS)
        self.register_outputs({"classes": classes})
