"""existing: keys traits (gpufleet/base/platforms/contract/keys.py says what each one means)."""

from __future__ import annotations

from typing import Any

from gpufleet.base.platforms.contract.keys import KeyTraits, SecretKey
from gpufleet.base.spec.platforms.existing import existing_checks

KUBECONFIG = "gpufleet:kubeconfig"


class ExistingKeys(KeyTraits):
    block = "an `existing:` block (it may be empty: `existing: {}`)"
    pool_fields = ("existing",)
    storage = "the cluster's own StorageClasses (its provider's CSI drivers); gpufleet installs no storage there"
    # The kubeconfig holds the cluster's credentials: secret only, and never echoed (the value is not shown).
    secrets = (
        SecretKey(
            "kubeconfig", "existing: the kubeconfig of the cluster (set with `pulumi config set --secret "
                          "gpufleet:kubeconfig < kubeconfig`), secret only", "kubeconfig",
            required=f"required for platform existing: set it with `pulumi config set --secret {KUBECONFIG} < kubeconfig`",
            plain=f"must be a secret, not inline in the stack file (it holds the cluster's credentials): `pulumi config rm "
                  f"{KUBECONFIG}`, then `pulumi config set --secret {KUBECONFIG} < kubeconfig`",
            elsewhere="not used on platform {platform}: gpufleet makes this cluster's kubeconfig itself (stack output "
                      "`kubeconfig`); remove it"),
    )

    def checks(self, stack: str, spec: Any, config: dict) -> list:
        """What an existing cluster's stack must say, and the keys that would create nodes (existing.py)."""
        return existing_checks(stack, spec)
