"""What every platform module provides: `build(name, inputs, opts) -> PlatformBuild`.

A platform module (components/<platform>/platform.py) creates the control plane and one component per
GPU pool; GpuCluster then adds the add-ons on the resulting ClusterAccess. Modules are imported by name
so a stack loads only its own platform's SDK.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional

import pulumi

from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.base.spec import StackSpec

if TYPE_CHECKING:
    from gpufleet.components.workloads.keda import KedaPodIdentity

MODULES = {
    "k3s": "gpufleet.components.k3s.platform",
    "eks": "gpufleet.components.eks.platform",
    "gke": "gpufleet.components.gke.platform",
}


@dataclass(frozen=True)
class PlatformInputs:
    spec: StackSpec
    """The validated stack spec."""
    ssh_private_key: Optional[pulumi.Input[str]] = None
    """k3s: SSH private key for the hosts (a secret config value)."""
    etcd_s3_access_key: Optional[pulumi.Input[str]] = None
    """k3s: access key of the etcd snapshot bucket (secret config `gpufleet:etcdS3AccessKey`), when snapshots go to S3."""
    etcd_s3_secret_key: Optional[pulumi.Input[str]] = None
    """k3s: secret key of the etcd snapshot bucket (secret config `gpufleet:etcdS3SecretKey`)."""


@dataclass(frozen=True)
class PlatformBuild:
    control_plane: pulumi.ComponentResource
    access: ClusterAccess
    node_pools: list[pulumi.ComponentResource] = field(default_factory=list)
    install_gpu_operator: bool = True
    """False when the platform runs its own GPU stack (GKE's managed driver and device plugin)."""
    prometheus_query_url: Optional[pulumi.Input[str]] = None
    """The platform's managed Prometheus query address (amp: the workspace's query endpoint; gke-managed: Managed
    Service for Prometheus's query API), for KEDA's `prometheusServerAddress`; None without one."""
    keda_identity: Optional["KedaPodIdentity"] = None
    """With KEDA on a managed Prometheus: the cloud identity the platform made for KEDA's operator to query it."""


def build(platform: str, name: str, inputs: PlatformInputs, opts: pulumi.ResourceOptions) -> PlatformBuild:
    return importlib.import_module(MODULES[platform]).build(name, inputs, opts)
