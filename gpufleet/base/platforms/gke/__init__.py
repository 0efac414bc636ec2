"""gke: Google Kubernetes Engine. Its traits, one module per area of shared code (gpufleet/base/platforms/contract/);
its resources are in components/gke/."""

from gpufleet.base.platforms.contract import PlatformTraits, ProgramTraits
from gpufleet.base.platforms.gke.program import STARTER_STACK
from gpufleet.base.platforms.gke.keys import GkeKeys
from gpufleet.base.platforms.gke.versions import GkeVersions
from gpufleet.base.platforms.gke.nodes import GkeNodes
from gpufleet.base.platforms.gke.pricing import GkePricing
from gpufleet.base.platforms.gke.addons import GkeAddons
from gpufleet.base.platforms.gke.scheduling import GkeScheduling
from gpufleet.base.platforms.gke.review import GkeReview
from gpufleet.base.platforms.gke.policy import GkePolicy

TRAITS = PlatformTraits(
    name="gke",
    order=20,
    program=ProgramTraits(components="gpufleet.components.gke.platform", extra="gke", sdk_modules=('pulumi_gcp',), starter_stack=STARTER_STACK),
    keys=GkeKeys(),
    versions=GkeVersions(),
    nodes=GkeNodes(),
    pricing=GkePricing(),
    addons=GkeAddons(),
    scheduling=GkeScheduling(),
    review=GkeReview(),
    policy=GkePolicy(),
)
