"""EksEfaFabric: what one EFA pool needs around its nodes: a cluster placement group (all nodes close
together in one zone) and a security group that lets EFA traffic flow between members (EFA requires
a self-referencing group for all traffic, inbound and outbound; EC2 User Guide, "Prepare an
EFA-enabled security group")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pulumi
import pulumi_aws as aws

from gpufleet.base import labels as L


@dataclass(frozen=True)
class EksEfaFabricArgs:
    vpc_id: pulumi.Input[str]
    """VPC of the pool's subnets."""
    cluster_name: str
    """For tags."""
    pool: str
    """Pool name, for tags."""
    placement_group: bool = True
    """Create the pool's cluster placement group; False when the pool launches into the placement group its
    On-Demand Capacity Reservation was created in (EC2 User Guide, cr-cpg.html)."""


class EksEfaFabric(pulumi.ComponentResource):
    """`gpufleet:eks:EksEfaFabric`: what one EFA pool needs around its nodes: a cluster placement group (`<name>-pg`)
    and a self-referencing security group (`<name>-sg`) that lets EFA traffic flow between members (EC2 User
    Guide, "Prepare an EFA-enabled security group")."""

    def __init__(self, name: str, args: EksEfaFabricArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:eks:EksEfaFabric", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        tags = {L.CLUSTER_TAG: args.cluster_name, L.POOL_LABEL: args.pool}
        self.placement_group = (
            aws.ec2.PlacementGroup(f"{name}-pg", strategy="cluster", tags=tags, opts=child) if args.placement_group else None
        )
        self.security_group = aws.ec2.SecurityGroup(
            f"{name}-sg",
            description=f"EFA traffic between {args.pool} nodes of {args.cluster_name}",
            vpc_id=args.vpc_id,
            ingress=[{"protocol": "-1", "from_port": 0, "to_port": 0, "self": True, "description": "EFA from members"}],
            egress=[
                {"protocol": "-1", "from_port": 0, "to_port": 0, "self": True, "description": "EFA to members"},
                {"protocol": "-1", "from_port": 0, "to_port": 0, "cidr_blocks": ["0.0.0.0/0"], "description": "node egress"},
            ],
            tags=tags,
            opts=child,
        )
        pg = self.placement_group.name if self.placement_group is not None else None
        self.register_outputs({"placementGroup": pg, "securityGroupId": self.security_group.id})
