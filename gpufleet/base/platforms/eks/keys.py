"""eks: keys traits (gpufleet/base/platforms/contract/keys.py says what each one means)."""

from __future__ import annotations

from typing import Any

from gpufleet.base.platforms.contract.keys import KeyTraits
from gpufleet.base.spec.platforms import eks_limits
from gpufleet.base.spec.platforms.eks_checks import eks_checks


class EksKeys(KeyTraits):
    block = "an `eks:` block with at least `network`"
    pool_fields = ("instance_type", "instance_types", "ami", "ami_release", "root_volume_gib", "availability_zone", "subnet_ids")
    storage = "cluster.eks.storage (EBS gp3 always, fsxLustre)"
    exemptions = True
    # Nodes join with the kubelet's --node-labels (EKS managed node groups and Karpenter both).
    kubelet_labels = True
    # EKS CreateNodegroup refuses labels under these prefixes ("Label cannot contain reserved prefixes"; EKS User
    # Guide, "Managed node groups: labels"); the kubelet rule (labels.kubelet_may_set) covers the Kubernetes ones.
    reserved_label_prefixes = ("eks.amazonaws.com/",)
    # EKS's own length limits (eks_checks.node_group_limit_checks) report keys and values over 63 characters.
    long_labels_reported = True
    # EKS reads the AWS catalog (aws_instances.yaml ...) and its own (eks_*).
    catalog_files = ("aws", "eks")

    def outputs(self, cluster: Any) -> dict[str, Any]:
        """Where the API is and the AWS node group names. Karpenter pools are NodePools, not node groups: only node
        groups have a name to export."""
        return {"endpoint": cluster.control_plane.cluster.endpoint,
                "nodeGroupNames": [p.node_group.node_group_name for p in cluster.node_pools if hasattr(p, "node_group")]}

    def checks(self, stack: str, spec: Any, config: dict) -> list:
        """Pools against the EC2 catalog and the node group limits, EFA, reservations, Karpenter, the AMI's driver
        (eks_checks.py); the address plan, region, names, tags and log retention AWS accepts (eks_limits.py)."""
        return eks_checks(stack, spec, config) + eks_limits.check(stack, spec, config)
