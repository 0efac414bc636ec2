"""gpufleet:storage blocks — k3s local-path (RWO), NFS CSI (RWX) and an optional checkpoint PVC."""

from typing import Annotated, Literal, Optional

from pydantic import Field, field_validator

from gpufleet.base.spec import ids
from gpufleet.base.spec.base import DNS_LABEL, Model, check_address


class LocalPathSpec(Model):
    """k3s's bundled local-path provisioner: node-local ReadWriteOnce volumes, the default StorageClass."""

    enabled: bool = True
    """Keep k3s's `local-path` StorageClass as the cluster default (needs `local-storage` not in k3s.disable)."""
    path: Optional[str] = None
    """Directory on every node that holds the volumes (k3s `default-local-storage-path`), e.g. a fast NVMe
    mount; default: k3s's own /var/lib/rancher/k3s/storage."""

    _check_path = field_validator("path")(lambda cls, v: _absolute(v, "/mnt/nvme/k3s-local-path"))


def _absolute(value: Optional[str], example: str) -> Optional[str]:
    if value is not None and not value.startswith("/"):
        raise ValueError(f"must be an absolute path, e.g. {example} (got {value!r})")
    return value


class NfsSpec(Model):
    """An existing NFS server, mounted by the NFS CSI driver; volumes are sub-directories of `share`."""

    server: str
    """NFS server address (IP or DNS name)."""
    share: str
    """Exported path on the server, e.g. /export/gpufleet."""
    storage_class: str = Field(default="nfs", pattern=DNS_LABEL, max_length=63)
    """Name of the ReadWriteMany StorageClass; default: nfs."""
    reclaim_policy: Literal["Retain", "Delete"] = "Retain"
    """What happens to a volume's directory when its claim is deleted; default: Retain (datasets and
    checkpoints survive a deleted claim)."""
    mount_options: list[Annotated[str, Field(pattern=ids.MOUNT_OPTION)]] = ["nfsvers=4.1"]
    """NFS mount options; default: NFS v4.1."""

    _check_server = field_validator("server")(lambda cls, v: check_address(v))
    _check_share = field_validator("share")(lambda cls, v: _absolute(v, "/export/gpufleet"))


class CheckpointVolumeSpec(Model):
    """A ReadWriteMany claim on the NFS class that training jobs mount for checkpoints."""

    name: str = Field(default="checkpoints", pattern=DNS_LABEL, max_length=63)
    """PersistentVolumeClaim name; default: checkpoints."""
    namespace: str = Field(default="default", pattern=DNS_LABEL, max_length=63)
    """Namespace of the claim (must exist); default: default."""
    size: str = Field(default="100Gi", pattern=r"^[0-9]+(Mi|Gi|Ti)$")
    """Requested size, e.g. 500Gi; default: 100Gi (NFS does not enforce it)."""
