"""gpufleet:cluster.k3s and a pool's hosts: k3s on your own machines, installed over SSH.

The checks that need the whole stack are in k3s_checks.py (KeyTraits.checks of platform k3s).
"""

from typing import Literal, Optional

from pydantic import Field, ValidationInfo, field_validator

from gpufleet.base.spec.base import DNS_LABEL, LABEL_VALUE, Model, check_address
from gpufleet.base.spec.features.protection import EtcdSnapshotsSpec, SecretsEncryptionSpec
from gpufleet.base.spec.features.registry import K3sAirgapSpec
from gpufleet.base.spec.text import check_san, check_url_address, check_user


class Host(Model):
    """A machine reachable over SSH (bare metal or a rented VM)."""

    name: str = Field(pattern=DNS_LABEL, max_length=63)
    """Node name in Kubernetes and in resource names (DNS label)."""
    address: str
    """IP address or DNS name gpufleet connects to over SSH; also the node's registration address."""
    user: Optional[str] = None
    """SSH user for this host; default: the cluster's `k3s.sshUser`."""
    port: int = Field(default=22, ge=1, le=65535)
    """SSH port."""
    rack: Optional[str] = Field(default=None, pattern=LABEL_VALUE, max_length=63)
    """k3s GPU hosts: the rack the machine is in (an NVL72 rack, a top-of-rack switch), written as the node label
    `gpufleet.io/topology-rack` when the host joins, for Kueue Topology Aware Scheduling (docs/topology.md). Default:
    none (the pool cannot use topology-aware placement)."""
    block: Optional[str] = Field(default=None, pattern=LABEL_VALUE, max_length=63)
    """k3s GPU hosts: the group of racks behind one spine switch, written as the node label
    `gpufleet.io/topology-block` at join. Default: none (the topology has no block level)."""
    price_per_hour: Optional[float] = Field(default=None, ge=0)
    """k3s servers and CPU agents: what this machine costs per hour (rent, or amortised hardware and power), for
    the plan's cost section; default: unpriced, so totals read "at least". GPU pool hosts (a server that is
    also a GPU host too) take the pool's `pricePerNodeHour` instead."""

    _check_address = field_validator("address")(lambda cls, v: check_address(v))
    _check_user = field_validator("user")(lambda cls, v: None if v is None else check_user(v))


class K3sSpec(Model):
    """A k3s cluster on your own hosts, installed over SSH."""

    ssh_user: str = "root"
    """SSH user on every host unless a host sets its own; commands run with sudo."""
    servers: list[Host] = Field(min_length=1)
    """Control-plane hosts: 1, or an odd number >= 3 for HA with embedded etcd."""
    agents: list[Host] = []
    """CPU worker hosts (operators, system add-ons). GPU hosts belong to node pools."""
    api_address: Optional[str] = None
    """Address agents and kubeconfig use for the API (a load balancer or VIP for HA); default: the first server."""
    tls_sans: list[str] = []
    """Extra names/addresses in the API server certificate (the API address is always included)."""
    disable: list[Literal["traefik", "servicelb", "local-storage", "metrics-server", "coredns"]] = ["traefik"]
    """Packaged k3s components not to deploy."""
    taint_servers: bool = False
    """Keep workloads off the servers (CriticalAddonsOnly taint); needs agents for system pods."""
    overhead_per_hour: Optional[float] = Field(default=None, ge=0)
    """What the cluster costs per hour beyond its hosts and the stack cannot see (the API load balancer, the NFS
    server, network, support), counted in the plan's idle floor; default: none."""
    airgap: Optional[K3sAirgapSpec] = None
    """Install k3s without internet: the binary, install script and air-gap images tarball from `source`, each checked
    against its sha256 (docs/air-gapped.md); default: none, k3s's release files from GitHub."""
    etcd_snapshots: EtcdSnapshotsSpec = EtcdSnapshotsSpec()
    secrets_encryption: SecretsEncryptionSpec = SecretsEncryptionSpec()
    """Encrypt Secrets at rest in the datastore (k3s `secrets-encryption`); default: on. Off needs a reason:
    `{enabled: false, reason: "..."}` (clusters created before it was on; docs/security.md says how to rotate the key)."""
    """HA (embedded etcd): k3s's scheduled etcd snapshots on every server, optionally copied to S3; default:
    every 6 hours, 20 kept. A single server keeps its datastore in SQLite and takes no etcd snapshots."""

    @property
    def embedded_etcd(self) -> bool:
        """Several servers run k3s's embedded etcd (the first with cluster-init); one server uses SQLite."""
        return len(self.servers) > 1

    _check_user = field_validator("ssh_user")(lambda cls, v: check_user(v))
    _check_sans = field_validator("tls_sans")(lambda cls, v: [check_san(name) for name in v])

    @field_validator("servers")
    @classmethod
    def _odd_servers(cls, servers: list[Host]) -> list[Host]:
        if len(servers) % 2 == 0:
            raise ValueError(
                f"{len(servers)} servers cannot keep etcd quorum; use 1, or an odd number >= 3 for HA"
            )
        for host in servers:
            # A server's address goes into the agents' and other servers' join URL and the API certificate.
            check_url_address(host.address)
        return servers

    @field_validator("api_address")
    @classmethod
    def _api_address(cls, v: Optional[str]) -> Optional[str]:
        return None if v is None else check_url_address(v)

    @field_validator("taint_servers")
    @classmethod
    def _taint_needs_agents(cls, v: bool, info: ValidationInfo) -> bool:
        if v and not info.data.get("agents"):
            raise ValueError("taintServers needs at least one CPU agent, or system pods have nowhere to run")
        return v
