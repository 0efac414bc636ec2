"""aks: keys traits (gpufleet/base/platforms/contract/keys.py says what each one means)."""

from __future__ import annotations

from typing import Any

from gpufleet.base.platforms.contract.keys import KeyTraits
from gpufleet.base.spec.platforms import aks_checks


class AksKeys(KeyTraits):
    block = "an `aks:` block with at least a `location`"
    pool_fields = ("vm_size", "aks")
    storage = "cluster.aks.storage (Azure Disk always, files, blob)"
    exemptions = True

    def checks(self, stack: str, spec: Any, config: dict) -> list:
        """Pool names and VM sizes, the driver, InfiniBand, the support plan, storage, and the address plan
        (aks_checks.py)."""
        if spec.cluster.aks is None:
            return []  # the cluster block's own validator reported it
        return aks_checks.check(stack, spec) + aks_checks.network_checks(stack, spec)
