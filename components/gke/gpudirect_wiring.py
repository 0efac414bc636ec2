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


@dataclass(frozen=True)
class GkeGpuDirectWiringArgs:
    pools: list[GpuDirectPool]
    """Every GPUDirect pool of the cluster."""


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
        self.manifests = []
        for kind in sorted({p.kind for p in args.pools}):
            for role, url in versions.GKE_GPUDIRECT_MANIFESTS.get(kind, {}).items():
                self.manifests.append(k8s.yaml.v2.ConfigFile(f"{name}-{kind.lower()}-{role}", file=url, opts=child))
        self.register_outputs({"networks": [f"{p.pool}-{nic[0]}" for p in args.pools for nic in p.nics]})
