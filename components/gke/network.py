"""GkeNetwork: the cluster's VPC, a subnet with pod and service ranges, a Cloud Router and Cloud NAT
(private nodes have no external IPs), and for a regional serving Gateway the region's proxy-only subnet; or an
existing network, passed through."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pulumi
import pulumi_gcp as gcp

from gpufleet.base.spec import GkeSpec

PODS_RANGE = "pods"
SERVICES_RANGE = "services"


@dataclass(frozen=True)
class GkeNetworkArgs:
    spec: GkeSpec
    """The gke block (network settings and region)."""
    project: str
    """GCP project of every resource."""
    proxy_only_subnet: bool = False
    """Create the region's proxy-only subnet (purpose REGIONAL_MANAGED_PROXY, role ACTIVE) of `network.proxyOnlyCidr`,
    which a regional Gateway class's load balancer needs (gpufleet/base/spec/features/serving.py REGIONAL_PROXY_CLASSES);
    default: none (created network only)."""


@dataclass(frozen=True)
class GkeNetworkRef:
    """What the cluster and storage read from the network."""

    network: pulumi.Input[str]
    subnetwork: pulumi.Input[str]
    network_name: pulumi.Input[str]
    pods_range_name: str
    services_range_name: str


class GkeNetwork(pulumi.ComponentResource):
    """`gpufleet:gke:GkeNetwork`: the cluster's VPC (`<name>-vpc`), a subnet with pod and service ranges
    (`<name>-subnet`), a Cloud Router and Cloud NAT (`<name>-router`, `<name>-nat`: private nodes have no
    external IPs) and for a regional serving Gateway the proxy-only subnet; or an existing network, passed
    through."""

    ref: GkeNetworkRef

    def __init__(self, name: str, args: GkeNetworkArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:gke:GkeNetwork", name, None, opts)
        spec, net = args.spec, args.spec.network
        child = pulumi.ResourceOptions(parent=self)
        self.vpc = self.subnet = self.router = self.nat = self.proxy_only = None
        if net.existing is not None:
            existing = net.existing
            self.ref = GkeNetworkRef(
                network=existing.network,
                subnetwork=existing.subnetwork,
                network_name=existing.network.rsplit("/", 1)[-1],
                pods_range_name=existing.pods_range_name,
                services_range_name=existing.services_range_name,
            )
            self.register_outputs({"network": existing.network, "subnetwork": existing.subnetwork})
            return

        self.vpc = gcp.compute.Network(
            f"{name}-vpc",
            project=args.project,
            auto_create_subnetworks=False,
            routing_mode="REGIONAL",
            description="gpufleet: GKE cluster network",
            opts=child,
        )
        self.subnet = gcp.compute.Subnetwork(
            f"{name}-subnet",
            project=args.project,
            region=spec.region,
            network=self.vpc.id,
            ip_cidr_range=net.subnet_cidr,
            private_ip_google_access=True,
            secondary_ip_ranges=[
                gcp.compute.SubnetworkSecondaryIpRangeArgs(range_name=PODS_RANGE, ip_cidr_range=net.pods_cidr),
                gcp.compute.SubnetworkSecondaryIpRangeArgs(range_name=SERVICES_RANGE, ip_cidr_range=net.services_cidr),
            ],
            opts=child,
        )
        if args.proxy_only_subnet:
            # The Envoy proxies of every regional load balancer in this VPC and region take their addresses here: one
            # ACTIVE REGIONAL_MANAGED_PROXY subnet per network and region (docs.cloud.google.com/load-balancing/docs/
            # proxy-only-subnets). Only range, purpose and role are set, as that page's "Create a proxy-only subnet"
            # command gives them (`--purpose=REGIONAL_MANAGED_PROXY --role=ACTIVE --region --network --range`).
            self.proxy_only = gcp.compute.Subnetwork(
                f"{name}-proxy-only",
                project=args.project,
                region=spec.region,
                network=self.vpc.id,
                ip_cidr_range=net.proxy_only_cidr,
                purpose="REGIONAL_MANAGED_PROXY",
                role="ACTIVE",
                opts=child,
            )
        if net.cloud_nat:
            self.router = gcp.compute.Router(
                f"{name}-router", project=args.project, region=spec.region, network=self.vpc.id, opts=child
            )
            self.nat = gcp.compute.RouterNat(
                f"{name}-nat",
                project=args.project,
                region=spec.region,
                router=self.router.name,
                nat_ip_allocate_option="AUTO_ONLY",
                source_subnetwork_ip_ranges_to_nat="ALL_SUBNETWORKS_ALL_IP_RANGES",
                log_config=gcp.compute.RouterNatLogConfigArgs(enable=True, filter="ERRORS_ONLY"),
                opts=child,
            )
        self.ref = GkeNetworkRef(
            network=self.vpc.id,
            subnetwork=self.subnet.id,
            network_name=self.vpc.name,
            pods_range_name=PODS_RANGE,
            services_range_name=SERVICES_RANGE,
        )
        self.register_outputs({"network": self.vpc.id, "subnetwork": self.subnet.id})
