"""k3s: keys traits (gpufleet/base/platforms/contract/keys.py says what each one means)."""

from __future__ import annotations

from typing import Any, Mapping

from gpufleet.base.platforms.contract.keys import KeyTraits, SecretKey
from gpufleet.base.spec.platforms import k3s_checks


def _etcd_to_s3(cluster: Mapping[str, Any]) -> bool:
    """cluster.k3s.etcdSnapshots.s3 is set: the snapshots are copied to a bucket."""
    k3s = cluster.get("k3s")
    snapshots = k3s.get("etcdSnapshots") if isinstance(k3s, dict) else None
    return isinstance(snapshots, dict) and bool(snapshots.get("s3"))


def _etcd_s3_key(key: str, what: str, argument: str) -> SecretKey:
    return SecretKey(
        key, f"k3s: {what} of the etcd snapshot bucket (cluster.k3s.etcdSnapshots.s3), secret only", argument,
        required=f"required by cluster.k3s.etcdSnapshots.s3: set it with `pulumi config set --secret gpufleet:{key}`",
        needed=_etcd_to_s3, unused="not used: cluster.k3s.etcdSnapshots.s3 is not set")


class K3sKeys(KeyTraits):
    block = "a `k3s:` block with at least one server"
    secrets = (
        SecretKey("sshPrivateKey", "SSH private key for k3s hosts (set with `pulumi config set --secret`)", "ssh_private_key",
                  required="required for k3s: set it with `pulumi config set --secret gpufleet:sshPrivateKey < "
                           "~/.ssh/id_ed25519`"),
        _etcd_s3_key("etcdS3AccessKey", "access key", "etcd_s3_access_key"),
        _etcd_s3_key("etcdS3SecretKey", "secret key", "etcd_s3_secret_key"),
        # Pull credentials are written only into k3s nodes' registries.yaml (components/k3s/cluster.py); whether the
        # stack needs the password is the registry's check (registry.username, spec/features/registry_checks.py).
        SecretKey("registryPassword", "k3s: password of the registry mirror's user (registry.username), secret only",
                  "registry_password", plain_elsewhere=True),
    )
    # AMD Instinct pools exist on k3s only (amd_gpus.yaml).
    catalog_files = ("amd",)

    def checks(self, stack: str, spec: Any, config: dict) -> list:
        """Hosts, pools sized by their hosts, servers that are GPU hosts, kubelet labels, addresses (k3s_checks.py)."""
        return k3s_checks.check(stack, spec, config)
