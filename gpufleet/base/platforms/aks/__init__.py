"""aks: Azure Kubernetes Service. Its traits, one module per area of shared code (gpufleet/base/platforms/contract/);
its resources are in components/aks/."""

from gpufleet.base.platforms.contract import PlatformTraits, ProgramTraits
from gpufleet.base.platforms.aks.program import STARTER_STACK
from gpufleet.base.platforms.aks.keys import AksKeys
from gpufleet.base.platforms.aks.versions import AksVersions
from gpufleet.base.platforms.aks.nodes import AksNodes
from gpufleet.base.platforms.aks.pricing import AksPricing
from gpufleet.base.platforms.aks.addons import AksAddons
from gpufleet.base.platforms.aks.scheduling import AksScheduling
from gpufleet.base.platforms.aks.review import AksReview
from gpufleet.base.platforms.aks.policy import AksPolicy

TRAITS = PlatformTraits(
    name="aks",
    order=30,
    program=ProgramTraits(components="gpufleet.components.aks.platform", extra="aks", sdk_modules=('pulumi_azure_native',), starter_stack=STARTER_STACK),
    keys=AksKeys(),
    versions=AksVersions(),
    nodes=AksNodes(),
    pricing=AksPricing(),
    addons=AksAddons(),
    scheduling=AksScheduling(),
    review=AksReview(),
    policy=AksPolicy(),
)
