"""k3s: k3s on your own hosts over SSH. Its traits, one module per area of shared code (gpufleet/base/platforms/contract/);
its resources are in components/k3s/."""

from gpufleet.base.platforms.contract import PlatformTraits, ProgramTraits
from gpufleet.base.platforms.k3s.program import STARTER_STACK
from gpufleet.base.platforms.k3s.keys import K3sKeys
from gpufleet.base.platforms.k3s.versions import K3sVersions
from gpufleet.base.platforms.k3s.nodes import K3sNodes
from gpufleet.base.platforms.k3s.pricing import K3sPricing
from gpufleet.base.platforms.k3s.addons import K3sAddons
from gpufleet.base.platforms.k3s.scheduling import K3sScheduling
from gpufleet.base.platforms.k3s.review import K3sReview
from gpufleet.base.platforms.k3s.policy import K3sPolicy

TRAITS = PlatformTraits(
    name="k3s",
    order=40,
    program=ProgramTraits(components="gpufleet.components.k3s.platform", extra="k3s", sdk_modules=('pulumi_command', 'pulumi_random'), starter_stack=STARTER_STACK),
    keys=K3sKeys(),
    versions=K3sVersions(),
    nodes=K3sNodes(),
    pricing=K3sPricing(),
    addons=K3sAddons(),
    scheduling=K3sScheduling(),
    review=K3sReview(),
    policy=K3sPolicy(),
)
