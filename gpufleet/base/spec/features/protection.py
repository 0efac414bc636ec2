"""Data safety settings: protection of what holds state, and k3s etcd snapshots.

`gpufleet:cluster.protection` says whether the stack's stateful resources (the control plane, the KMS key
of its secrets, the k3s servers and join token, the checkpoint claim) are protected from `pulumi destroy`
and from replacement. It is on by default; turning it off needs a reason, which gpufleet carries onto the
resources as the `stateful-resource-protection` exemption so the policy pack shows why.

`gpufleet:cluster.k3s.etcdSnapshots` configures k3s's own scheduled snapshots of the embedded etcd
(HA clusters), to the servers' disks and optionally to S3-compatible storage. Keys and defaults are k3s's
(`k3s server` flags etcd-snapshot-schedule-cron, etcd-snapshot-retention, etcd-s3-*: docs.k3s.io/cli/etcd-snapshot
and pkg/cli/cmds/server.go in k3s-io/k3s).
"""

import re
from typing import Optional

from pydantic import Field, field_validator, model_validator

from gpufleet.base.spec.base import Model
from gpufleet.base.spec.cron import check_cron
from gpufleet.base.spec.text import check_url_address

# S3 general purpose bucket naming rules (docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html):
# 3-63 characters, lowercase letters, digits, '.' and '-', beginning and ending with a letter or digit. MinIO and
# other S3-compatible stores follow them.
S3_BUCKET = r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$"
S3_REGION = re.compile(r"[A-Za-z0-9_-]{1,64}")
# A key prefix of the "safe characters" of S3 object keys (docs.aws.amazon.com/AmazonS3/latest/userguide/
# object-keys.html: alphanumerics, '!', '-', '_', '.', '*', "'", '(', ')' and '/'), less those a shell reads.
S3_FOLDER = re.compile(r"[A-Za-z0-9._-]+(?:/[A-Za-z0-9._-]+)*")
_ENDPOINT = re.compile(r"(?P<host>\[[0-9A-Fa-f:.]+\]|[^:\[\]]+)(?::(?P<port>\d{1,5}))?")


def _fullmatch(pattern: re.Pattern, value: str, what: str) -> str:
    if not pattern.fullmatch(value):
        raise ValueError(f"'{value}' is not {what}")
    return value


def _folder(value: str) -> str:
    _fullmatch(S3_FOLDER, value, "a key prefix: letters, digits, '.', '_' and '-' in '/'-separated parts")
    if any(part in (".", "..") for part in value.split("/")):
        raise ValueError(f"'{value}': '.' and '..' are not folder names")
    return value

# AWS tag values hold at most 256 characters; the reason is tagged on EKS resources.
REASON_MAX = 200


def _reason(value: Optional[str]) -> Optional[str]:
    if value is None:
        return None
    value = value.strip()
    if not value:
        raise ValueError("an empty reason is no reason: say why, e.g. 'ephemeral CI cluster, rebuilt nightly'")
    if "\n" in value or len(value) > REASON_MAX:
        raise ValueError(f"one line of at most {REASON_MAX} characters (it is tagged on the resources)")
    return value


def _reason_iff_off(block: "ProtectionSpec | SecretsEncryptionSpec", what: str) -> None:
    """A switch that is off needs a reason, and only an off switch has one."""
    if not block.enabled and not block.reason:
        raise ValueError(f"{what} `enabled: false` needs a `reason` (it is shown wherever the stack is judged)")
    if block.enabled and block.reason:
        raise ValueError(f"`reason` explains turning {what} off; remove it or set `enabled: false`")


class ProtectionSpec(Model):
    """Protection of the stack's stateful resources from `pulumi destroy` and replacement."""

    enabled: bool = True
    """Protect the control plane, the KMS key of its secrets, k3s servers and join token and the checkpoint claim
    (Pulumi `protect`, plus the cloud's deletion protection where it has one); default: on. `pulumi destroy`
    then stops at them: set `enabled: false` with a `reason` and run `pulumi up` first."""
    reason: Optional[str] = None
    """Why this stack's stateful resources are not protected (required with `enabled: false`); shown by the
    policy pack as the exemption from `stateful-resource-protection`."""

    _check_reason = field_validator("reason")(lambda cls, v: _reason(v))

    @model_validator(mode="after")
    def _reason_when_off(self) -> "ProtectionSpec":
        _reason_iff_off(self, "protection")
        return self


class SecretsEncryptionSpec(Model):
    """k3s encryption of Secrets at rest (`k3s server --secrets-encryption`, docs.k3s.io/security/secrets-encryption):
    on first start the server generates an AES-CBC key and an EncryptionConfiguration for the API server."""

    enabled: bool = True
    """Encrypt Secrets in the datastore; default: on. k3s cannot turn it on for a server that first started without
    it ("Starting K3s without encryption and enabling it at a later time is currently not supported",
    docs.k3s.io/cli/secrets-encrypt): clusters created before gpufleet turned it on set `enabled: false` with a
    `reason` (the install script stops with that advice rather than restart such a server with the flag)."""
    reason: Optional[str] = None
    """Why this cluster's Secrets are not encrypted at rest (required with `enabled: false`); shown by the policy
    pack as the exemption from `secure-defaults`."""

    _check_reason = field_validator("reason")(lambda cls, v: _reason(v))

    @model_validator(mode="after")
    def _reason_when_off(self) -> "SecretsEncryptionSpec":
        _reason_iff_off(self, "secrets encryption")
        return self


class EtcdS3Spec(Model):
    """An S3-compatible bucket k3s copies every etcd snapshot to (credentials: secret config keys
    `gpufleet:etcdS3AccessKey` and `gpufleet:etcdS3SecretKey`)."""

    bucket: str = Field(pattern=S3_BUCKET, min_length=3, max_length=63)
    """Bucket name (S3's naming rules: 3-63 lowercase letters, digits, '.' and '-')."""
    endpoint: str = "s3.amazonaws.com"
    """S3 endpoint host (k3s `etcd-s3-endpoint`); default: AWS S3, as k3s's own default."""
    region: str = "us-east-1"
    """Bucket region (k3s `etcd-s3-region`); default: us-east-1, as k3s's own default."""
    folder: Optional[str] = None
    """Folder (key prefix) inside the bucket (k3s `etcd-s3-folder`); default: the bucket's root."""

    _check_region = field_validator("region")(lambda cls, v: _fullmatch(S3_REGION, v, "a region name: letters, digits, '-' and '_'"))
    _check_folder = field_validator("folder")(lambda cls, v: None if v is None else _folder(v))

    @field_validator("endpoint")
    @classmethod
    def _endpoint(cls, v: str) -> str:
        if "://" in v:
            raise ValueError(f"'{v}': give the host (and :port), without a scheme, e.g. minio.example.com:9000")
        match = _ENDPOINT.fullmatch(v)
        if not match:
            raise ValueError(f"'{v}' is not host, host:port or [IPv6]:port")
        host = match.group("host")
        check_url_address(host[1:-1] if host.startswith("[") else host)
        if host.startswith("[") is (":" not in host):
            raise ValueError(f"'{v}': an IPv6 address is written in brackets, e.g. [2001:db8::5]:9000; nothing else is")
        port = match.group("port")
        if port is not None and not 1 <= int(port) <= 65535:
            raise ValueError(f"'{v}': the port must be 1-65535")
        return v


class EtcdSnapshotsSpec(Model):
    """k3s scheduled snapshots of the embedded etcd (servers of an HA cluster; a single server keeps SQLite)."""

    enabled: bool = True
    """Take scheduled snapshots; default: on. Off (k3s `etcd-disable-snapshots`) needs a `reason`."""
    schedule_cron: str = "0 */6 * * *"
    """When to snapshot, a 5-field cron spec in the servers' time (k3s `etcd-snapshot-schedule-cron`); default:
    every 6 hours (k3s's own default is every 12)."""
    retention: int = Field(default=20, ge=1, le=1000)
    """Snapshots kept per server, and in S3 (k3s `etcd-snapshot-retention`); default: 20 (5 days at every 6 hours)."""
    s3: Optional[EtcdS3Spec] = None
    """Also copy every snapshot to S3-compatible storage (survives losing the servers' disks); default: none."""
    reason: Optional[str] = None
    """Why an embedded-etcd cluster takes no snapshots (required with `enabled: false`)."""

    _check_reason = field_validator("reason")(lambda cls, v: _reason(v))

    _check_cron = field_validator("schedule_cron")(lambda cls, v: check_cron(v))

    @model_validator(mode="after")
    def _reason_when_off(self) -> "EtcdSnapshotsSpec":
        if not self.enabled and not self.reason:
            raise ValueError("etcd snapshots `enabled: false` needs a `reason`: without snapshots, losing a quorum of servers loses the cluster")
        return self
