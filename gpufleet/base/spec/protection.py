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

from typing import Optional

from pydantic import Field, field_validator, model_validator

from gpufleet.base.spec.base import Model, check_address

# AWS tag values hold at most 256 characters; the reason is tagged on EKS resources.
REASON_MAX = 200
# A five-field cron spec (k3s parses it with robfig/cron's standard parser).
_CRON_FIELDS = 5


def _reason(value: Optional[str]) -> Optional[str]:
    if value is None:
        return None
    value = value.strip()
    if not value:
        raise ValueError("an empty reason is no reason: say why, e.g. 'ephemeral CI cluster, rebuilt nightly'")
    if "\n" in value or len(value) > REASON_MAX:
        raise ValueError(f"one line of at most {REASON_MAX} characters (it is tagged on the resources)")
    return value


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
        if not self.enabled and not self.reason:
            raise ValueError("protection `enabled: false` needs a `reason` (it is shown wherever the stack is judged)")
        if self.enabled and self.reason:
            raise ValueError("`reason` explains turning protection off; remove it or set `enabled: false`")
        return self


class EtcdS3Spec(Model):
    """An S3-compatible bucket k3s copies every etcd snapshot to (credentials: secret config keys
    `gpufleet:etcdS3AccessKey` and `gpufleet:etcdS3SecretKey`)."""

    bucket: str = Field(min_length=3, max_length=63)
    """Bucket name."""
    endpoint: str = "s3.amazonaws.com"
    """S3 endpoint host (k3s `etcd-s3-endpoint`); default: AWS S3, as k3s's own default."""
    region: str = "us-east-1"
    """Bucket region (k3s `etcd-s3-region`); default: us-east-1, as k3s's own default."""
    folder: Optional[str] = None
    """Folder (key prefix) inside the bucket (k3s `etcd-s3-folder`); default: the bucket's root."""

    @field_validator("endpoint")
    @classmethod
    def _endpoint(cls, v: str) -> str:
        host, _, port = v.partition(":")
        if "://" in v:
            raise ValueError(f"'{v}': give the host (and :port), without a scheme, e.g. minio.example.com:9000")
        check_address(host)
        if port and not port.isdigit():
            raise ValueError(f"'{v}': the port must be a number")
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

    @field_validator("schedule_cron")
    @classmethod
    def _cron(cls, v: str) -> str:
        if len(v.split()) != _CRON_FIELDS:
            raise ValueError(f"'{v}' is not a 5-field cron spec (minute hour day month weekday), e.g. '0 */6 * * *'")
        return v

    @model_validator(mode="after")
    def _reason_when_off(self) -> "EtcdSnapshotsSpec":
        if not self.enabled and not self.reason:
            raise ValueError("etcd snapshots `enabled: false` needs a `reason`: without snapshots, losing a quorum of servers loses the cluster")
        return self
