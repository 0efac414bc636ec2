"""eks: Amazon EKS. Its traits, one module per area of shared code (gpufleet/base/platforms/contract/);
its resources are in components/eks/."""

from gpufleet.base.platforms.contract import PlatformTraits, ProgramTraits
from gpufleet.base.platforms.eks.program import STARTER_STACK
from gpufleet.base.platforms.eks.keys import EksKeys
from gpufleet.base.platforms.eks.versions import EksVersions
from gpufleet.base.platforms.eks.nodes import EksNodes
from gpufleet.base.platforms.eks.pricing import EksPricing
from gpufleet.base.platforms.eks.addons import EksAddons
from gpufleet.base.platforms.eks.scheduling import EksScheduling
from gpufleet.base.platforms.eks.review import EksReview
from gpufleet.base.platforms.eks.policy import EksPolicy

TRAITS = PlatformTraits(
    name="eks",
    order=10,
    program=ProgramTraits(components="gpufleet.components.eks.platform", extra="eks", sdk_modules=('pulumi_aws',), starter_stack=STARTER_STACK),
    keys=EksKeys(),
    versions=EksVersions(),
    nodes=EksNodes(),
    pricing=EksPricing(),
    addons=EksAddons(),
    scheduling=EksScheduling(),
    review=EksReview(),
    policy=EksPolicy(),
)
