"""k3s: policy traits (gpufleet/base/platforms/contract/policy.py says what each one means)."""

from __future__ import annotations

from gpufleet.base.platforms.contract.policy import NodeKind, PolicyTraits


class K3sPolicy(PolicyTraits):
    """k3s hosts join by remote commands, not pool resources: no pool types for the pack (their taints and labels
    travel in the k3s config, a secret; gpufleet/base/node_labels.py always adds the GPU taint)."""

    # pulumi-command's remote Command (components/k3s/): the install script the rules read for k3s servers.
    other_node_kinds = (NodeKind("k3s host", "command:remote:Command"),)
