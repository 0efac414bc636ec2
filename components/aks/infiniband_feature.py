"""The subscription's AKSInfinibandSupport feature, declared by a stack that asks for it
(`cluster.aks.infinibandFeature: register`).

The AKS InfiniBand guides register `Microsoft.ContainerService/AKSInfinibandSupport` before adding InfiniBand pools,
"to ensure that the machines in the nodepool land on the same physical Infiniband network" (Azure/aks-rdma-infiniband
website/docs/getting-started/02-prerequisites.md @700dabb4). It is a subscription-wide setting, so:
- it is retained when the stack is destroyed (`retain_on_delete`): unregistering it would change every other
  cluster of the subscription;
- the classic provider's `ResourceProviderFeatureRegistration` (azurerm_resource_provider_feature_registration) manages
  only features that are not registered yet and whose approval is automatic ("Only Preview Features which have an
  ApprovalType of AutoApproval can be managed"): a subscription that registered it already keeps the default
  `manual` (docs/aks.md, "InfiniBand").
"""

from __future__ import annotations

from typing import Optional

import pulumi
import pulumi_azure as azure

FEATURE = "AKSInfinibandSupport"
PROVIDER_NAMESPACE = "Microsoft.ContainerService"


class AksInfinibandFeature(pulumi.ComponentResource):
    """The AKSInfinibandSupport feature registration of the deploy's subscription, kept when the stack goes."""

    def __init__(self, name: str, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:aks:InfinibandFeature", name, None, opts)
        self.registration = azure.core.ResourceProviderFeatureRegistration(
            f"{name}-registration", name=FEATURE, provider_name=PROVIDER_NAMESPACE,
            opts=pulumi.ResourceOptions(parent=self, retain_on_delete=True))
        self.register_outputs({"feature": f"{PROVIDER_NAMESPACE}/{FEATURE}"})
