"""gpufleet:cluster — the control plane: platform, Kubernetes version and the platform's own block."""

from typing import Literal, Optional

from pydantic import Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from gpufleet.base import platforms, versions
from gpufleet.base.spec.base import DNS_LABEL, LABEL_VALUE, Model, check_address
from gpufleet.base.spec.text import check_san, check_url_address, check_user
from gpufleet.base.spec.platforms.aks import AksSpec
from gpufleet.base.spec.platforms.eks import EksSpec
from gpufleet.base.spec.platforms.existing import ExistingSpec
from gpufleet.base.spec.platforms.gke import GkeSpec
from gpufleet.base.spec.features.protection import EtcdSnapshotsSpec, ProtectionSpec, SecretsEncryptionSpec
from gpufleet.base.spec.features.registry import K3sAirgapSpec

# Kubernetes minor versions each platform plans for, and how a miss is worded.
PLATFORM_VERSIONS = {
    "k3s": (tuple(versions.K3S_RELEASES), "has no pinned k3s release"),
    "eks": (versions.EKS_KUBERNETES_VERSIONS, "is not an EKS version gpufleet plans for"),
    "gke": (versions.GKE_KUBERNETES_VERSIONS, "is not a GKE version gpufleet plans for"),
    "aks": (versions.AKS_KUBERNETES_VERSIONS, "is not an AKS version gpufleet plans for"),
    # An existing cluster runs whatever its provider runs: any minor one of the platforms gpufleet plans for has.
    "existing": (tuple(sorted({*versions.K3S_RELEASES, *versions.EKS_KUBERNETES_VERSIONS, *versions.GKE_KUBERNETES_VERSIONS,
                               *versions.AKS_KUBERNETES_VERSIONS},
                              key=lambda v: tuple(map(int, v.split("."))))),
                 "is not a Kubernetes version gpufleet plans for"),
}
# What each platform's own block must at least say.
PLATFORM_BLOCKS = {
    "k3s": "a `k3s:` block with at least one server",
    "eks": "an `eks:` block with at least `network`",
    "gke": "a `gke:` block with at least a `region`",
    "aks": "an `aks:` block with at least a `location`",
    "existing": "an `existing:` block (it may be empty: `existing: {}`)",
}


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


class ClusterSpec(Model):
    """The control plane."""

    platform: str = Field(json_schema_extra=lambda schema: schema.update(enum=list(platforms.names())))
    """Where the control plane runs: eks | gke | aks | k3s, or existing: a cluster gpufleet does not create, reached
    through the secret `gpufleet:kubeconfig` (docs/existing-cluster.md); or a platform a plug-in registers
    (gpufleet/base/platforms)."""
    name: Optional[str] = Field(default=None, pattern=DNS_LABEL, max_length=40)
    """Cluster name and prefix of every child resource; default: the stack name. Renaming replaces the cluster."""
    kubernetes_version: str = Field(default=versions.KUBERNETES_DEFAULT, validate_default=True)
    """Kubernetes minor version, e.g. "1.34"."""
    k3s: Optional[K3sSpec] = Field(default=None, validate_default=True)
    """Required when platform is k3s."""
    eks: Optional[EksSpec] = Field(default=None, validate_default=True)
    """Required when platform is eks."""
    gke: Optional[GkeSpec] = Field(default=None, validate_default=True)
    """Required when platform is gke."""
    aks: Optional[AksSpec] = Field(default=None, validate_default=True)
    """Required when platform is aks."""
    existing: Optional[ExistingSpec] = Field(default=None, validate_default=True)
    """Required when platform is existing (may be empty: `existing: {}`): what the cluster costs beyond its pools."""
    protection: ProtectionSpec = ProtectionSpec()
    """Protect what holds state (control plane, secrets key, k3s servers and token, checkpoint claim) from
    `pulumi destroy` and replacement; default: on. Off needs a reason: `{enabled: false, reason: "..."}`."""

    @field_validator("platform")
    @classmethod
    def _known_platform(cls, v: str) -> str:
        known = platforms.names()
        if v not in known:
            quoted = [f"'{n}'" for n in known]
            # Worded as pydantic words a Literal miss, so the error shows the value as every other choice does.
            raise PydanticCustomError("literal_error", f"Input should be {', '.join(quoted[:-1])} or {quoted[-1]}")
        return v

    @field_validator("kubernetes_version")
    @classmethod
    def _version(cls, v: str, info: ValidationInfo) -> str:
        allowed, wording = PLATFORM_VERSIONS.get(info.data.get("platform"), ((), ""))
        if allowed and v not in allowed:
            raise ValueError(f"'{v}' {wording} (allowed: {', '.join(allowed)})")
        return v

    @field_validator("k3s", "eks", "gke", "aks", "existing")
    @classmethod
    def _platform_block(cls, v, info: ValidationInfo):
        if info.data.get("platform") == info.field_name and v is None:
            raise ValueError(f"platform {info.field_name} needs {PLATFORM_BLOCKS[info.field_name]}")
        return v
