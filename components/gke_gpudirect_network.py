"""GkeGpuDirectNetwork: the extra VPCs a GPUDirect node pool's NICs attach to.

TCPX (a3-highgpu-8g) and TCPXO (a3-megagpu-8g): one VPC with one subnet per secondary NIC (4 or 8), MTU 8244
as in GKE's GPUDirect-TCPX(O) guide. RDMA (a3-ultragpu-8g, a4-highgpu-8g): one VPC for the second gVNIC and
one VPC with the zonal RoCE network profile holding one subnet per ConnectX-7 NIC. How many follows from the
machine catalog (gpufleet/catalog/gcp_machines.yaml), never from the user.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Optional

import pulumi
import pulumi_gcp as gcp

from gpufleet.catalog.gcp import GpuDirect

TCPX_MTU = 8244  # GKE GPUDirect-TCPX(O) guide: `gcloud compute networks create ... --mtu=8244`
RDMA_MTU = 8896  # VPC RDMA network profile: the largest MTU, used by GKE's A3 Ultra/A4 guide


@dataclass(frozen=True)
class GkeGpuDirectNetworkArgs:
    gpudirect: GpuDirect
    """The machine type's GPUDirect facts (kind, networks, RDMA subnets) from the catalog."""
    project: str
    """GCP project."""
    region: str
    """Region of the subnets (the cluster's)."""
    cidr: str
    """Range carved into one /24 per subnet, in order."""
    zone: Optional[str] = None
    """RDMA only: the zone of the RoCE network profile (the pool's single zone)."""


def subnet_ranges(cidr: str, count: int) -> list[str]:
    """The first `count` /24 blocks of `cidr`."""
    blocks = ipaddress.ip_network(cidr).subnets(new_prefix=24)
    return [str(next(blocks)) for _ in range(count)]


class GkeGpuDirectNetwork(pulumi.ComponentResource):
    """Exposes `node_networks`: (network, subnetwork) pairs in NIC order for additional_node_network_configs,
    and `nics`: (nic, network, subnetwork, device mode) for the in-cluster multi-networking objects."""

    node_networks: list[tuple[pulumi.Output, pulumi.Output]]
    nics: list[tuple[str, pulumi.Output, pulumi.Output, str]]

    def __init__(self, name: str, args: GkeGpuDirectNetworkArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:gke:GkeGpuDirectNetwork", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        direct = args.gpudirect
        ranges = iter(subnet_ranges(args.cidr, direct.additional_node_networks))
        self.networks: list[gcp.compute.Network] = []
        self.subnets: list[gcp.compute.Subnetwork] = []
        self.node_networks = []
        self.nics = []

        def network(role: str, mtu: int, profile: Optional[str] = None) -> gcp.compute.Network:
            vpc = gcp.compute.Network(
                f"{name}-{role}",
                project=args.project,
                auto_create_subnetworks=False,
                mtu=mtu,
                network_profile=profile,
                description=f"gpufleet: GPUDirect-{direct.kind} ({role})",
                opts=child,
            )
            self.networks.append(vpc)
            return vpc

        def subnet(role: str, vpc: gcp.compute.Network, nic: str, mode: str) -> None:
            sub = gcp.compute.Subnetwork(
                f"{name}-{role}",
                project=args.project,
                region=args.region,
                network=vpc.id,
                ip_cidr_range=next(ranges),
                opts=child,
            )
            self.subnets.append(sub)
            self.node_networks.append((vpc.name, sub.name))
            self.nics.append((nic, vpc.name, sub.name, mode))

        if direct.kind in ("TCPX", "TCPXO"):
            for i in range(direct.networks):
                subnet(f"sub-{i}", network(f"net-{i}", TCPX_MTU), f"vpc-{i}", "NetDevice")
        else:
            subnet("gvnic-sub", network("gvnic-net", RDMA_MTU), "gvnic", "NetDevice")
            profile = f"projects/{args.project}/global/networkProfiles/{args.zone}-vpc-roce"
            roce = network("rdma-net", RDMA_MTU, profile)
            for i in range(direct.rdma_subnets):
                subnet(f"rdma-sub-{i}", roce, f"rdma-{i}", "RDMA")
        self.register_outputs({"kind": direct.kind, "nodeNetworks": len(self.node_networks)})
