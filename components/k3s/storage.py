"""K3sStorage: the NFS CSI driver (Helm) with a ReadWriteMany StorageClass, and an optional checkpoint claim.

The ReadWriteOnce default is k3s's own local-path provisioner: k3s creates the `local-path` StorageClass
(marked default) itself and re-applies it on restart, so gpufleet does not create a second one; its
directory is the k3s server flag `default-local-storage-path` (K3sClusterArgs.local_storage_path).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pulumi
import pulumi_kubernetes as k8s

from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.components.protection import exemption, protect
from gpufleet.components.helm_chart import CHARTS_FACT, chart_args
from gpufleet.components.image_mirror import MIRROR_FACT, mirrored_values
from gpufleet.base import labels, versions
from gpufleet.base.spec.features.protection import ProtectionSpec
from gpufleet.base.spec.stack import StorageSpec

NFS_PROVISIONER = "nfs.csi.k8s.io"
NFS_NAMESPACE = "kube-system"
# The StorageClass k3s's local-path provisioner registers (and marks default).
LOCAL_PATH_CLASS = "local-path"


@dataclass(frozen=True)
class K3sStorageArgs:
    spec: StorageSpec
    """The stack's storage block (NFS server and share, checkpoint claim)."""
    nfs_namespace: str = NFS_NAMESPACE
    """Namespace of the NFS CSI controller and node plugin; default: kube-system, as upstream installs it."""
    protection: ProtectionSpec = ProtectionSpec()
    """Protect the checkpoint claim from deletion and replacement; default: on."""


def nfs_storage_class(spec: StorageSpec) -> dict:
    """The ReadWriteMany StorageClass: each volume is a sub-directory of the share (driver parameters)."""
    nfs = spec.nfs
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": nfs.storage_class, "annotations": {labels.DEFAULT_STORAGE_CLASS_ANNOTATION: "false"}},
        "provisioner": NFS_PROVISIONER,
        "parameters": {"server": nfs.server, "share": nfs.share},
        "reclaimPolicy": nfs.reclaim_policy,
        "volumeBindingMode": "Immediate",
        "allowVolumeExpansion": True,
        "mountOptions": list(nfs.mount_options),
    }


def checkpoint_claim(spec: StorageSpec, protection: ProtectionSpec = ProtectionSpec()) -> dict:
    c = spec.checkpoints
    annotations = exemption(protection)
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": c.name, "namespace": c.namespace, **({"annotations": annotations} if annotations else {})},
        "spec": {
            "accessModes": ["ReadWriteMany"],
            "storageClassName": spec.nfs.storage_class,
            "resources": {"requests": {"storage": c.size}},
        },
    }


class K3sStorage(pulumi.ComponentResource):
    """NFS CSI driver + RWX StorageClass (+ checkpoint claim) on the cluster's Kubernetes provider."""

    def __init__(
        self, name: str, args: K3sStorageArgs, access: ClusterAccess, opts: Optional[pulumi.ResourceOptions] = None
    ):
        super().__init__("gpufleet:addons:K3sStorage", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, provider=access.provider)
        spec = args.spec
        self.nfs_release = self.nfs_class = self.checkpoints = None
        if spec.nfs is not None:
            chart = versions.CSI_DRIVER_NFS
            self.nfs_release = k8s.helm.v3.Release(
                f"{name}-nfs-csi",
                name="csi-driver-nfs",
                **chart_args(chart, access.facts.get(CHARTS_FACT)),
                namespace=args.nfs_namespace,
                # The chart's own StorageClass stays off: gpufleet creates the class below from the spec.
                values=mirrored_values({"storageClass": {"create": False}}, chart.name, chart.version,
                                       access.facts.get(MIRROR_FACT)),
                opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=access.ready or [])),
            )
            sc = nfs_storage_class(spec)
            self.nfs_class = k8s.storage.v1.StorageClass(
                f"{name}-nfs-class",
                metadata=sc["metadata"],
                provisioner=sc["provisioner"],
                parameters=sc["parameters"],
                reclaim_policy=sc["reclaimPolicy"],
                volume_binding_mode=sc["volumeBindingMode"],
                allow_volume_expansion=sc["allowVolumeExpansion"],
                mount_options=sc["mountOptions"],
                opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[self.nfs_release])),
            )
            if spec.checkpoints is not None:
                pvc = checkpoint_claim(spec, args.protection)
                # protect: deleting or replacing the claim (a rename, another size or class) would bind the jobs to a
                # new, empty volume; the class's Retain policy keeps the old directory, but nothing would point at it.
                self.checkpoints = k8s.core.v1.PersistentVolumeClaim(
                    f"{name}-checkpoints",
                    metadata=pvc["metadata"],
                    spec=pvc["spec"],
                    opts=pulumi.ResourceOptions.merge(child, protect(args.protection, depends_on=[self.nfs_class])),
                )
        self.register_outputs({
            "defaultStorageClass": LOCAL_PATH_CLASS if spec.local_path.enabled else None,
            "rwxStorageClass": spec.nfs.storage_class if spec.nfs else None,
        })
