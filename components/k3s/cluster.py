"""K3sCluster: k3s servers (one, or an odd number with embedded etcd) and CPU agents over SSH."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import pulumi
import pulumi_command as command
import pulumi_kubernetes as k8s
import pulumi_random as random

from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.components.known import known
from gpufleet.components.k3s.install import (
    AS_ROOT, KUBECONFIG_PATH, etcd_s3_credentials, etcd_snapshot_settings, node_scripts, registries_config,
    rewrite_kubeconfig, server_url as api_url, stdin_text,
)
from gpufleet.base.labels import SECURE_DEFAULTS_POLICY, exempt_key
from gpufleet.components.protection import protect, script_exemption
from gpufleet.base.spec import Host, K3sSpec
from gpufleet.base.spec.features.protection import ProtectionSpec
from gpufleet.base.spec.features.registry import K3sAirgapSpec

# Where k3s keeps containerd's config and socket; the GPU Operator's toolkit must be told
# (NVIDIA/gpu-operator issues 238, 473, 1651).
CONTAINERD_CONFIG = "/var/lib/rancher/k3s/agent/etc/containerd/config.toml"
CONTAINERD_SOCKET = "/run/k3s/containerd/containerd.sock"
# Where k3s's containerd looks for CNI plugins and their configs (docs.k3s.io/networking/multus-ipams: a fixed
# bin directory since the October 2024 releases); Multus and the CNI plugins must be installed there.
CNI_BIN_DIR = "/var/lib/rancher/k3s/data/cni"
CNI_CONF_DIR = "/var/lib/rancher/k3s/agent/etc/cni/net.d"


@dataclass(frozen=True)
class K3sJoin:
    """What an agent needs to join the cluster."""

    server_url: str
    token: pulumi.Output
    kubernetes_version: str
    ssh_user: str
    ssh_private_key: pulumi.Output
    servers: list[pulumi.Resource]
    server_names: frozenset[str] = frozenset()
    """Hosts that run a k3s server: a pool listing one of them does not join it again as an agent."""
    airgap: Optional[K3sAirgapSpec] = None
    """Install k3s from the stack's verified air-gap files (K3sSpec.airgap); default: from GitHub."""
    registries: Optional[pulumi.Output] = None
    """registries.yaml of every node (a secret Output of a dict: it may hold the mirror's password); default: none."""


@dataclass(frozen=True)
class K3sClusterArgs:
    spec: K3sSpec
    """The k3s block of the stack spec (servers, CPU agents, API address, flags)."""
    kubernetes_version: str
    """Kubernetes minor version; picks the pinned k3s release."""
    ssh_private_key: pulumi.Input[str]
    """SSH private key for every host (from a secret config value)."""
    local_storage_path: Optional[str] = None
    """Directory of k3s's local-path volumes on every node (`default-local-storage-path`); default: k3s's own."""
    protection: ProtectionSpec = ProtectionSpec()
    """Protect the servers (etcd/SQLite lives on them) and the join token; default: on."""
    etcd_s3_access_key: Optional[pulumi.Input[str]] = None
    """Access key of the etcd snapshot bucket (spec.etcd_snapshots.s3; a secret config value)."""
    etcd_s3_secret_key: Optional[pulumi.Input[str]] = None
    """Secret key of the etcd snapshot bucket (a secret config value)."""
    registry_mirror: Optional[str] = None
    """gpufleet:registry.mirror: every node's /etc/rancher/k3s/registries.yaml points at it; default: none."""
    registry_username: Optional[str] = None
    """The mirror's user (registry.username); default: anonymous."""
    registry_password: Optional[pulumi.Input[str]] = None
    """The mirror's password (the secret config value gpufleet:registryPassword)."""
    gpu_servers: dict[str, tuple[dict[str, str], list[str]]] = field(default_factory=dict)
    """Servers that are also GPU hosts of a pool (a one-machine cluster): host name -> (node labels, node taints
    as key=value:Effect) the server registers with. Default: none."""


def connection(host: Host, default_user: str, private_key: pulumi.Input[str]) -> command.remote.ConnectionArgs:
    return command.remote.ConnectionArgs(
        host=host.address, port=host.port, user=host.user or default_user, private_key=private_key
    )


def agent_command(
    name: str, host: Host, join: K3sJoin, labels: dict[str, str], taints: list[str], parent: pulumi.Resource
) -> command.remote.Command:
    """One k3s agent joined to the cluster with its labels and taints (applied when it registers)."""
    settings = {
        "server": join.server_url,
        "node-name": host.name,
        "node-label": [f"{k}={v}" for k, v in sorted(labels.items())],
        "node-taint": taints,
    }
    scripts = node_scripts("agent", join.kubernetes_version, host.name, airgap=join.airgap,
                           registries=join.registries is not None)
    stdin = pulumi.Output.all(join.token, join.registries).apply(
        lambda v: stdin_text({**settings, "token": v[0]}, v[1]))
    return command.remote.Command(
        name,
        connection=connection(host, join.ssh_user, join.ssh_private_key),
        create=scripts.create,
        update=scripts.create,
        delete=scripts.delete,
        stdin=pulumi.Output.secret(stdin),
        opts=pulumi.ResourceOptions(parent=parent, depends_on=join.servers),
    )


def node_facts() -> dict[str, str]:
    """What add-ons must know of a k3s node (ClusterAccess.facts): k3s's own containerd and CNI paths."""
    return {
        "containerd_config": CONTAINERD_CONFIG,
        "containerd_socket": CONTAINERD_SOCKET,
        "cni_bin_dir": CNI_BIN_DIR,
        "cni_conf_dir": CNI_CONF_DIR,
    }


class K3sCluster(pulumi.ComponentResource):
    """A k3s control plane on your hosts; exposes `access` (kubeconfig, provider) and `join` for node pools."""

    access: ClusterAccess
    join: K3sJoin

    def __init__(self, name: str, args: K3sClusterArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:k3s:K3sCluster", name, None, opts)
        spec = args.spec
        key = pulumi.Output.secret(args.ssh_private_key)
        api_address = spec.api_address or spec.servers[0].address
        server_url = api_url(api_address)

        # The join token is generated once and stays in state (RandomPassword results are secret). protect: a new
        # token cannot join the existing servers, and restoring an etcd snapshot needs the token it was taken with.
        self.token = random.RandomPassword(
            f"{name}-token", length=48, special=False, opts=protect(args.protection, parent=self)
        )

        snapshots = spec.etcd_snapshots
        s3_credentials = None
        if spec.embedded_etcd and snapshots.enabled and snapshots.s3 is not None:
            if args.etcd_s3_access_key is None or args.etcd_s3_secret_key is None:
                raise ValueError(f"{name}: etcd snapshots to S3 need etcd_s3_access_key and etcd_s3_secret_key")
            s3_credentials = pulumi.Output.all(args.etcd_s3_access_key, args.etcd_s3_secret_key).apply(
                lambda keys: etcd_s3_credentials(keys[0], keys[1])
            )
        registries = None
        if args.registry_mirror:
            registries = pulumi.Output.secret(pulumi.Output.from_input(args.registry_password or "").apply(
                lambda pw: registries_config(args.registry_mirror, args.registry_username, pw or None)))
        unprotected = [] if args.protection.enabled else [args.protection.reason]
        if spec.embedded_etcd and not snapshots.enabled:
            unprotected.append(snapshots.reason)
        encryption = spec.secrets_encryption
        scripts = node_scripts(
            "server",
            args.kubernetes_version,
            etcd_snapshots=etcd_snapshot_settings(snapshots) if spec.embedded_etcd else None,
            header=script_exemption(*unprotected)
            + script_exemption(encryption.reason, key=exempt_key(SECURE_DEFAULTS_POLICY)),
            secrets_encryption=encryption.enabled,
            airgap=spec.airgap,
            registries=registries is not None,
        )
        tls_sans = sorted({api_address, *spec.tls_sans})
        servers: list[command.remote.Command] = []
        for i, host in enumerate(spec.servers):
            settings: dict = {
                "node-name": host.name,
                "tls-san": tls_sans,
                "disable": list(spec.disable),
                "write-kubeconfig-mode": "0600",
            }
            if len(spec.servers) > 1:
                # HA: the first server starts embedded etcd, the others join it one at a time.
                if i == 0:
                    settings["cluster-init"] = True
                else:
                    settings["server"] = api_url(spec.servers[0].address)
            if args.local_storage_path:
                settings["default-local-storage-path"] = args.local_storage_path
            if spec.taint_servers:
                settings["node-taint"] = ["CriticalAddonsOnly=true:NoExecute"]
            if host.name in args.gpu_servers:
                labels, taints = args.gpu_servers[host.name]
                settings["node-label"] = [f"{k}={v}" for k, v in sorted(labels.items())]
                if taints:
                    settings["node-taint"] = list(taints)
            stdin = pulumi.Output.all(self.token.result, s3_credentials, registries).apply(
                lambda v, s=settings: stdin_text({**s, **(v[1] or {}), "token": v[0]}, v[2])
            )
            servers.append(
                command.remote.Command(
                    f"{name}-server-{host.name}",
                    connection=connection(host, spec.ssh_user, key),
                    create=scripts.create,
                    update=scripts.create,
                    delete=scripts.delete,
                    stdin=pulumi.Output.secret(stdin),
                    # protect: deleting or replacing a server runs k3s's uninstall script, which removes its data
                    # directory (the datastore, and on an HA cluster its etcd member and local snapshots). Agents stay
                    # unprotected: they hold no cluster state, and removing a host from a pool must just work.
                    opts=protect(args.protection, parent=self, depends_on=servers[-1:]),
                )
            )

        self.join = K3sJoin(
            server_url=server_url,
            token=self.token.result,
            kubernetes_version=args.kubernetes_version,
            ssh_user=spec.ssh_user,
            ssh_private_key=key,
            servers=list(servers),
            server_names=frozenset(h.name for h in spec.servers),
            airgap=spec.airgap,
            registries=registries,
        )
        self.agents = [
            agent_command(f"{name}-agent-{host.name}", host, self.join, {}, [], self) for host in spec.agents
        ]

        read = command.remote.Command(
            f"{name}-kubeconfig",
            connection=connection(spec.servers[0], spec.ssh_user, key),
            create=f"{AS_ROOT}\nsudo cat {KUBECONFIG_PATH}",
            # Read it again when the first server is replaced (its CA and credentials change).
            triggers=[servers[0].id],
            # The provider streams stdout to the update log even when it is a secret output (pulumi/pulumi-command#401):
            # the kubeconfig holds the admin client key.
            logging=command.remote.Logging.NONE,
            opts=pulumi.ResourceOptions(parent=self, depends_on=servers, additional_secret_outputs=["stdout"]),
        )
        kubeconfig = pulumi.Output.secret(read.stdout.apply(known(lambda text: rewrite_kubeconfig(text, api_address))))
        self._finish(name, args, server_url, kubeconfig, ready=[*servers, *self.agents])

    def _finish(
        self, name: str, args: K3sClusterArgs, server_url: str, kubeconfig: pulumi.Output, ready: list
    ) -> None:
        """`<name>-k8s` (the provider on `kubeconfig`), `access`, outputs."""
        self.kubeconfig = kubeconfig
        self.provider = k8s.Provider(
            f"{name}-k8s", kubeconfig=self.kubeconfig, opts=pulumi.ResourceOptions(parent=self)
        )
        self.access = ClusterAccess(
            name=name,
            platform="k3s",
            kubernetes_version=args.kubernetes_version,
            kubeconfig=self.kubeconfig,
            provider=self.provider,
            facts=node_facts(),
            ready=ready,
        )
        self.register_outputs({"kubeconfig": self.kubeconfig, "serverUrl": server_url})
