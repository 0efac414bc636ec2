"""KarpenterNodePool: one GPU pool as a Karpenter NodePool (karpenter.sh/v1) and its EC2NodeClass
(karpenter.k8s.aws/v1), in place of a managed node group. Shapes validated against the pinned chart's CRDs in
../shared/reference/crds/karpenter/ (tests/upstream/test_karpenter_upstream.py).

- NodePool: the pool's instance types and capacity type (on-demand | spot | reserved) as requirements, its zone
  when it has one (EFA, reservation, availabilityZone), gpufleet's labels and taints, a GPU limit of
  maxNodes x GPUs per node, and disruption: consolidation only when a node is empty (running jobs are never moved
  to save money), after `consolidateAfter`, at most `disruptionBudget` nodes at a time (and the stack's scheduled
  `disruptionWindows`), nodes that never expire (`expireAfter`, default Never: docs/upgrades.md).
- EC2NodeClass: the AMI alias of the pool's GPU AMI family at its pinned release (`al2023@vYYYYMMDD`,
  `bottlerocket@v1.N.P`; Karpenter picks its NVIDIA variant), the cluster's node
  role, subnets and security groups by id, an encrypted gp3 volume sized for images (Bottlerocket: its data
  volume), IMDSv2 with hop limit 1, reserved pools' capacityReservationSelectorTerms, EFA pools' placement group.

EFA under Karpenter, as far as v1.14 goes: Karpenter attaches EFA interfaces when pods request
vpc.amazonaws.com/efa, and `networkInterfaces` lets a node class declare them per network card, but only as
`interface` (card 0) or `efa-only` (CRD enum): gpufleet declares them for instance types whose secondary cards are
EFA-only in the catalog (P5, P5e) and leaves other EFA types to Karpenter's default. The EFA DRA driver is not
supported with Karpenter (EKS User Guide, "Manage EFA devices on Amazon EKS"); the EFA device plugin is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import pulumi
import pulumi_kubernetes as k8s

from gpufleet.base import labels as L
from gpufleet.base import versions
from gpufleet.components.eks.node_group import user_data

NODEPOOL_API = "karpenter.sh/v1"
NODECLASS_API = "karpenter.k8s.aws/v1"
CAPACITY_TYPE_KEY = "karpenter.sh/capacity-type"
INSTANCE_TYPE_KEY = "node.kubernetes.io/instance-type"
ZONE_KEY = "topology.kubernetes.io/zone"
# gpufleet capacity kind -> Karpenter capacity type (karpenter.sh/capacity-type values on-demand, spot, reserved).
CAPACITY_TYPES = {"on-demand": "on-demand", "spot": "spot", "reserved": "reserved"}


@dataclass(frozen=True)
class KarpenterNodePoolArgs:
    pool: str
    """Pool name: the NodePool's and the EC2NodeClass's name."""
    cluster_name: str
    """For tags on the instances Karpenter launches."""
    node_role: pulumi.Input[str]
    """IAM role name of the nodes (EC2NodeClass `role`)."""
    instance_types: list[str]
    """The pool's EC2 instance types (one GPU shape)."""
    gpus_per_node: int
    """GPUs per node: the NodePool's nvidia.com/gpu limit is max_nodes x this."""
    max_nodes: int
    """The pool's maximum size, turned into the GPU limit."""
    subnet_ids: list
    """Subnets (ids) the nodes launch in."""
    security_group_ids: list
    """Security groups (ids) of the nodes (the cluster's; EFA pools add theirs)."""
    capacity: str = "on-demand"
    """on-demand | spot | reserved."""
    ami: str = "al2023-nvidia"
    """Key of gpufleet.base.versions.KARPENTER_AMI_ALIASES."""
    kubernetes_version: str = ""
    """The cluster's Kubernetes minor: picks the pinned release of the alias (versions.karpenter_ami_alias).
    Default "": the newest minor gpufleet plans for on EKS."""
    ami_release: Optional[str] = None
    """A release of the AMI family for the minor instead of its pin: AL2023, one of versions.EKS_AL2023_RELEASES (alias
    `al2023@vYYYYMMDD`); Bottlerocket, one of versions.BOTTLEROCKET_RELEASES (alias `bottlerocket@v1.N.P`). Default:
    the pin (EKS_AL2023_RELEASE_PINS, BOTTLEROCKET_RELEASE_PINS)."""
    labels: dict = field(default_factory=dict)
    """Node labels (gpufleet's and the pool's)."""
    taints: list = field(default_factory=list)
    """Node taints as {key, value, effect}."""
    zones: list = field(default_factory=list)
    """Zones the pool is held to (EFA, reservation, availabilityZone); empty: the subnets decide."""
    root_volume_gib: int = 200
    """Encrypted gp3 volume for the OS and images."""
    reservation_ids: list = field(default_factory=list)
    """reserved: the capacity reservations / Capacity Blocks the node class may launch into (by id)."""
    placement_group: Optional[pulumi.Input[str]] = None
    """EFA pools: the cluster placement group (by name)."""
    efa_only_cards: int = 0
    """EFA pools whose secondary network cards are EFA-only: the number of network cards (declared per card)."""
    consolidate_after: str = "30m"
    """How long a node must be empty before Karpenter removes it."""
    disruption_budget: str = "1"
    """At most this many (or this percentage of) nodes disrupted at once."""
    expire_after: str = "Never"
    """The nodes' maximum lifetime (NodePool spec.template.spec.expireAfter). Default Never, not the CRD's 720h:
    expiration is forceful and ignores `karpenter.sh/do-not-disrupt` (karpenter.sh/docs/reference/annotations), so it
    would evict running GPU jobs; node images move by drift, which respects both (docs/upgrades.md)."""
    disruption_windows: list = field(default_factory=list)
    """Scheduled budgets {schedule, duration, nodes} added after the always-active one. Default: none."""
    exemptions: dict = field(default_factory=dict)
    """Policy name -> reason: annotated `gpufleet.io/exempt-<policy>` on the NodePool."""
    reservation_facts: dict = field(default_factory=dict)
    """reserved: what the stack declares the reservation holds (zone, instance type, count), annotated
    `gpufleet.io/reservation-*` on the NodePool for the policy `reservation-placement`."""
    data_volume_snapshot: Optional[str] = None
    """Bottlerocket: an EBS snapshot (snap-...) of a data volume with images pre-pulled; the data volume's mapping
    (/dev/xvdb) gets `ebs.snapshotID`, so every node Karpenter launches starts with the images (docs/cold-start.md).
    Default: none, an empty data volume."""
    max_parallel_image_pulls: Optional[int] = None
    """AL2023: a bound on the kubelet's parallel image pulls, as a nodeadm NodeConfig part in the node class's
    `userData` (Karpenter puts the user's MIME parts before its own NodeConfig and nodeadm merges them:
    karpenter-provider-aws pkg/providers/amifamily/bootstrap/nodeadm.go at the pinned release, versions.KARPENTER). Not on Bottlerocket: Karpenter
    rewrites `settings.kubernetes` from its own typed subset, which has no max-parallel-image-pulls (the spec refuses
    it there). Default: none, the AMI's unbounded parallel pulls."""


def karpenter_taint(taint: dict) -> dict:
    """A taint without a value (`dedicated:NoSchedule`, valid in Kubernetes) leaves `value` out: the NodePool CRD's
    taint value pattern (karpenter.sh_nodepools.yaml of the pinned release, versions.KARPENTER;
    `spec.template.spec.taints[].value`) refuses ""."""
    return {k: v for k, v in taint.items() if not (k == "value" and v == "")}


def node_pool_spec(args: KarpenterNodePoolArgs) -> dict:
    requirements = [
        {"key": INSTANCE_TYPE_KEY, "operator": "In", "values": list(args.instance_types)},
        {"key": CAPACITY_TYPE_KEY, "operator": "In", "values": [CAPACITY_TYPES[args.capacity]]},
    ]
    if args.zones:
        requirements.append({"key": ZONE_KEY, "operator": "In", "values": list(args.zones)})
    return {
        "template": {
            "metadata": {"labels": dict(args.labels)},
            "spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": args.pool},
                "requirements": requirements,
                "taints": [karpenter_taint(t) for t in args.taints],
                "expireAfter": args.expire_after,
            },
        },
        # A GPU pool is bounded in GPUs: Karpenter stops launching once the pool's nodes hold this many.
        "limits": {L.GPU_RESOURCE: args.max_nodes * args.gpus_per_node},
        "disruption": {
            "consolidationPolicy": "WhenEmpty",
            "consolidateAfter": args.consolidate_after,
            # The always-active budget, then the stack's windows: Karpenter applies the most restrictive active one.
            "budgets": [{"nodes": args.disruption_budget},
                        *({"nodes": w["nodes"], "schedule": w["schedule"], "duration": w["duration"]}
                          for w in args.disruption_windows)],
        },
    }


def _ebs(args: KarpenterNodePoolArgs) -> dict:
    if args.data_volume_snapshot and args.ami.startswith("bottlerocket"):
        # The EC2NodeClass CRD (karpenter.k8s.aws_ec2nodeclasses.yaml of versions.KARPENTER, blockDeviceMappings[].ebs.encrypted):
        # "If you are creating a volume from a snapshot, you can't specify an encryption value": the volume is
        # encrypted as its snapshot is, so build the snapshot encrypted. volumeSize stays: at least the snapshot's size.
        return {"volumeSize": f"{args.root_volume_gib}Gi", "volumeType": "gp3", "deleteOnTermination": True,
                "snapshotID": args.data_volume_snapshot}
    return {"volumeSize": f"{args.root_volume_gib}Gi", "volumeType": "gp3", "encrypted": True, "deleteOnTermination": True}


def node_class_spec(args: KarpenterNodePoolArgs) -> dict:
    device = "/dev/xvdb" if args.ami.startswith("bottlerocket") else "/dev/xvda"
    spec: dict = {
        "amiSelectorTerms": [{"alias": versions.karpenter_ami_alias(
            args.ami, args.kubernetes_version or versions.EKS_KUBERNETES_VERSIONS[-1], args.ami_release)}],
        "role": args.node_role,
        "subnetSelectorTerms": [{"id": s} for s in args.subnet_ids],
        "securityGroupSelectorTerms": [{"id": g} for g in args.security_group_ids],
        "blockDeviceMappings": [{"deviceName": device, "ebs": _ebs(args)}],
        "metadataOptions": {"httpEndpoint": "enabled", "httpTokens": "required", "httpPutResponseHopLimit": 1},
        "tags": {L.CLUSTER_TAG: args.cluster_name, L.POOL_LABEL: args.pool},
    }
    if args.max_parallel_image_pulls is not None and not args.ami.startswith("bottlerocket"):
        spec["userData"] = user_data(args.ami, "none", args.max_parallel_image_pulls)
    if args.reservation_ids:
        spec["capacityReservationSelectorTerms"] = [{"id": r} for r in args.reservation_ids]
    if args.placement_group is not None:
        spec["placementGroupSelector"] = {"name": args.placement_group}
    if args.efa_only_cards:
        spec["networkInterfaces"] = [
            {"networkCardIndex": card, "deviceIndex": 0, "interfaceType": "interface" if card == 0 else "efa-only"}
            for card in range(args.efa_only_cards)
        ]
    return spec


class KarpenterNodePool(pulumi.ComponentResource):
    """`gpufleet:eks:KarpenterNodePool`: one GPU pool as a Karpenter NodePool (`<name>-nodepool`, karpenter.sh/v1) and
    its EC2NodeClass (`<name>-nodeclass`): the pool's instance types, capacity type, zone, labels, taints and
    limits."""

    def __init__(self, name: str, args: KarpenterNodePoolArgs, provider: k8s.Provider,
                 depends_on: Optional[list] = None, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:eks:KarpenterNodePool", name, None, opts)
        crs = pulumi.ResourceOptions(parent=self, provider=provider, depends_on=list(depends_on or []))
        self.node_class = k8s.apiextensions.CustomResource(
            f"{name}-nodeclass", api_version=NODECLASS_API, kind="EC2NodeClass",
            metadata={"name": args.pool}, spec=node_class_spec(args), opts=crs,
        )
        annotations = {L.exempt_key(p): why for p, why in sorted(args.exemptions.items())}
        annotations.update({L.RESERVATION_TAG_PREFIX + k: str(v) for k, v in sorted(args.reservation_facts.items())})
        self.node_pool = k8s.apiextensions.CustomResource(
            f"{name}-nodepool", api_version=NODEPOOL_API, kind="NodePool",
            metadata={"name": args.pool, **({"annotations": annotations} if annotations else {})},
            spec=node_pool_spec(args),
            opts=pulumi.ResourceOptions.merge(crs, pulumi.ResourceOptions(depends_on=[self.node_class])),
        )
        self.register_outputs({"nodePool": args.pool, "capacityType": CAPACITY_TYPES[args.capacity]})
