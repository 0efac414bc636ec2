"""EksNetwork: a new VPC (private + public subnet per zone, NAT or VPC endpoints, load-balancer subnet tags) or the
existing private subnets a stack names. Exposes the private subnet ids by zone."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Optional

import pulumi
import pulumi_aws as aws

from gpufleet.base.spec.platforms import eks_endpoints
from gpufleet.base.spec.platforms.eks import EksNetworkSpec


@dataclass(frozen=True)
class EksNetworkArgs:
    spec: EksNetworkSpec
    """New VPC or existing subnets (from the stack's cluster.eks.network)."""
    cluster_name: str
    """EKS cluster name: subnets carry kubernetes.io/cluster/<name> so load balancers find them."""
    region: Optional[str] = None
    """The AWS region: with `egress: endpoints`, the endpoint service names are `com.amazonaws.<region>.<service>`."""
    interface_endpoints: tuple[str, ...] = ()
    """With `egress: endpoints`: the interface endpoints to create (gpufleet/base/spec/platforms/eks_endpoints.py
    interface_services); default none."""


def subnet_cidrs(vpc_cidr: str, count: int) -> list[tuple[str, str]]:
    """(private, public) CIDRs per zone: private = 1/8 of the VPC each, public = 1/64 each from the last 1/8."""
    net = ipaddress.ip_network(vpc_cidr)
    eighths = list(net.subnets(prefixlen_diff=3))
    public = list(eighths[-1].subnets(prefixlen_diff=3))
    return [(str(eighths[i]), str(public[i])) for i in range(count)]


def zone_ranges(cidr: str, zones: int) -> list[str]:
    """`cidr` split into equal blocks, one per zone (the smallest power of two that covers the zones)."""
    bits = max(zones - 1, 0).bit_length()
    return [str(b) for b in list(ipaddress.ip_network(cidr).subnets(prefixlen_diff=bits))[:zones]]


class EksNetwork(pulumi.ComponentResource):
    """`gpufleet:eks:EksNetwork`: a new VPC (`<name>-vpc`: a private and a public subnet per zone, NAT gateways or VPC
    endpoints, load-balancer subnet tags) or the existing private subnets the stack names. `private_subnet_ids`
    by zone is what the cluster and node groups take."""

    vpc_id: pulumi.Input[str]
    subnets_by_zone: dict[str, list[pulumi.Input[str]]]

    def __init__(self, name: str, args: EksNetworkArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:eks:EksNetwork", name, None, opts)
        spec = args.spec
        cluster_tag = {f"kubernetes.io/cluster/{args.cluster_name}": "shared"}
        self.subnets_by_zone = {}
        if spec.existing:
            self.vpc_id = spec.vpc_id
            for s in spec.subnets:
                self.subnets_by_zone.setdefault(s.availability_zone, []).append(s.id)
            self.register_outputs({"vpcId": self.vpc_id})
            return

        child = pulumi.ResourceOptions(parent=self)
        self.vpc = aws.ec2.Vpc(
            f"{name}-vpc",
            cidr_block=spec.vpc_cidr,
            enable_dns_hostnames=True,  # EKS nodes and private endpoints need DNS hostnames
            enable_dns_support=True,
            tags={"Name": f"{args.cluster_name}", **cluster_tag},
            opts=child,
        )
        self.vpc_id = self.vpc.id
        # We always create the internet gateway: NAT gateways need it and it costs nothing.
        self.igw = aws.ec2.InternetGateway(f"{name}-igw", vpc_id=self.vpc.id, tags={"Name": args.cluster_name}, opts=child)
        public_rt = aws.ec2.RouteTable(
            f"{name}-public-rt",
            vpc_id=self.vpc.id,
            routes=[{"cidr_block": "0.0.0.0/0", "gateway_id": self.igw.id}],
            tags={"Name": f"{args.cluster_name}-public"},
            opts=child,
        )
        # Secondary CIDR blocks (e.g. 100.64.0.0/16, RFC 6598): GPU clusters run out of pod addresses in a small
        # primary range, since every pod takes a VPC address. The first block is split into one node subnet per zone.
        self.secondary_cidrs = [
            aws.ec2.VpcIpv4CidrBlockAssociation(f"{name}-cidr-{j}", vpc_id=self.vpc.id, cidr_block=cidr, opts=child)
            for j, cidr in enumerate(spec.secondary_cidrs)
        ]
        node_ranges = zone_ranges(spec.secondary_cidrs[0], len(spec.availability_zones)) if spec.secondary_cidrs else []
        self.nat_gateways: list[aws.ec2.NatGateway] = []
        endpoints_only = spec.egress == "endpoints"
        private_rts: list[aws.ec2.RouteTable] = []
        endpoint_subnets: list[pulumi.Input[str]] = []
        for i, (zone, (private_cidr, public_cidr)) in enumerate(
            zip(spec.availability_zones, subnet_cidrs(spec.vpc_cidr, len(spec.availability_zones)))
        ):
            public = aws.ec2.Subnet(
                f"{name}-public-{zone}",
                vpc_id=self.vpc.id,
                cidr_block=public_cidr,
                availability_zone=zone,
                map_public_ip_on_launch=False,
                tags={"Name": f"{args.cluster_name}-public-{zone}", "kubernetes.io/role/elb": "1", **cluster_tag},
                opts=child,
            )
            aws.ec2.RouteTableAssociation(f"{name}-public-{zone}", subnet_id=public.id, route_table_id=public_rt.id, opts=child)
            private = aws.ec2.Subnet(
                f"{name}-private-{zone}",
                vpc_id=self.vpc.id,
                cidr_block=private_cidr,
                availability_zone=zone,
                tags={"Name": f"{args.cluster_name}-private-{zone}", "kubernetes.io/role/internal-elb": "1", **cluster_tag},
                opts=child,
            )
            if endpoints_only:
                pass  # no NAT: the private subnets reach AWS through the VPC endpoints below, nothing else
            elif i == 0 or not spec.single_nat_gateway:
                eip = aws.ec2.Eip(f"{name}-nat-{zone}", domain="vpc", tags={"Name": f"{args.cluster_name}-nat-{zone}"}, opts=child)
                self.nat_gateways.append(
                    aws.ec2.NatGateway(
                        f"{name}-nat-{zone}",
                        allocation_id=eip.id,
                        subnet_id=public.id,
                        tags={"Name": f"{args.cluster_name}-{zone}"},
                        opts=pulumi.ResourceOptions(parent=self, depends_on=[self.igw]),
                    )
                )
            private_rt = aws.ec2.RouteTable(
                f"{name}-private-{zone}",
                vpc_id=self.vpc.id,
                routes=[] if endpoints_only else [{"cidr_block": "0.0.0.0/0", "nat_gateway_id": self.nat_gateways[-1].id}],
                tags={"Name": f"{args.cluster_name}-private-{zone}"},
                opts=child,
            )
            aws.ec2.RouteTableAssociation(f"{name}-private-{zone}", subnet_id=private.id, route_table_id=private_rt.id, opts=child)
            self.subnets_by_zone[zone] = [private.id]
            private_rts.append(private_rt)
            endpoint_subnets.append(private.id)
            if node_ranges:
                # Nodes and pods in the secondary range (the VPC CNI gives pods addresses from the node's subnet), as
                # awslabs/ai-on-eks infra/base/terraform/vpc.tf lines 11-13 and eks.tf lines 17-20 (subnets "100.*").
                nodes = aws.ec2.Subnet(
                    f"{name}-nodes-{zone}",
                    vpc_id=self.vpc.id,
                    cidr_block=node_ranges[i],
                    availability_zone=zone,
                    tags={"Name": f"{args.cluster_name}-nodes-{zone}", "kubernetes.io/role/internal-elb": "1", **cluster_tag},
                    opts=pulumi.ResourceOptions(parent=self, depends_on=self.secondary_cidrs),
                )
                aws.ec2.RouteTableAssociation(f"{name}-nodes-{zone}", subnet_id=nodes.id, route_table_id=private_rt.id, opts=child)
                self.subnets_by_zone[zone] = [nodes.id]
        self.endpoints: list[aws.ec2.VpcEndpoint] = []
        if endpoints_only:
            self._endpoints(name, args, private_rts, endpoint_subnets, child)
        self.register_outputs({"vpcId": self.vpc.id})

    def _endpoints(self, name: str, args: EksNetworkArgs, route_tables: list, subnets: list, child) -> None:
        """The S3 gateway endpoint on the private route tables, and one interface endpoint per service with private
        DNS (so nodes keep calling the public service names) in one private subnet per zone, behind a security group
        that admits HTTPS from the VPC's own ranges (EKS User Guide, private-clusters: "the VPC interface endpoint
        security group must allow the CIDR for the subnets")."""
        if not args.region:
            raise ValueError("EksNetworkArgs.region is required with egress: endpoints")
        spec = args.spec
        sources = [spec.vpc_cidr, *spec.secondary_cidrs]
        self.endpoint_sg = aws.ec2.SecurityGroup(
            f"{name}-endpoints",
            vpc_id=self.vpc.id,
            description="HTTPS from the VPC to its interface endpoints",
            ingress=[{"protocol": "tcp", "from_port": 443, "to_port": 443, "cidr_blocks": sources,
                      "description": "nodes and pods to AWS APIs"}],
            tags={"Name": f"{args.cluster_name}-endpoints"},
            opts=pulumi.ResourceOptions(parent=self, depends_on=self.secondary_cidrs),
        )
        for service in eks_endpoints.GATEWAY:
            self.endpoints.append(aws.ec2.VpcEndpoint(
                f"{name}-vpce-{service}",
                vpc_id=self.vpc.id,
                service_name=eks_endpoints.service_name(args.region, service),
                vpc_endpoint_type="Gateway",
                route_table_ids=[rt.id for rt in route_tables],
                tags={"Name": f"{args.cluster_name}-{service}"},
                opts=child,
            ))
        for service in args.interface_endpoints:
            self.endpoints.append(aws.ec2.VpcEndpoint(
                f"{name}-vpce-{service.replace('.', '-')}",
                vpc_id=self.vpc.id,
                service_name=eks_endpoints.service_name(args.region, service),
                vpc_endpoint_type="Interface",
                private_dns_enabled=True,
                subnet_ids=list(subnets),
                security_group_ids=[self.endpoint_sg.id],
                tags={"Name": f"{args.cluster_name}-{service}"},
                opts=child,
            ))

    def private_subnet_ids(self, zone: Optional[str] = None) -> list[pulumi.Input[str]]:
        """Private subnets of one zone, or of every zone."""
        if zone is not None:
            return list(self.subnets_by_zone.get(zone, []))
        return [s for ids in self.subnets_by_zone.values() for s in ids]
