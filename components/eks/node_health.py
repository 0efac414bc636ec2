"""EksNodeHealth: the EKS node monitoring agent add-on, which managed node auto repair acts on.

The agent (aws/eks-node-monitoring-agent, an EKS add-on) watches each node's logs and devices and sets node
conditions such as `AcceleratedHardwareReady` (NVIDIA XID errors, DCGM health, NVLink, GPU count) that managed node
groups with `nodeRepairConfig.enabled` repair: Replace or Reboot after 10 minutes for GPU faults, Replace after
30 minutes for kernel, runtime, network and storage faults (EKS User Guide, "Automatically repair nodes in EKS
clusters", node-repair.html; ../shared/reference/aws/node-health.md section A). Repair pauses when more than 20 % of
a group of more than five nodes is unhealthy. Both are free of charge; the agent runs as a DaemonSet on every node.
"""

from __future__ import annotations

from typing import Optional

import pulumi

from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.components.eks.addon import eks_addon

ADDON = "eks-node-monitoring-agent"


class EksNodeHealth(pulumi.ComponentResource):
    """`gpufleet:eks:NodeHealth`: the EKS node monitoring agent add-on (`<name>-agent`), whose node conditions
    (AcceleratedHardwareReady: XID errors, DCGM health) managed node auto repair acts on."""

    def __init__(self, name: str, access: ClusterAccess, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:eks:NodeHealth", name, None, opts)
        # No IAM role: the agent reads node-local logs and devices and writes node conditions through the node's own
        # credentials (the add-on's service account needs no AWS API access).
        self.addon = eks_addon(f"{name}-agent", ADDON, access, None, self, depends_on=access.ready or [])
        self.register_outputs({"addon": ADDON})
