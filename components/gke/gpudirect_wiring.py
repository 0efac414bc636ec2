"""GkeGpuDirectWiring: what pods need to use a GPUDirect pool's extra NICs, on the cluster's Kubernetes provider.

Per NIC: a GKENetworkParamSet (VPC, subnet, device mode) and a Network of type Device, the GKE
multi-networking objects pods name in their `networking.gke.io/interfaces` annotation (object names:
`<pool>-<nic>`). Per GPUDirect kind in the cluster: the NCCL plugin installer manifests pinned in
gpufleet/base/versions.py (GKE_GPUDIRECT_MANIFESTS), applied by the Kubernetes provider at deploy time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pulumi
import pulumi_kubernetes as k8s

from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.base import versions

GROUP = "networking.gke.io"


@dataclass(frozen=True)
class GpuDirectPool:
    pool: str
    """Pool name (prefix of the Network objects)."""
    kind: str
    """TCPX | TCPXO | RDMA."""
    nics: list
    """(nic name, network name, subnetwork name, device mode) per extra NIC, in order."""
    manifests: str = ""
    """The key of its NCCL plugin installer manifests in versions.GKE_GPUDIRECT_MANIFESTS; default: `kind` (A4X:
    RDMA-a4x, the arm64 gIB plugin)."""


@dataclass(frozen=True)
class GkeGpuDirectWiringArgs:
    pools: list[GpuDirectPool]
    """Every GPUDirect pool of the cluster."""


def installer_manifests(pools: list[GpuDirectPool]) -> list[tuple[str, str, str]]:
    """(manifests key, role, pinned URL) of the NCCL plugin installers the pools need, once per key in key order: the
    kind's (TCPX, TCPXO, RDMA), or the machine's own (RDMA-a4x: the arm64 gIB plugin on A4X)."""
    return [(key, role, url) for key in sorted({p.manifests or p.kind for p in pools})
            for role, url in versions.GKE_GPUDIRECT_MANIFESTS.get(key, {}).items()]


class GkeGpuDirectWiring(pulumi.ComponentResource):
    """`gpufleet:gke:GkeGpuDirectWiring`: what pods need to use GPUDirect pools' extra NICs, on the cluster's
    Kubernetes provider: per NIC a GKENetworkParamSet and a Network (`<pool>-<nic>`), per GPUDirect kind the
    pinned NCCL plugin installer."""

    def __init__(self, name: str, args: GkeGpuDirectWiringArgs, access: ClusterAccess, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:gke:GkeGpuDirectWiring", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, provider=access.provider, depends_on=access.ready or [])
        self.networks: list[k8s.apiextensions.CustomResource] = []
        for pool in args.pools:
            for nic, vpc, subnet, mode in pool.nics:
                object_name = f"{pool.pool}-{nic}"
                params = k8s.apiextensions.CustomResource(
                    f"{name}-{object_name}-params",
                    api_version=f"{GROUP}/v1",
                    kind="GKENetworkParamSet",
                    metadata={"name": object_name},
                    spec={"vpc": vpc, "vpcSubnet": subnet, "deviceMode": mode},
                    opts=child,
                )
                self.networks.append(k8s.apiextensions.CustomResource(
                    f"{name}-{object_name}-network",
                    api_version=f"{GROUP}/v1",
                    kind="Network",
                    metadata={"name": object_name},
                    spec={"type": "Device", "parametersRef": {"group": GROUP, "kind": "GKENetworkParamSet", "name": object_name}},
                    opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[params])),
                ))
        self.manifests = [k8s.yaml.v2.ConfigFile(f"{name}-{key.lower()}-{role}", file=url, opts=child)
                          for key, role, url in installer_manifests(args.pools)]
        self.register_outputs({"networks": [f"{p.pool}-{nic[0]}" for p in args.pools for nic in p.nics]})
