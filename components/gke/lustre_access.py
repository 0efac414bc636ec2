"""GkeLustreAccess: private services access on the cluster's VPC for Managed Lustre instances.

Managed Lustre instances live in a Google-managed network peered to the VPC through private services access
(docs.cloud.google.com/managed-lustre/docs/vpc, read 2026-12-04): an internal range reserved for VPC peering (the page
reserves a /20 so several instances fit; each instance takes a contiguous block), the Service Networking connection
that uses it, and a firewall rule letting the range reach the nodes over TCP. Lustre listens on TCP 988 ("both Lustre
and GKE use port 988 by default", create-instance page), so the rule allows 988. Only on a VPC gpufleet creates; with
`network.existing` the network's owner sets this up.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pulumi
import pulumi_gcp as gcp

from gpufleet.components.known import known

# The range the Managed Lustre VPC page reserves ("--prefix-length=20": room for several instances).
PEERING_PREFIX = 20
LUSTRE_PORT = "988"


@dataclass(frozen=True)
class GkeLustreAccessArgs:
    project: str
    """GCP project of the range, connection and firewall rule."""
    network: pulumi.Input[str]
    """The VPC's id (projects/<p>/global/networks/<name>)."""


class GkeLustreAccess(pulumi.ComponentResource):
    """`gpufleet:gke:GkeLustreAccess`: private services access on the cluster's VPC for Managed Lustre: a reserved
    peering range (`<name>-range`), the service networking connection (`<name>-peering`) and a firewall rule
    (`<name>-firewall`) that lets the instances reach the nodes."""

    def __init__(self, name: str, args: GkeLustreAccessArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:gke:GkeLustreAccess", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.range = gcp.compute.GlobalAddress(
            f"{name}-range",
            project=args.project,
            network=args.network,
            purpose="VPC_PEERING",
            address_type="INTERNAL",
            prefix_length=PEERING_PREFIX,
            description="gpufleet: Managed Lustre private services access",
            opts=child,
        )
        self.connection = gcp.servicenetworking.Connection(
            f"{name}-peering",
            network=args.network,
            service="servicenetworking.googleapis.com",
            reserved_peering_ranges=[self.range.name],
            opts=child,
        )
        self.firewall = gcp.compute.Firewall(
            f"{name}-firewall",
            project=args.project,
            network=args.network,
            direction="INGRESS",
            source_ranges=[self.range.address.apply(known(lambda address: f"{address}/{PEERING_PREFIX}"))],
            allows=[gcp.compute.FirewallAllowArgs(protocol="tcp", ports=[LUSTRE_PORT])],
            description="gpufleet: Managed Lustre instances reach the nodes",
            opts=child,
        )
        self.register_outputs({"range": self.range.name})
