"""Issue 33, second batch: realistic one-line mistakes (id, example stack it starts from, the change, the exact
problems), each with its upstream source beside it, and unusual stacks that are valid (they guard the new rules against
being over-eager). tests/unit/test_mistakes_round3.py runs them with its first batch.

The first group planned clean (exit 0) before this batch and now exits 2; the second group was already refused and
stays as a regression test of a class of mistake the first rounds did not list."""

from __future__ import annotations

from typing import Callable

P = "gpufleet:nodePools"
ADDONS = "gpufleet:addons"
Change = Callable[[dict], dict]


def at(path: str, value) -> Change:
    """Set the value at a dotted path of the config (list items by index), e.g. at("gpufleet:nodePools.0.minNodes", 1)."""
    def apply(config: dict) -> dict:
        node = config
        parts = path.split(".")
        for part in parts[:-1]:
            node = node[int(part)] if part.isdigit() else node.setdefault(part, {})
        node[int(parts[-1]) if parts[-1].isdigit() else parts[-1]] = value
        return config
    return apply


def both(*changes: Change) -> Change:
    def apply(config: dict) -> dict:
        for change in changes:
            change(config)
        return config
    return apply


def first_queue(**fields) -> Change:
    """teams: the research team's queue on a100-train (nominalQuota 8 of the pool's 16 GPUs)."""
    def apply(config: dict) -> dict:
        queue = config[ADDONS]["kueue"]["teams"][0]["queues"][0]
        queue.update(fields)
        for key in [k for k, v in fields.items() if v is None]:
            queue.pop(key)
        return config
    return apply


def second_access_entry(config: dict) -> dict:
    """prod-eks: the ml-engineers role listed again, with another policy."""
    config["gpufleet:cluster"]["eks"]["accessEntries"].append(
        {"principalArn": "arn:aws:iam::123456789012:role/ml-engineers", "policy": "edit"})
    return config


def drop_last_server(config: dict) -> dict:
    config["gpufleet:cluster"]["k3s"]["servers"].pop()
    return config


def labels(n: int) -> dict[str, str]:
    return {f"example.com/cost-center-{i}": "ml" for i in range(n)}


TAINTED_TWICE = [{"key": "team", "value": "vision", "effect": "NoSchedule"},
                 {"key": "team", "value": "nlp", "effect": "NoSchedule"}]
KARPENTER_LABEL = ("Karpenter's NodePool refuses it in its template labels, where gpufleet puts the pool's labels "
                   "(cluster.eks.autoscaler is karpenter); use your own prefix, e.g. example.com/role")
TAINT_TWICE = ("a second NoSchedule taint with key 'team' (also taints[0]): a node's taints must be unique by key and "
               "effect, or Kubernetes refuses the node; keep one (a taint has one value) (got 'team=nlp:NoSchedule')")
K3S_CIDRS = "give the host an address outside 10.42.0.0/16 and 10.43.0.0/16"

# Planned clean before issue 33's second batch.
NEWLY_REFUSED: list[tuple[str, str, Change, list[str]]] = [
    # kubernetes-sigs/kueue pkg/webhooks/clusterqueue_webhook.go validateLendingLimit (versions.KUEUE's tag):
    # "must be less than or equal to the nominalQuota".
    ("kueue-lending-limit-above-nominal-quota", "teams", first_queue(lendingLimit=12), [
        "stack 'teams': gpufleet:addons.kueue.teams[0].queues[0].lendingLimit: Kueue's ClusterQueue webhook refuses a "
        "lendingLimit above the queue's nominalQuota (8): a queue lends at most what it owns (allowed: 0 to 8) (got 12)",
    ]),
    # The same webhook rule; without nominalQuota gpufleet's ClusterQueue owns the pool's whole size (2 hosts x 8).
    ("kueue-lending-limit-above-the-whole-pool", "teams", first_queue(nominalQuota=None, lendingLimit=24), [
        "stack 'teams': gpufleet:addons.kueue.teams[0].queues[0].lendingLimit: Kueue's ClusterQueue webhook refuses a "
        "lendingLimit above the queue's nominal quota, here everything pool 'a100-train' advertises at its maximum size "
        "(16 nvidia.com/gpu, as nominalQuota is unset): a queue lends at most what it owns (allowed: 0 to 16) (got 24)",
    ]),
    # karpenter.sh_nodepools.yaml (versions.KARPENTER) template labels CEL: label "kubernetes.io/hostname" is restricted
    # (kubernetes-sigs/karpenter pkg/apis/v1/labels.go RestrictedLabels).
    ("karpenter-pool-labelled-hostname", "karpenter-eks", at(f"{P}.0.labels", {"kubernetes.io/hostname": "l4-spot"}), [
        "stack 'karpenter-eks': gpufleet:nodePools[0].labels: label \"kubernetes.io/hostname\" is restricted: "
        f"{KARPENTER_LABEL} (got 'kubernetes.io/hostname')",
    ]),
    # Same CEL rules: label domain "karpenter.sh" is restricted (do-not-disrupt is a pod annotation, not a node label).
    ("karpenter-do-not-disrupt-as-a-label", "karpenter-eks", at(f"{P}.1.labels", {"karpenter.sh/do-not-disrupt": "true"}), [
        "stack 'karpenter-eks': gpufleet:nodePools[1].labels: label domain \"karpenter.sh\" is restricted (Karpenter sets "
        f"its own labels there): {KARPENTER_LABEL} (got 'karpenter.sh/do-not-disrupt')",
    ]),
    # Same CEL rules: label "karpenter.sh/nodepool" is restricted (Karpenter sets it on every node of the NodePool).
    ("karpenter-nodepool-label-set-by-hand", "karpenter-eks", at(f"{P}.0.labels", {"karpenter.sh/nodepool": "l4-spot"}), [
        "stack 'karpenter-eks': gpufleet:nodePools[0].labels: label \"karpenter.sh/nodepool\" is restricted: "
        f"{KARPENTER_LABEL} (got 'karpenter.sh/nodepool')",
    ]),
    # Same CEL rules: label domain "karpenter.k8s.aws" is restricted outside its well-known keys (aws labels.go).
    ("karpenter-label-in-the-ec2-provider-domain", "karpenter-eks", at(f"{P}.0.labels", {"karpenter.k8s.aws/team": "ml"}), [
        "stack 'karpenter-eks': gpufleet:nodePools[0].labels: label domain \"karpenter.k8s.aws\" is restricted (Karpenter "
        f"sets its own labels there): {KARPENTER_LABEL} (got 'karpenter.k8s.aws/team')",
    ]),
    # karpenter.sh_nodepools.yaml: spec.template.metadata.labels maxProperties 100 (gpufleet adds 4 of its own here).
    ("karpenter-pool-with-97-labels", "karpenter-eks", at(f"{P}.0.labels", labels(97)), [
        "stack 'karpenter-eks': gpufleet:nodePools[0].labels: the pool's Karpenter NodePool would carry 101 labels in its "
        "template, over the 100 its CRD takes (gpufleet's own labels included); drop labels (got 97)",
    ]),
    # karpenter.sh_nodepools.yaml: spec.disruption.budgets[].nodes pattern ^((100|[0-9]{1,2})%|[0-9]+)$.
    ("karpenter-disruption-budget-150-percent", "karpenter-eks", at("gpufleet:cluster.eks.autoscaler.disruptionBudget", "150%"), [
        "stack 'karpenter-eks': gpufleet:cluster.eks.autoscaler.disruptionBudget: '150%' is neither a node count such as "
        "\"1\" nor a percentage of at most 100% such as \"10%\" (Karpenter's NodePool refuses it: disruption.budgets[].nodes)",
    ]),
    # kubernetes pkg/apis/core/validation/validation.go validateNodeTaints: "taints must be unique by key and effect
    # pair" (a node registered with both never joins).
    ("eks-pool-tainted-twice-with-one-key", "prod-eks", at(f"{P}.1.taints", TAINTED_TWICE), [
        f"stack 'prod-eks': gpufleet:nodePools[1].taints[1]: {TAINT_TWICE}",
    ]),
    ("k3s-pool-tainted-twice-with-one-key", "dev", at(f"{P}.1.taints", TAINTED_TWICE), [
        f"stack 'dev': gpufleet:nodePools[1].taints[1]: {TAINT_TWICE}",
    ]),
    # NVIDIA/k8s-device-plugin cmd/mps-control-daemon/mps/device.go (v0.20.0, the pinned GPU Operator's device plugin):
    # "maximum allowed replicas exceeded", maxClients 48 from Volta on.
    ("mps-64-clients-per-gpu", "dev", at(f"{P}.0.sharing", {"mode": "mps", "replicas": 64}), [
        "stack 'dev': gpufleet:nodePools[0].sharing.replicas: an MPS server takes at most 48 clients per GPU, so the "
        "device plugin's MPS control daemon refuses more replicas and pool 'l4' advertises no GPU (allowed: 2 to 48; "
        "time-slicing has no such limit) (got 64)",
    ]),
    # EKS User Guide, cluster-endpoint.html: an IPv4 cluster refuses IPv6 public access CIDRs ("The following CIDRs
    # are invalid in publicAccessCidrs").
    ("eks-public-endpoint-ipv6-office", "prod-eks", at("gpufleet:cluster.eks.endpoint.publicAccessCidrs", ["2001:db8:1234::/48"]), [
        "stack 'prod-eks': gpufleet:cluster.eks.endpoint.publicAccessCidrs: 2001:db8:1234::/48: an IPv6 block; gpufleet's "
        "EKS clusters are IPv4, and EKS refuses IPv6 blocks on an IPv4 cluster's public endpoint (allowed: IPv4 CIDR "
        "blocks, e.g. your egress address as 203.0.113.7/32)",
    ]),
    # AWS General Reference, Amazon EKS quotas: "Public endpoint access CIDR ranges per cluster: 40", not adjustable.
    ("eks-41-public-endpoint-cidrs", "prod-eks",
     at("gpufleet:cluster.eks.endpoint.publicAccessCidrs", [f"198.51.100.{i}/32" for i in range(41)]), [
        "stack 'prod-eks': gpufleet:cluster.eks.endpoint.publicAccessCidrs: 41 CIDR blocks: EKS takes at most 40 per "
        "cluster (a quota that cannot be raised); merge adjacent blocks or use a private endpoint",
    ]),
    # docs.k3s.io/cli/server --cluster-cidr / --service-cidr defaults; Kubernetes docs, "Creating a cluster with
    # kubeadm": the pod network must not overlap any of the host networks.
    ("k3s-gpu-host-inside-the-pod-cidr", "dev", at(f"{P}.0.hosts.0.address", "10.42.0.31"), [
        "stack 'dev': gpufleet:nodePools[0].hosts[0].address: inside k3s's cluster (pod) CIDR (10.42.0.0/16): pods route "
        f"that range into the cluster network and cannot reach this host; {K3S_CIDRS} (got '10.42.0.31')",
    ]),
    ("k3s-agent-inside-the-service-cidr", "dev", at("gpufleet:cluster.k3s.agents.0.address", "10.43.7.20"), [
        "stack 'dev': gpufleet:cluster.k3s.agents[0].address: inside k3s's service CIDR (10.43.0.0/16): pods route that "
        f"range into the cluster network and cannot reach this host; {K3S_CIDRS} (got '10.43.7.20')",
    ]),
    # Mellanox/nvidia-k8s-ipam README, IPPool spec.exclusions (the only addresses NV-IPAM never hands out; gpufleet sets none).
    ("rdma-range-holds-the-hosts-addresses", "lab", at(f"{P}.2.rdmaNetwork.ipRange", "203.0.113.0/24"), [
        "stack 'lab': gpufleet:nodePools[2].rdmaNetwork.ipRange: contains gpufleet:cluster.k3s.servers[0].address "
        "(203.0.113.10): NV-IPAM would hand that address to a pod as well; give the RDMA network a range no host uses, "
        "e.g. 192.168.100.0/24 (got '203.0.113.0/24')",
    ]),
    # Container API NodePoolAutoscaling: maxNodeCount "Must be >= minNodeCount".
    ("gke-system-pool-max-below-min", "prod-gke", at("gpufleet:cluster.gke.systemPool.minNodes", 4), [
        "stack 'prod-gke': gpufleet:cluster.gke.systemPool: maxNodes (3) must be >= minNodes (4)",
    ]),
    # karpenter.sh_nodepools.yaml: consolidateAfter pattern ^(([0-9]+(s|m|h))+|Never)$ (was refused with a bare regex).
    ("karpenter-consolidate-after-one-day", "karpenter-eks", at("gpufleet:cluster.eks.autoscaler.consolidateAfter", "1d"), [
        "stack 'karpenter-eks': gpufleet:cluster.eks.autoscaler.consolidateAfter: '1d' is not a duration of hours, minutes "
        "and seconds such as \"30m\" or \"1h30m\" (Karpenter's consolidateAfter has no days: write 24h for one)",
    ]),
]

# Already refused: kept as regression tests of classes the first rounds did not list.
STILL_REFUSED: list[tuple[str, str, Change, list[str]]] = [
    # Cluster autoscaler FAQ: a node group's instance types must offer the same resources (one GPU shape).
    ("eks-instance-types-of-two-gpu-shapes", "prod-eks", at(f"{P}.1.instanceTypes", ["g6.xlarge", "g5.xlarge"]), [
        "stack 'prod-eks': gpufleet:nodePools[1].instanceTypes: a pool's instance types must share one GPU shape "
        "(g6.xlarge = 1 x L4, g5.xlarge = 1 x A10G)",
    ]),
    # terraform-aws-eks `enable_efa_only`: EFA-only interfaces exist on EFA instance types only.
    ("eks-efa-only-on-a-pool-without-efa", "prod-eks", at(f"{P}.1.efaOnly", True), [
        "stack 'prod-eks': gpufleet:nodePools[1].efaOnly: only used on EFA pools (rdma: true) (got True)",
    ]),
    # EKS CreateNodegroup: a node group's subnets must belong to the cluster's VPC.
    ("eks-pool-zone-outside-the-network", "prod-eks", at(f"{P}.0.availabilityZone", "us-east-1d"), [
        "stack 'prod-eks': gpufleet:nodePools[0].availabilityZone: not one of the network's zones (allowed: us-east-1a, "
        "us-east-1b, us-east-1c) (got 'us-east-1d')",
    ]),
    # EKS User Guide, "Amazon EKS optimized accelerated AMIs": the NVIDIA driver and toolkit are preinstalled.
    ("eks-operator-installs-the-driver-on-gpu-amis", "prod-eks", at("gpufleet:gpuOperator.driver", {"source": "operator"}), [
        "stack 'prod-eks': gpufleet:gpuOperator.driver.source: EKS GPU AMIs ship the NVIDIA driver and toolkit; the "
        "operator must not install them (allowed on eks: preinstalled) (got 'operator')",
    ]),
    # EKS API NodegroupUpdateConfig: maxUnavailablePercentage 1-100.
    ("eks-max-unavailable-150-percent", "prod-eks", at(f"{P}.1.maxUnavailable", "150%"), [
        "stack 'prod-eks': gpufleet:nodePools[1].maxUnavailable: '150%' is neither a node count (1-100) nor a percentage "
        "such as \"25%\" (1%-100%)",
    ]),
    # EKS API CreateAccessEntry: ResourceInUseException for a principal that already has an access entry.
    ("eks-same-principal-in-two-access-entries", "prod-eks", second_access_entry, [
        "stack 'prod-eks': gpufleet:cluster.eks.accessEntries: arn:aws:iam::123456789012:role/ml-engineers: EKS allows one "
        "access entry per IAM principal; merge them",
    ]),
    # Karpenter docs, NodePools: a NodePool has limits, no minimum (static replicas are another mode gpufleet does not use).
    ("karpenter-pool-with-a-warm-minimum", "karpenter-eks", at(f"{P}.0.minNodes", 1), [
        "stack 'karpenter-eks': gpufleet:nodePools[0].minNodes: a Karpenter NodePool has no minimum size: nodes exist only "
        "while pods need them (allowed with karpenter: 0) (got 1)",
    ]),
    # Karpenter chart settings.interruptionQueue (../shared/reference/karpenter/values-*.yaml): without it no drain.
    ("karpenter-spot-without-interruption-queue", "karpenter-eks", at("gpufleet:cluster.eks.autoscaler.interruptionQueue", False), [
        f"stack 'karpenter-eks': gpufleet:cluster.eks.autoscaler.interruptionQueue: pool '{pool}' is {kind}: Karpenter needs "
        "its interruption queue to drain nodes before EC2 reclaims them (spot interruption, capacity reservation end); set "
        "interruptionQueue: true (got False)" for pool, kind in (("l4-spot", "spot"), ("h100-block", "reserved"))
    ]),
    # cluster-autoscaler chart `extraArgs.expander`: a cluster autoscaler setting Karpenter never reads.
    ("karpenter-with-a-cluster-autoscaler-expander", "karpenter-eks", at("gpufleet:cluster.eks.autoscaler.expander", "price"), [
        "stack 'karpenter-eks': gpufleet:cluster.eks.autoscaler.expander: only used with kind: cluster-autoscaler "
        "(Karpenter consolidates with consolidateAfter and disruptionBudget)",
    ]),
    # EC2 User Guide, capacity-blocks.html: a Capacity Block holds a fixed count of instances.
    ("capacity-block-pool-larger-than-the-block", "karpenter-eks", at(f"{P}.1.maxNodes", 4), [
        "stack 'karpenter-eks': gpufleet:nodePools[1].maxNodes: capacity block cr-0123456789abcdef0 holds 2 instance(s): "
        "more nodes can never launch (allowed: at most 2) (got 4)",
    ]),
    # EC2 User Guide, capacity-blocks-launch.html: instances launch into a Capacity Block only in its zone.
    ("capacity-block-pool-in-another-zone", "karpenter-eks", at(f"{P}.1.availabilityZone", "us-east-1a"), [
        "stack 'karpenter-eks': gpufleet:nodePools[1].availabilityZone: capacity block cr-0123456789abcdef0 is in "
        "us-east-1b: a reserved pool must run in its reservation's zone (allowed: us-east-1b) (got 'us-east-1a')",
    ]),
    # docs.k3s.io/datastore/ha-embedded: embedded etcd needs an odd number of servers for quorum.
    ("k3s-two-servers", "ha", drop_last_server, [
        "stack 'ha': gpufleet:cluster.k3s.servers: 2 servers cannot keep etcd quorum; use 1, or an odd number >= 3 for HA",
    ]),
    # docs.k3s.io/datastore: a single server keeps SQLite, which has no etcd snapshots.
    ("k3s-etcd-snapshots-on-one-server", "dev", at("gpufleet:cluster.k3s.etcdSnapshots", {"scheduleCron": "0 */6 * * *"}), [
        "stack 'dev': gpufleet:cluster.k3s.etcdSnapshots: etcd snapshots need embedded etcd (an odd number >= 3 of "
        "servers); a single server keeps SQLite: remove the block",
    ]),
    # Spot is a cloud purchase option; own hosts have none.
    ("k3s-spot-pool", "dev", at(f"{P}.0.capacity", "spot"), [
        "stack 'dev': gpufleet:nodePools[0].capacity: spot capacity needs a cloud platform (allowed on k3s: on-demand) "
        "(got 'spot')",
    ]),
    # k8s-device-plugin README (v0.20.0): "Sharing with MPS is currently not supported on devices with MIG enabled";
    # gpufleet's sharing block shares whole GPUs, so replicas are refused on a MIG pool.
    ("mig-with-mps-replicas", "dev", at(f"{P}.1.sharing", {"mode": "mig", "profile": "1g.10gb", "replicas": 4}), [
        "stack 'dev': gpufleet:nodePools[1].sharing.replicas: not used with mig on pool 'a100': MPS or time-slicing "
        "replicas cannot be combined with MIG on one pool",
    ]),
    # NVIDIA MIG User Guide, supported profiles (../shared/reference/mig_profiles.yaml): 1g.12gb is an H100-94GB/H200 profile.
    ("mig-h100-profile-on-an-a100", "dev", at(f"{P}.1.sharing", {"mode": "mig", "profile": "1g.12gb"}), [
        "stack 'dev': gpufleet:nodePools[1].sharing.profile: profile '1g.12gb' does not exist on A100-80GB (allowed: "
        "1g.10gb, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb)",
    ]),
    # GPU Operator docs, "GPU Operator with MIG": the single strategy exposes one MIG device type per node.
    ("mig-single-strategy-with-a-mixed-layout", "dev",
     at(f"{P}.1.sharing", {"mode": "mig", "profiles": {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}, "strategy": "single"}), [
        "stack 'dev': gpufleet:nodePools[1].sharing.strategy: single needs one profile per GPU, but the layout of pool "
        "'a100' has 3 (3g.40gb, 2g.20gb, 1g.10gb): use mixed",
    ]),
    # NVIDIA MIG User Guide: an A100 has 7 compute and 8 memory slices; mig-parted refuses a layout that exceeds them.
    ("mig-layout-overfills-the-gpu", "dev", at(f"{P}.1.sharing", {"mode": "mig", "profiles": {"3g.40gb": 2, "1g.10gb": 2}}), [
        "stack 'dev': gpufleet:nodePools[1].sharing.profiles: pool 'a100': the layout uses 8 compute slices; A100-80GB has 7",
        "stack 'dev': gpufleet:nodePools[1].sharing.profiles: pool 'a100': the layout uses 10 memory slices; A100-80GB has 8",
    ]),
    # Mellanox/nvidia-k8s-ipam api/v1alpha1/ippool_validate.go: gateway "is not part of the subnet".
    ("rdma-gateway-outside-the-range", "lab", at(f"{P}.2.rdmaNetwork.gateway", "192.168.101.1"), [
        "stack 'lab': gpufleet:nodePools[2].rdmaNetwork.gateway: 192.168.101.1 is not inside ipRange 192.168.100.0/24",
    ]),
    # Same file: perNodeBlockSize must fit the subnet (and a block per node must fit for every node to get addresses).
    ("rdma-node-blocks-overflow-the-range", "lab", at(f"{P}.2.rdmaNetwork.perNodeBlockSize", 200), [
        "stack 'lab': gpufleet:nodePools[2].rdmaNetwork.perNodeBlockSize: 2 nodes x 200 addresses do not fit in ipRange "
        "192.168.100.0/24 (254 usable): use a larger range or a smaller block",
    ]),
    # k8snetworkplumbingwg/sriov-network-operator SriovNetworkNodePolicy: numVfs is required.
    ("sriov-without-a-vf-count", "lab", at(f"{P}.2.rdmaNetwork.network", "sriov"), [
        "stack 'lab': gpufleet:nodePools[2].rdmaNetwork.numVfs: sriov on pool 'a100-rdma' needs the number of virtual "
        "functions per NIC: set numVfs (1-128), e.g. 8",
    ]),
    # GKE "Define compact placement for GKE nodes": compact placement is within one zone.
    ("gke-compact-placement-over-two-zones", "prod-gke",
     both(at(f"{P}.0.gke.placement", "compact"), at(f"{P}.0.gke.zones", ["us-central1-a", "us-central1-b"])), [
        "stack 'prod-gke': gpufleet:nodePools[0].gke.zones: compact placement needs exactly one zone (got "
        "['us-central1-a', 'us-central1-b'])",
    ]),
    # GKE "Share GPUs with NVIDIA MPS": MPS is not supported with MIG partitions.
    ("gke-mps-on-mig-partitions", "prod-gke", both(at(f"{P}.0.gke.gpuPartitionSize", "1g.10gb"),
                                                   at(f"{P}.0.gke.gpuSharing", {"strategy": "mps", "maxSharedClientsPerGpu": 4})), [
        "stack 'prod-gke': gpufleet:nodePools[0].gke.gpuSharing.strategy: MPS is not supported together with MIG on one "
        "pool (use time-sharing with gpuPartitionSize, or MPS without it) (got 'mps')",
    ]),
    # Compute Engine "Consuming reserved instances": Spot VMs cannot consume reservations.
    ("gke-spot-pool-on-a-specific-reservation", "prod-gke",
     at(f"{P}.1.gke.reservation", {"type": "specific", "name": "l4-inference"}), [
        "stack 'prod-gke': gpufleet:nodePools[1].gke.reservation.type: spot nodes cannot consume reservations (allowed "
        "with spot: none) (got 'specific')",
    ]),
    # Compute Engine GPU machine types: a3-highgpu-8g comes with 8 H100s attached.
    ("gke-a3-with-four-gpus", "prod-gke", at(f"{P}.0.acceleratorCount", 4), [
        "stack 'prod-gke': gpufleet:nodePools[0].acceleratorCount: a3-highgpu-8g takes 8 x nvidia-h100-80gb (allowed: 8) "
        "(got 4)",
    ]),
    # GKE "Auto-upgrading nodes": node auto-upgrade cannot be turned off for clusters enrolled in a release channel.
    ("gke-node-auto-upgrade-off-on-a-channel", "prod-gke", at(f"{P}.1.gke.autoUpgrade", False), [
        "stack 'prod-gke': gpufleet:nodePools[1].gke.autoUpgrade: GKE keeps node auto-upgrade on in release channel "
        "REGULAR; set cluster.gke.releaseChannel: UNSPECIFIED to pin versions (got False)",
    ]),
    # Compute Engine GPU machine types: A3 High bundles 16 local SSDs (a fixed count).
    ("gke-a3-with-eight-local-ssds", "prod-gke", at(f"{P}.0.gke.localSsd", {"count": 8}), [
        "stack 'prod-gke': gpufleet:nodePools[0].gke.localSsd.count: a3-highgpu-8g comes with 16 local SSDs (allowed: 16) "
        "(got 8)",
    ]),
]

CASES = NEWLY_REFUSED + STILL_REFUSED


def _three_teams_at_exact_quota(config: dict) -> dict:
    """teams: three teams whose nominal quotas add up to the pool's 16 GPUs, each lending all it owns."""
    config[ADDONS]["kueue"]["teams"] = [
        {"name": "research", "queues": [{"pool": "a100-train", "nominalQuota": 6, "lendingLimit": 6}]},
        {"name": "vision", "namespace": "vision-ml", "queues": [{"pool": "a100-train", "nominalQuota": 6, "lendingLimit": 6}]},
        {"name": "speech", "queues": [{"pool": "a100-train", "nominalQuota": 4, "lendingLimit": 4, "borrowingLimit": 12}]},
    ]
    return config


# Valid at the edge of a rule above: each must load and plan with exit 0.
VALID: list[tuple[str, str, Change]] = [
    ("three-teams-at-exact-quota-lending-all", "teams", _three_teams_at_exact_quota),
    ("kueue-lending-the-whole-pool-without-nominal-quota", "teams", first_queue(nominalQuota=None, lendingLimit=16)),
    ("karpenter-capacity-type-label-karpenter-knows", "karpenter-eks", at(f"{P}.0.labels", {"karpenter.sh/capacity-type": "spot"})),
    ("karpenter-instance-family-label-karpenter-knows", "karpenter-eks", at(f"{P}.1.labels", {"karpenter.k8s.aws/instance-family": "p5"})),
    ("karpenter-pool-with-exactly-100-labels", "karpenter-eks", at(f"{P}.0.labels", labels(96))),
    ("karpenter-pool-with-60-labels-over-the-node-group-tag-limit", "karpenter-eks", at(f"{P}.0.labels", labels(60))),
    ("karpenter-disruption-budget-100-percent", "karpenter-eks", at("gpufleet:cluster.eks.autoscaler.disruptionBudget", "100%")),
    ("one-taint-key-with-two-effects", "prod-eks", at(f"{P}.1.taints", [{"key": "team", "value": "nlp", "effect": "NoSchedule"},
                                                                        {"key": "team", "value": "nlp", "effect": "NoExecute"}])),
    ("mps-at-48-clients-per-gpu", "dev", at(f"{P}.0.sharing", {"mode": "mps", "replicas": 48})),
    ("eks-40-public-endpoint-cidrs", "prod-eks",
     at("gpufleet:cluster.eks.endpoint.publicAccessCidrs", [f"198.51.100.{i}/32" for i in range(40)])),
    ("k3s-hosts-just-outside-k3s-cidrs", "dev", both(at(f"{P}.0.hosts.0.address", "10.44.0.31"),
                                                     at("gpufleet:cluster.k3s.agents.0.address", "10.41.255.20"))),
    ("rdma-range-beside-the-hosts-network", "lab", at(f"{P}.2.rdmaNetwork.ipRange", "198.51.100.0/24")),
    ("gke-fixed-one-node-system-pool", "prod-gke", at("gpufleet:cluster.gke.systemPool", {"machineType": "e2-standard-4",
                                                                                           "minNodes": 1, "maxNodes": 1})),
]
