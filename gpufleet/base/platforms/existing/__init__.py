"""existing: a cluster gpufleet does not create. Its traits, one module per area of shared code (gpufleet/base/platforms/contract/);
its resources are in components/existing/."""

from gpufleet.base.platforms.contract import PlatformTraits, ProgramTraits
from gpufleet.base.platforms.existing.program import STARTER_STACK
from gpufleet.base.platforms.existing.keys import ExistingKeys
from gpufleet.base.platforms.existing.versions import ExistingVersions
from gpufleet.base.platforms.existing.nodes import ExistingNodes
from gpufleet.base.platforms.existing.pricing import ExistingPricing
from gpufleet.base.platforms.existing.addons import ExistingAddons
from gpufleet.base.platforms.existing.scheduling import ExistingScheduling
from gpufleet.base.platforms.existing.review import ExistingReview
from gpufleet.base.platforms.existing.policy import ExistingPolicy

TRAITS = PlatformTraits(
    name="existing",
    order=50,
    program=ProgramTraits(components="gpufleet.components.existing.platform", extra="existing", sdk_modules=(), starter_stack=STARTER_STACK),
    keys=ExistingKeys(),
    versions=ExistingVersions(),
    nodes=ExistingNodes(),
    pricing=ExistingPricing(),
    addons=ExistingAddons(),
    scheduling=ExistingScheduling(),
    review=ExistingReview(),
    policy=ExistingPolicy(),
)
