"""GkeStorage: StorageClasses for GKE's CSI drivers (enabled on the cluster by GkeCluster).

`gpufleet-rwo`: Persistent Disk CSI (balanced PD or Hyperdisk), the cluster default, bound where the pod
lands. `gpufleet-rwx`: Filestore CSI (ReadWriteMany) on the cluster's VPC, when the spec asks for Filestore.
`gpufleet-lustre`: Managed Lustre CSI (ReadWriteMany), each claim a Managed Lustre instance, when the spec asks for it.
Cloud Storage FUSE needs no StorageClass (pods mount buckets through inline CSI volumes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pulumi
import pulumi_kubernetes as k8s

from gpufleet.base import labels
from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.base.spec.platforms.gke import GkeStorageSpec

RWO_CLASS = "gpufleet-rwo"
RWX_CLASS = "gpufleet-rwx"
PD_DRIVER = "pd.csi.storage.gke.io"
FILESTORE_DRIVER = "filestore.csi.storage.gke.io"
LUSTRE_CLASS = "gpufleet-lustre"
LUSTRE_DRIVER = "lustre.csi.storage.gke.io"


@dataclass(frozen=True)
class GkeStorageArgs:
    spec: GkeStorageSpec
    """Disk type, Filestore and GCS FUSE choices."""
    network_name: pulumi.Input[str]
    """VPC name Filestore instances attach to (the cluster's)."""


class GkeStorage(pulumi.ComponentResource):
    """`gpufleet:gke:GkeStorage`: StorageClasses for GKE's CSI drivers: `<name>-rwo` (Persistent Disk or Hyperdisk, the
    cluster default), and when the stack asks for them `<name>-rwx` (Filestore) and `<name>-lustre` (Managed
    Lustre)."""

    def __init__(self, name: str, args: GkeStorageArgs, access: ClusterAccess, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:gke:GkeStorage", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, provider=access.provider, depends_on=access.ready or [])
        # GKE also ships `standard-rwo` marked default; Kubernetes >= 1.26 picks the newest default class, so
        # PVCs without a class get this one.
        self.rwo = k8s.storage.v1.StorageClass(
            f"{name}-rwo",
            metadata={"name": RWO_CLASS, "annotations": {labels.DEFAULT_STORAGE_CLASS_ANNOTATION: "true"}},
            provisioner=PD_DRIVER,
            parameters={"type": args.spec.default_disk_type},
            volume_binding_mode="WaitForFirstConsumer",
            allow_volume_expansion=True,
            reclaim_policy="Delete",
            opts=child,
        )
        self.rwx = None
        if args.spec.filestore:
            self.rwx = k8s.storage.v1.StorageClass(
                f"{name}-rwx",
                metadata={"name": RWX_CLASS},
                provisioner=FILESTORE_DRIVER,
                parameters={"tier": args.spec.filestore_tier, "network": args.network_name},
                volume_binding_mode="WaitForFirstConsumer",
                allow_volume_expansion=True,
                # Retain by default: a Filestore instance holds datasets and checkpoints that outlive a deleted
                # claim. A class's reclaimPolicy is immutable: changing it replaces the class (existing volumes keep
                # theirs: `kubectl patch pv NAME -p '{"spec":{"persistentVolumeReclaimPolicy":"Retain"}}'`).
                reclaim_policy=args.spec.filestore_reclaim_policy,
                opts=child,
            )
        self.lustre = None
        if args.spec.managed_lustre:
            # Managed Lustre CSI driver reference (cloud.google.com/managed-lustre/docs/lustre-csi-driver-reference):
            # perUnitStorageThroughput is required (125, 250, 500, 1000); network is the VPC the instance joins (the
            # cluster's; its private services access range is set up by GkeLustreAccess). WaitForFirstConsumer: the
            # instance is zonal and is created in the zone of the first pod that mounts it. No volume expansion:
            # GKE supports it only from 1.35.0-gke.2331000 (concepts/managed-lustre, Limitations).
            self.lustre = k8s.storage.v1.StorageClass(
                f"{name}-lustre",
                metadata={"name": LUSTRE_CLASS},
                provisioner=LUSTRE_DRIVER,
                parameters={"perUnitStorageThroughput": str(args.spec.managed_lustre_throughput),
                            "network": args.network_name},
                volume_binding_mode="WaitForFirstConsumer",
                # Retain, as for Filestore: the instance holds the data a deleted claim leaves behind.
                reclaim_policy="Retain",
                opts=child,
            )
        self.register_outputs({"classes": [RWO_CLASS] + ([RWX_CLASS] if self.rwx else [])
                               + ([LUSTRE_CLASS] if self.lustre else [])})
