"""aks: scheduling traits (gpufleet/base/platforms/contract/scheduling.py says what each one means)."""

from __future__ import annotations

from gpufleet.base import labels as L
from gpufleet.base.platforms.contract.scheduling import SchedulingTraits


class AksScheduling(SchedulingTraits):
    # No serving gateway class yet (gateway_classes: none, so gpufleet:serving is refused on AKS); the Service below is
    # what Envoy Gateway gets once one is declared.

    def gateway_service(self, external: bool) -> dict:
        """An Azure internal load balancer (`azure-load-balancer-internal: "true"`, learn.microsoft.com/azure/aks/
        internal-lb: a private IP from the cluster's virtual network, no public IP), or the public one when external."""
        if external:
            return {"type": "LoadBalancer"}
        return {"type": "LoadBalancer", "annotations": {L.AZURE_LB_INTERNAL_ANNOTATION: "true"}}
