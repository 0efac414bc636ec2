"""gke: keys traits (gpufleet/base/platforms/contract/keys.py says what each one means)."""

from __future__ import annotations

from typing import Any

from gpufleet.base.platforms.contract.keys import KeyTraits
from gpufleet.base.spec.platforms import gke_limits
from gpufleet.base.spec.platforms.gke import dws_run_ends, gke_checks


class GkeKeys(KeyTraits):
    block = "a `gke:` block with at least a `region`"
    pool_fields = ("machine_type", "accelerator_count", "gke")
    storage = "cluster.gke.storage (defaultDiskType, filestore, gcsFuse, managedLustre)"
    exemptions = True
    # GKE registers a node pool's labels through the kubelet's --node-labels.
    kubelet_labels = True
    # GKE reads the GCP catalog (gcp_machines.yaml ...) and its own (gke_*).
    catalog_files = ("gcp", "gke")

    def checks(self, stack: str, spec: Any, config: dict) -> list:
        """Pools against the machine catalog, the GPU stack, CUDA against GKE's driver (gke.py); the address plan,
        region and node pool names GCP accepts (gke_limits.py)."""
        return gke_checks(stack, spec, config) + gke_limits.check(stack, spec, config)

    def capacity_ends(self, spec: Any) -> list:
        """DWS (flex-start, queued) pools whose run start the stack records (gke.runStartDate): their nodes end at the
        maximum run duration (gke.py dws_run_ends)."""
        return dws_run_ends(spec)
