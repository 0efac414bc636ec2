"""The subscription's AKSInfinibandSupport feature, declared by a stack that asks for it
(`cluster.aks.infinibandFeature: register`).

The AKS InfiniBand guides register `Microsoft.ContainerService/AKSInfinibandSupport` before adding InfiniBand pools,
"to ensure that the machines in the nodepool land on the same physical Infiniband network" (Azure/aks-rdma-infiniband
website/docs/getting-started/02-prerequisites.md @700dabb4). It is a subscription-wide setting, so:
- it is retained when the stack is destroyed (`retain_on_delete`): unregistering it would change every other
  cluster of the subscription;
- it is Azure Native's `features.SubscriptionFeatureRegistration` (Microsoft.Features/featureProviders/
  subscriptionFeatureRegistrations, API 2021-07-01 in pulumi-azure-native 3.29.0): its PUT registers the feature.
  Azure Native reads a resource before creating it and refuses to create one that exists, so on a subscription that
  registered the feature already, import it into one stack or keep the default `manual` (docs/aks.md, "InfiniBand";
  not tried against a real subscription).
"""

from __future__ import annotations

from typing import Optional

import pulumi
import pulumi_azure_native.features as features

FEATURE = "AKSInfinibandSupport"
PROVIDER_NAMESPACE = "Microsoft.ContainerService"


class AksInfinibandFeature(pulumi.ComponentResource):
    """The AKSInfinibandSupport feature registration of the deploy's subscription, kept when the stack goes."""

    def __init__(self, name: str, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:aks:InfinibandFeature", name, None, opts)
        self.registration = features.SubscriptionFeatureRegistration(
            f"{name}-registration", feature_name=FEATURE, provider_namespace=PROVIDER_NAMESPACE,
            opts=pulumi.ResourceOptions(parent=self, retain_on_delete=True))
        self.register_outputs({"feature": f"{PROVIDER_NAMESPACE}/{FEATURE}"})
