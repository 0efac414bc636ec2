"""GkeGpuDirectNetwork: the extra VPCs a GPUDirect node pool's NICs attach to.

TCPX (a3-highgpu-8g) and TCPXO (a3-megagpu-8g): one VPC with one subnet per secondary NIC (4 or 8), MTU 8244
as in GKE's GPUDirect-TCPX(O) guide. RDMA (a3-ultragpu-8g, a4-highgpu-8g): one VPC for the second gVNIC and
one VPC with the zonal RoCE network profile holding one subnet per ConnectX-7 NIC. How many follows from the
machine catalog (gpufleet/base/catalog/gcp_machines.yaml), never from the user.

A new VPC denies all ingress (implied rule), so every gVNIC VPC (TCPX/TCPXO's, RDMA's gvnic one) gets an
ingress rule allowing TCP, UDP and ICMP from its own subnet: without it NCCL's traffic between nodes on the
extra NICs is dropped. The RoCE VPC gets none: RoCE VPCs take regional network firewall policies, not VPC
firewall rules, and cluster-toolkit's gpu-rdma-vpc module (Google's A3 Ultra GKE blueprint) creates none.
"""

from __future__ import annotations

import ipaddress
import itertools
from dataclasses import dataclass
from typing import Optional

import pulumi
import pulumi_gcp as gcp

from gpufleet.base.catalog.gcp import GpuDirect

INTERNAL_PROTOCOLS = (("tcp", ["0-65535"]), ("udp", ["0-65535"]), ("icmp", None))
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
    """Range carved into one block of `prefix` per subnet, in order."""
    prefix: int = 20
    """Prefix length of each subnet; default /20 as cluster-toolkit's A3 Mega blueprint (examples/gke-a3-megagpu
    `subnetwork_cidr_suffix: 20`, "the subnet can support upto 4k nodes")."""
    zone: Optional[str] = None
    """RDMA only: the zone of the RoCE network profile (the pool's single zone)."""
    first_block: int = 0
    """Index of the pool's first block in `cidr`: the GPUDirect pools before it hold the blocks below (GKE: the
    pod networks of one cluster must not overlap); default 0, the first pool."""


def subnet_ranges(cidr: str, count: int, first: int = 0, prefix: int = 20) -> list[str]:
    """`count` consecutive /`prefix` blocks of `cidr`, from block `first`."""
    blocks = list(itertools.islice(ipaddress.ip_network(cidr).subnets(new_prefix=prefix), first, first + count))
    if len(blocks) < count:
        raise ValueError(f"{cidr} has no room for {count} /{prefix} subnets from block {first}")
    return [str(b) for b in blocks]


class GkeGpuDirectNetwork(pulumi.ComponentResource):
    """Exposes `node_networks`: (network, subnetwork) pairs in NIC order for additional_node_network_configs,
    and `nics`: (nic, network, subnetwork, device mode) for the in-cluster multi-networking objects."""

    node_networks: list[tuple[pulumi.Output, pulumi.Output]]
    nics: list[tuple[str, pulumi.Output, pulumi.Output, str]]

    def __init__(self, name: str, args: GkeGpuDirectNetworkArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:gke:GkeGpuDirectNetwork", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        direct = args.gpudirect
        ranges = iter(subnet_ranges(args.cidr, direct.additional_node_networks, args.first_block, args.prefix))
        self.networks: list[gcp.compute.Network] = []
        self.subnets: list[gcp.compute.Subnetwork] = []
        self.firewalls: list[gcp.compute.Firewall] = []
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

        def subnet(role: str, vpc: gcp.compute.Network, nic: str, mode: str, firewall: bool = True) -> None:
            cidr = next(ranges)
            sub = gcp.compute.Subnetwork(
                f"{name}-{role}",
                project=args.project,
                region=args.region,
                network=vpc.id,
                ip_cidr_range=cidr,
                opts=child,
            )
            if firewall:
                # Google's GKE GPUDirect guides and cluster-toolkit's multivpc module allow all internal
                # TCP/UDP/ICMP on each extra VPC; without it the implied deny-ingress drops NCCL traffic.
                self.firewalls.append(gcp.compute.Firewall(
                    f"{name}-{role}-internal",
                    project=args.project,
                    network=vpc.id,
                    direction="INGRESS",
                    source_ranges=[cidr],
                    allows=[gcp.compute.FirewallAllowArgs(protocol=p, ports=ports) for p, ports in INTERNAL_PROTOCOLS],
                    description=f"gpufleet: GPUDirect-{direct.kind} traffic between nodes ({role})",
                    opts=child,
                ))
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
                subnet(f"rdma-sub-{i}", roce, f"rdma-{i}", "RDMA", firewall=False)
        self.register_outputs({"kind": direct.kind, "nodeNetworks": len(self.node_networks)})
