"""stateful-resource-protection: what holds state cannot be deleted or replaced by accident.

- A control plane (EKS, GKE, AKS cluster: Azure Native's or the classic pulumi-azure's), a key that encrypts its
  secrets (AWS KMS key, Cloud KMS crypto key), a file system or volume (EBS, EFS, FSx, Filestore, Compute Engine disks, Kubernetes PersistentVolumes) or a claim
  (PersistentVolumeClaim), and a k3s server installed over SSH (command:remote:Command whose script installs
  k3s as a server: deleting it runs k3s's uninstall script, which removes the datastore), must be registered
  with Pulumi's `protect` option, so `pulumi destroy` or a replacing change stops at it. The rule reads the
  option from the analyzer's resource options (`args.opts.protect`), which the engine sends in previews.
- A StorageClass of a shared file system (NFS, Filestore, FSx for Lustre, EFS), where datasets and checkpoints
  live, must keep volumes whose claim is deleted: `reclaimPolicy: Retain` (Kubernetes' default is Delete).
- A k3s server of an embedded-etcd cluster must take scheduled etcd snapshots: `etcd-disable-snapshots` in the
  plain text of its script or config (k3s snapshots every 12 hours unless told not to; docs.k3s.io/cli/etcd-snapshot)
  means losing a quorum of servers loses the cluster.

Exempt with a reason, as for every rule (tag, label, annotation or policy config); a remote command has no labels,
so there the reason is a comment line of its script: `# gpufleet.io/exempt-stateful-resource-protection: <reason>`.
GCP labels cannot hold that key: on GCP resources the label `gpufleet-exempt-stateful-resource-protection` counts,
and so does that tag on Azure resources of either provider (Azure tag names cannot hold '/').
"""

from __future__ import annotations

import re

from pulumi_policy import EnforcementLevel, ResourceValidationPolicy

from gpufleet.base import labels
from gpufleet.policies import inputs as I

NAME = "stateful-resource-protection"
STORAGE_CLASS = "kubernetes:storage.k8s.io/v1:StorageClass"

# Type token -> what it holds (said in the message).
STATEFUL = {
    I.EKS_CLUSTER: "an EKS control plane (its etcd holds every Kubernetes object)",
    I.GKE_CLUSTER: "a GKE control plane (its etcd holds every Kubernetes object)",
    **{token: "an AKS control plane (its etcd holds every Kubernetes object)" for token in I.AKS_CLUSTERS},
    "aws:kms/key:Key": "a KMS key (what it encrypts is unreadable without it)",
    "gcp:kms/cryptoKey:CryptoKey": "a Cloud KMS key (what it encrypts is unreadable without it)",
    "aws:ebs/volume:Volume": "an EBS volume",
    "aws:efs/fileSystem:FileSystem": "an EFS file system",
    "aws:fsx/lustreFileSystem:LustreFileSystem": "an FSx for Lustre file system",
    "aws:fsx/ontapFileSystem:OntapFileSystem": "an FSx for ONTAP file system",
    "aws:fsx/openZfsFileSystem:OpenZfsFileSystem": "an FSx for OpenZFS file system",
    "gcp:filestore/instance:Instance": "a Filestore instance",
    "gcp:compute/disk:Disk": "a Compute Engine disk",
    "gcp:compute/regionDisk:RegionDisk": "a Compute Engine regional disk",
    "kubernetes:core/v1:PersistentVolume": "a PersistentVolume",
    "kubernetes:core/v1:PersistentVolumeClaim": "a PersistentVolumeClaim (its volume's data)",
}
# CSI provisioners of shared (ReadWriteMany) file systems: where datasets and checkpoints live.
SHARED_FS_PROVISIONERS = (
    "nfs.csi.k8s.io",
    "filestore.csi.storage.gke.io",
    "file.csi.azure.com",
    "blob.csi.azure.com",
    "fsx.csi.aws.com",
    "efs.csi.aws.com",
)
_NO_SNAPSHOTS = re.compile(r"etcd-disable-snapshots(\s*:\s*(true|\"true\"|'true')\b|(?=\s|$))", re.MULTILINE)
GCP_EXEMPT_KEY = labels.gcp_exempt_key(NAME)


def _gcp_exemption(props) -> str | None:
    """The exemption under the key GCP labels and Azure tags allow (no '/' in either: labels.gcp_exempt_key)."""
    for path in (("resourceLabels",), ("labels",), ("tags",)):
        reason = I.get(props, *path, GCP_EXEMPT_KEY)
        if isinstance(reason, str) and reason.strip():
            return reason.strip()
    return None


def check(resource_type: str, props, protected: bool) -> list[str]:
    out = []
    held = STATEFUL.get(resource_type)
    if resource_type == I.REMOTE_COMMAND:
        if not I.is_k3s_server(props):
            return []
        held = "a k3s server (deleting it runs k3s's uninstall script, which removes its datastore)"
        if any(_NO_SNAPSHOTS.search(t) for t in I.command_texts(props)):
            out.append(
                "k3s server with scheduled etcd snapshots disabled (etcd-disable-snapshots): on an embedded-etcd cluster, "
                "losing a quorum of servers then loses the cluster; remove it (gpufleet: cluster.k3s.etcdSnapshots.enabled)"
            )
    if resource_type == STORAGE_CLASS:
        provisioner = I.text(I.get(props, "provisioner")) or ""
        policy = I.text(I.get(props, "reclaimPolicy")) or "Delete"  # the Kubernetes default
        if provisioner in SHARED_FS_PROVISIONERS and policy != "Retain":
            out.append(
                f"StorageClass of a shared file system ({provisioner}) with reclaimPolicy {policy}: deleting a claim "
                "deletes its datasets or checkpoints; set reclaimPolicy: Retain"
            )
        return out
    if held and not protected:
        out.insert(0, (
            f"{held} is not protected: `pulumi destroy` or a replacing change deletes it; register it with "
            "protect=True (gpufleet: cluster.protection), or exempt it with a reason"
        ))
    return out


JUDGED = frozenset([*STATEFUL, I.REMOTE_COMMAND, STORAGE_CLASS])


def validate(args, report_violation) -> None:
    if args.resource_type not in JUDGED:
        return
    props = args.props
    if I.exemption(NAME, args.name, args.urn, props, I.config_of(args)):
        return
    if args.resource_type == I.REMOTE_COMMAND and I.script_exemption(props, NAME):
        return
    if args.resource_type.startswith(("gcp:", "azure-native:", "azure:")) and _gcp_exemption(props):
        return
    protected = bool(getattr(getattr(args, "opts", None), "protect", False))
    for message in check(args.resource_type, props, protected):
        report_violation(message, args.urn)


validate.judged_types = JUDGED  # the servicer skips other types without calling validate


POLICY = ResourceValidationPolicy(
    name=NAME,
    description="Clusters, encryption keys, volumes, file systems, claims and k3s servers are protected; shared "
    "file system classes retain volumes; embedded etcd takes snapshots.",
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=validate,
    config_schema=I.exemptions_schema(),
)
