"""EksNodeGroup: one EKS managed node group with its launch template. The AMI comes from the AMI type
and a release version (never an AMI id): AL2023's pinned release (gpufleet.base.versions.EKS_AL2023_RELEASE_PINS),
Bottlerocket's pinned release (BOTTLEROCKET_RELEASE_PINS, its release version read from that release's own SSM
parameter); IMDSv2 is required; the root volume
is encrypted gp3; labels and taints are set on the group and mirrored as cluster-autoscaler
node-template tags so the pool can scale from zero; EFA pools get every EFA interface the instance
type has, a cluster placement group and the EFA security group."""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass, field
from typing import Optional

import pulumi
import pulumi_aws as aws

from gpufleet.base.catalog import aws as aws_catalog
from gpufleet.base import labels as L
from gpufleet.base import versions
from gpufleet.components.known import known

TAINT_EFFECTS = {"NoSchedule": "NO_SCHEDULE", "PreferNoSchedule": "PREFER_NO_SCHEDULE", "NoExecute": "NO_EXECUTE"}


@dataclass(frozen=True)
class EksNodeGroupArgs:
    cluster_name: pulumi.Input[str]
    """EKS cluster the group joins."""
    autoscaler_cluster: str
    """Cluster name in the autoscaler's discovery tag k8s.io/cluster-autoscaler/<name>."""
    kubernetes_version: str
    """Kubernetes minor version: picks the AMI's SSM parameter."""
    node_role_arn: pulumi.Input[str]
    """IAM role of the nodes."""
    subnet_ids: list
    """Subnets the nodes launch in (one zone for EFA pools)."""
    instance_types: list[str]
    """EC2 instance types, all of one shape (the first decides EFA interfaces)."""
    ami: str = "al2023-nvidia"
    """Key of gpufleet.base.versions.EKS_AMIS; default: AL2023 with the NVIDIA driver."""
    ami_release: Optional[str] = None
    """The AMI release the nodes run: AL2023, the node group's `release_version` ("1.N.P-YYYYMMDD", a release of
    gpufleet.base.versions.EKS_AL2023_RELEASES for `kubernetes_version`); Bottlerocket, the OS version ("1.N.P", a
    release of BOTTLEROCKET_RELEASES with a variant for `kubernetes_version`), whose release version EKS takes is read
    from that release's own SSM parameter. Default: gpufleet's pin for the minor (EKS_AL2023_RELEASE_PINS,
    BOTTLEROCKET_RELEASE_PINS), so a new AMI release reaches the nodes only through a reviewed bump."""
    capacity: str = "on-demand"
    """on-demand | spot | reserved. Spot groups get EKS's managed capacity rebalancing (nodes drained on a rebalance
    recommendation before the interruption). Reserved groups launch into `reservation_id` or
    `reservation_group_arn`."""
    reservation_id: Optional[str] = None
    """reserved: the Capacity Block or On-Demand Capacity Reservation the launch template targets (cr-...)."""
    reservation_group_arn: Optional[str] = None
    """reserved (ODCR only): a Capacity Reservation resource group the launch template targets instead."""
    capacity_block: bool = False
    """reserved: the reservation is an EC2 Capacity Block for ML: market type `capacity-block` on the launch
    template and capacity type CAPACITY_BLOCK on the node group (EKS User Guide, capacity-blocks-mng)."""
    reservation_facts: dict = field(default_factory=dict)
    """reserved: what the stack declares the reservation holds (zone, instance type, count), tagged on the
    launch template as gpufleet.io/reservation-* so the policy `reservation-placement` can check it."""
    min_nodes: int = 0
    """Minimum size; 0 lets the autoscaler remove every idle node."""
    max_nodes: int = 1
    """Maximum size."""
    labels: dict = field(default_factory=dict)
    """Node labels (also node-template label tags)."""
    taints: list = field(default_factory=list)
    """Node taints as {key, value, effect} (also node-template taint tags)."""
    root_volume_gib: int = 200
    """Encrypted gp3 volume for the OS and images (Bottlerocket: its data volume)."""
    gpus: int = 0
    """GPUs per node (node-template resource tag for scale from zero); 0 for CPU groups."""
    efa_interfaces: int = 0
    """EFA interfaces per node (one per network card); 0: no EFA."""
    efa_secondary: str = "efa"
    """Interface type on network cards 1..: efa (EFA with ENA, one IP each) or efa-only (the catalog's choice
    per instance type, gpufleet/base/catalog/aws_instances.yaml); card 0 is always EFA with ENA."""
    security_group_ids: list = field(default_factory=list)
    """EFA groups: the security groups of every interface (the cluster's and the EFA one). Empty: EKS
    applies the cluster security group."""
    placement_group: Optional[pulumi.Input[str]] = None
    """EFA groups: the cluster placement group."""
    autoscaled: bool = True
    """Tag the group for cluster-autoscaler auto-discovery."""
    autoscaling_options: dict = field(default_factory=dict)
    """Autoscaler option -> value ("scaledownunneededtime": "30m"), tagged
    `k8s.io/cluster-autoscaler/node-template/autoscaling-options/<option>` on the group and its Auto Scaling group: they
    override the autoscaler's scale-down flags for this group (GPU groups: EksAutoscalerSpec.gpu_scale_down). Default:
    none, the flags apply."""
    exemptions: dict = field(default_factory=dict)
    """Policy name -> reason: tagged `gpufleet.io/exempt-<policy>` on the node group, where the policy pack
    (and reviewers) see it; default: none."""
    max_unavailable: object = 1
    """Nodes an update may take down at once: a count (update_config max_unavailable) or "N%"
    (max_unavailable_percentage); default 1."""
    local_storage: str = "none"
    """raid0: kubelet and containerd on a RAID0 of the NVMe instance store (launch template user data); none."""
    data_volume_snapshot: Optional[str] = None
    """Bottlerocket: an EBS snapshot (snap-...) of a data volume with images pre-pulled; the data volume (/dev/xvdb) of
    every node starts from it (gpufleet/base/spec/features/cold_start.py). Default: none, an empty data volume."""
    max_parallel_image_pulls: Optional[int] = None
    """A bound on the kubelet's parallel image pulls (KubeletConfiguration maxParallelImagePulls). Both GPU AMIs pull in
    parallel without a bound by default; default: none, the AMI's."""
    node_repair: bool = False
    """Managed node auto repair (`nodeRepairConfig.enabled`): EKS replaces or reboots a node whose conditions (set by
    the node monitoring agent, components/eks/node_health.py) stay unhealthy; default: off (EKS's default)."""


def autoscaler_tags(args: EksNodeGroupArgs) -> dict[str, str]:
    """Discovery tags, scale-from-zero node-template tags and autoscaling-options tags (kubernetes/autoscaler AWS
    README)."""
    if not args.autoscaled:
        return {}
    tags = {L.CA_ENABLED_TAG: "true", L.CA_OWNED_TAG.format(cluster=args.autoscaler_cluster): "owned"}
    for key, value in sorted(args.labels.items()):
        tags[f"{L.CA_TEMPLATE_LABEL}{key}"] = value
    for t in args.taints:
        tags[f"{L.CA_TEMPLATE_TAINT}{t['key']}"] = f"{t['value']}:{t['effect']}"
    if args.gpus:
        tags[f"{L.CA_TEMPLATE_RESOURCE}{L.GPU_RESOURCE}"] = str(args.gpus)
    if args.efa_interfaces:
        tags[f"{L.CA_TEMPLATE_RESOURCE}{L.EFA_RESOURCE}"] = str(args.efa_interfaces)
    for option, value in sorted(args.autoscaling_options.items()):
        tags[f"{L.CA_TEMPLATE_OPTION}{option}"] = value
    return tags


def efa_interfaces(count: int, security_group_ids: list, secondary: str = "efa") -> list[dict]:
    """One EFA interface per network card: card 0 is the primary (device 0, EFA with ENA: it carries the node's
    IP), the others device 1 of type `secondary` (EC2 User Guide, "EFA configuration for P5 and P5e")."""
    return [
        {
            "device_index": 0 if card == 0 else 1,
            "network_card_index": card,
            "interface_type": "efa" if card == 0 else secondary,
            "security_groups": security_group_ids,
            "delete_on_termination": "true",
        }
        for card in range(count)
    ]


# AL2023: EKS merges a managed node group's launch-template user data with its own, and for AL2023 AMIs it must be
# MIME multi-part with nodeadm NodeConfig parts (EKS User Guide, "Customize managed nodes with launch templates",
# Amazon EC2 user data; awslabs/amazon-eks-ami doc/USER_GUIDE.md, "RAID-0 for Kubelet and containerd").
MIME_BOUNDARY = "GPUFLEET"
AL2023_RAID0_NODECONFIG = """---
apiVersion: node.eks.aws/v1alpha1
kind: NodeConfig
spec:
  instance:
    localStorage:
      strategy: RAID0
"""
# Bottlerocket: user data is TOML settings EKS merges with its own. The bootstrap command RAID0s the instance-store
# disks and binds containerd, kubelet and pod logs onto them: what Karpenter generates for `instanceStorePolicy:
# RAID0` on Bottlerocket (karpenter-provider-aws pkg/providers/amifamily/bootstrap/bottlerocket.go), Bottlerocket
# >= 1.22 ("Bootstrap commands", configure ephemeral disks).
BOTTLEROCKET_RAID0_TOML = """[settings.bootstrap-commands.000-mount-instance-storage]
commands = [["apiclient", "ephemeral-storage", "init"], ["apiclient", "ephemeral-storage", "bind", "--dirs", "/var/lib/containerd", "/var/lib/kubelet", "/var/log/pods"]]
essential = true
mode = "always"
"""


def al2023_kubelet_nodeconfig(max_parallel_image_pulls: int) -> str:
    """A nodeadm NodeConfig part bounding parallel pulls. nodeadm already writes `serializeImagePulls: false`
    (awslabs/amazon-eks-ami nodeadm/internal/kubelet/config.go at 81fec2e8), and merges `spec.kubelet.config` over its
    kubelet configuration (nodeadm doc/examples.md); the kubelet takes maxParallelImagePulls only with serialized pulls
    off (k8s.io/kubelet config v1beta1: "This field cannot be set if SerializeImagePulls is true"), so both are set."""
    return (
        "---\n"
        "apiVersion: node.eks.aws/v1alpha1\n"
        "kind: NodeConfig\n"
        "spec:\n"
        "  kubelet:\n"
        "    config:\n"
        "      serializeImagePulls: false\n"
        f"      maxParallelImagePulls: {int(max_parallel_image_pulls)}\n"
    )


def bottlerocket_parallel_pulls_toml(max_parallel_image_pulls: int) -> str:
    """Bottlerocket's kubelet already pulls in parallel (bottlerocket-core-kit packages/kubernetes-1.31/kubelet-config:
    `serializeImagePulls: false`); `settings.kubernetes.max-parallel-image-pulls` bounds it (Bottlerocket settings
    reference 1.51.x, bottlerocket-settings-sdk models 0.17.0)."""
    return f"[settings.kubernetes]\nmax-parallel-image-pulls = {int(max_parallel_image_pulls)}\n"


def user_data(ami: str, local_storage: str, max_parallel_image_pulls: Optional[int] = None) -> Optional[str]:
    """The launch template's user data (plain text, before base64), or None when the node needs none."""
    raid0 = local_storage == "raid0"
    if not raid0 and max_parallel_image_pulls is None:
        return None
    if ami.startswith("bottlerocket"):
        parts = ([BOTTLEROCKET_RAID0_TOML] if raid0 else []) + (
            [bottlerocket_parallel_pulls_toml(max_parallel_image_pulls)] if max_parallel_image_pulls is not None else [])
        return "\n".join(parts)
    configs = ([AL2023_RAID0_NODECONFIG] if raid0 else []) + (
        [al2023_kubelet_nodeconfig(max_parallel_image_pulls)] if max_parallel_image_pulls is not None else [])
    body = "".join(f"--{MIME_BOUNDARY}\nContent-Type: application/node.eks.aws\n\n{c}\n" for c in configs)
    return (
        "MIME-Version: 1.0\n"
        f'Content-Type: multipart/mixed; boundary="{MIME_BOUNDARY}"\n\n'
        f"{body}"
        f"--{MIME_BOUNDARY}--\n"
    )


def update_config(max_unavailable: object) -> dict:
    """update_config: a node count, or a percentage "N%"."""
    if isinstance(max_unavailable, str) and max_unavailable.endswith("%"):
        return {"max_unavailable_percentage": int(max_unavailable[:-1])}
    return {"max_unavailable": int(max_unavailable)}


def capacity_type(args: EksNodeGroupArgs) -> str:
    """The node group's capacity type. CAPACITY_BLOCK is an EKS API value (CreateNodegroup `capacityType`:
    ON_DEMAND | SPOT | CAPACITY_BLOCK) that pulumi_aws's docstring does not list yet; the provider passes it on
    (terraform-aws-eks-blueprints patterns/ml-capacity-block sets it the same way)."""
    if args.capacity == "spot":
        return "SPOT"
    return "CAPACITY_BLOCK" if args.capacity == "reserved" and args.capacity_block else "ON_DEMAND"


def reservation_settings(args: EksNodeGroupArgs) -> dict:
    """Launch template inputs of a reserved group: the targeted reservation, and for a Capacity Block the
    `capacity-block` market type (EKS User Guide, "Create a managed node group with Capacity Blocks for ML":
    InstanceMarketOptions.MarketType capacity-block, CapacityReservationSpecification.CapacityReservationTarget)."""
    if args.capacity != "reserved":
        return {}
    target = {"capacity_reservation_id": args.reservation_id} if args.reservation_id else {
        "capacity_reservation_resource_group_arn": args.reservation_group_arn}
    out: dict = {"capacity_reservation_specification": {"capacity_reservation_target": target}}
    if args.capacity_block:
        out["instance_market_options"] = {"market_type": "capacity-block"}
    return out


def _arch(instance_types: list[str]) -> str:
    """arm64 when the catalog says the pool's instances are Arm (P6e-GB200's Grace host), else amd64."""
    known = aws_catalog.instance_types()
    return "arm64" if any(known[t].arch == "arm64" for t in instance_types if t in known) else "amd64"


def _tag_name(key: str) -> str:
    return re.sub(r"[^a-zA-Z0-9-]+", "-", key.removeprefix(L.CA_PREFIX)).strip("-")


class EksNodeGroup(pulumi.ComponentResource):
    """`gpufleet:eks:EksNodeGroup`: one EKS managed node group (`<name>-ng`) with its launch template (`<name>-lt`):
    the AMI at its pinned release (Bottlerocket's read from that release's SSM parameter), never an AMI id, IMDSv2
    required, an encrypted gp3 root volume, labels and
    taints mirrored as cluster-autoscaler node-template tags so the pool scales from zero (also on its Auto
    Scaling group, `<name>-asg-*`), and every EFA interface the instance type has on EFA pools. The autoscaler
    owns the desired size (ignored on update)."""

    def __init__(self, name: str, args: EksNodeGroupArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:eks:EksNodeGroup", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        # The pinned release (issue 50): moving it is a reviewed change, never an SSM parameter's drift. AL2023's
        # release version is the pin itself; Bottlerocket's ("1.N.P-<commit>") is read from the pinned release's own
        # SSM parameter, whose value does not move (versions.EKS_AMIS).
        self.ami_release = versions.node_image(args.ami, args.kubernetes_version, args.ami_release).release
        ami_type, ssm_path = versions.eks_ami(args.ami, args.kubernetes_version, _arch(args.instance_types),
                                              self.ami_release)
        if args.ami.startswith("al2023"):
            self.ssm_parameter = None
            release: pulumi.Input[str] = self.ami_release
        else:
            self.ssm_parameter = ssm_path
            release = aws.ssm.get_parameter_output(name=ssm_path, opts=pulumi.InvokeOutputOptions(parent=self)).value

        # Bottlerocket keeps images on its second (data) volume; AL2023 on the root volume.
        device = "/dev/xvdb" if args.ami.startswith("bottlerocket") else "/dev/xvda"
        lt_args: dict = {
            "metadata_options": {
                "http_endpoint": "enabled",
                "http_tokens": "required",  # IMDSv2 only
                "http_put_response_hop_limit": 1,  # pods use IRSA, not the node's credentials
            },
            "block_device_mappings": [{
                "device_name": device,
                "ebs": {"volume_size": args.root_volume_gib, "volume_type": "gp3", "delete_on_termination": "true",
                        # Bottlerocket: the data volume starts from a snapshot with the images pre-pulled (AWS
                        # Containers blog, "Reduce container startup time on Amazon EKS with Bottlerocket data volume").
                        # A volume from a snapshot takes no encryption value: it is encrypted as its snapshot is (EC2 API
                        # LaunchTemplateEbsBlockDeviceRequest.Encrypted: "If you are creating a volume from a snapshot,
                        # you can't specify an encryption value"); a blank volume is encrypted on creation.
                        **({"snapshot_id": args.data_volume_snapshot} if args.data_volume_snapshot
                           else {"encrypted": "true"})},
            }],
            "tag_specifications": [
                {"resource_type": "instance", "tags": {"Name": name}},
                {"resource_type": "volume", "tags": {"Name": name}},
            ],
            "update_default_version": True,
        }
        if args.efa_interfaces:
            lt_args["network_interfaces"] = efa_interfaces(args.efa_interfaces, args.security_group_ids, args.efa_secondary)
        elif args.security_group_ids:
            lt_args["vpc_security_group_ids"] = args.security_group_ids
        if args.placement_group is not None:
            lt_args["placement"] = {"group_name": args.placement_group}
        text = user_data(args.ami, args.local_storage, args.max_parallel_image_pulls)
        if text is not None:
            lt_args["user_data"] = base64.b64encode(text.encode()).decode()
        lt_args.update(reservation_settings(args))
        reservation_tags = {L.RESERVATION_TAG_PREFIX + k: str(v) for k, v in sorted(args.reservation_facts.items())}
        if reservation_tags:
            lt_args["tags"] = reservation_tags
        self.launch_template = aws.ec2.LaunchTemplate(f"{name}-lt", **lt_args, opts=child)

        self.tags = {**autoscaler_tags(args), **{L.exempt_key(p): why for p, why in sorted(args.exemptions.items())},
                     **reservation_tags}
        self.node_group = aws.eks.NodeGroup(
            f"{name}-ng",
            cluster_name=args.cluster_name,
            node_role_arn=args.node_role_arn,
            subnet_ids=args.subnet_ids,
            instance_types=list(args.instance_types),
            capacity_type=capacity_type(args),
            ami_type=ami_type,
            release_version=release,
            launch_template={"id": self.launch_template.id, "version": self.launch_template.latest_version.apply(str)},
            scaling_config={"min_size": args.min_nodes, "max_size": args.max_nodes, "desired_size": args.min_nodes},
            update_config=update_config(args.max_unavailable),
            node_repair_config={"enabled": True} if args.node_repair else None,
            labels=dict(args.labels),
            taints=[{"key": t["key"], "value": t["value"], "effect": TAINT_EFFECTS[t["effect"]]} for t in args.taints],
            tags=self.tags,
            # The cluster autoscaler owns the desired size; without this every `pulumi up` resets it
            # (pulumi/pulumi-eks#321, terraform-aws-modules/terraform-aws-eks#681).
            opts=pulumi.ResourceOptions(parent=self, ignore_changes=["scalingConfig.desiredSize"]),
        )

        # Managed node groups do not copy their tags to the Auto Scaling group, where the autoscaler
        # reads node templates when a group is at zero (aws/containers-roadmap#608): tag the ASG too.
        # (EKS itself puts the two discovery tags on the ASG.)
        asg_name = self.node_group.resources.apply(known(lambda r: r[0].autoscaling_groups[0].name))
        self.asg_tags = [
            aws.autoscaling.Tag(
                f"{name}-asg-{_tag_name(key)}",
                autoscaling_group_name=asg_name,
                tag={"key": key, "value": value, "propagate_at_launch": False},
                opts=child,
            )
            for key, value in self.tags.items()
            if key.startswith(L.CA_TEMPLATE_PREFIX)
        ]
        self.register_outputs({"nodeGroupName": self.node_group.node_group_name,
                               "amiRelease": self.ami_release,
                               **({"amiParameter": ssm_path} if self.ssm_parameter else {})})

