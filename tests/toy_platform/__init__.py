"""A platform only the tests know: `toy`, on a made-up cloud (`toycloud`). It is what a new platform adds, in a
folder of its own, and nothing else: its traits here (each area it has something to say about), its resources in
components.py. No file of gpufleet names it; tests/component/test_toy_platform.py registers it and plans, prices,
reviews and judges a stack on it.

What it declares, area by area (gpufleet/base/platforms/contract/):
- program: where its components are, its install extra (none exists: it needs no SDK beyond the core).
- keys: its pools take no cloud shape, so `gpu`, `gpusPerNode` and `pricePerNodeHour` say what they are.
- review: its node pool's `gpu` and `gpusPerNode` are fixed at creation (a change replaces the pool).
- policy: its node pool is a GPU pool the pack reads (labels, taints, minimum size, spot).
Everything else (versions, nodes, pricing, add-ons, scheduling) keeps the defaults: any Kubernetes minor gpufleet
plans for, gpufleet's own labels and taints, pools priced from `pricePerNodeHour`, kube-prometheus-stack or no
metrics, the NVIDIA GPU Operator.
"""

from __future__ import annotations

from typing import Optional

from gpufleet.base.platforms.contract import PlatformTraits, PolicyTraits, ProgramTraits, ReviewTraits
from gpufleet.base.platforms.contract.policy import GpuPoolType, GpuShape, Inputs, Taint, object_taints
from gpufleet.base.platforms.contract.review import ReplaceTable
from tests.toy_platform.components import NODE_POOL_TYPE


class ToyNodePool(GpuPoolType):
    """`toycloud:index:NodePool`, as tests/toy_platform/components.py writes it."""

    token = NODE_POOL_TYPE

    def gpu_pool(self, inputs: Inputs) -> Optional[tuple[Optional[GpuShape], list[str]]]:
        gpu = inputs.text("gpu")
        if not gpu:
            return None
        return GpuShape(name=gpu, gpu=gpu, gpus=int(inputs.number("gpusPerNode") or 0), price_hour=None), [gpu]

    def labels(self, inputs: Inputs) -> dict:
        return inputs.mapping("labels")

    def taints(self, inputs: Inputs) -> list[Taint]:
        return object_taints(inputs, "taints")

    def spot(self, inputs: Inputs) -> bool:
        return inputs.truthy("spot")

    def minimum(self, inputs: Inputs) -> Optional[float]:
        return inputs.number("minSize")


class ToyPolicy(PolicyTraits):
    pool_types = (ToyNodePool(),)


class ToyReview(ReviewTraits):
    replace_tables = {NODE_POOL_TYPE: ReplaceTable(("gpu", "gpusPerNode"), "tests/toy_platform/components.py",
                                                   checked=True)}
    disruptive_kinds = {NODE_POOL_TYPE: "node pool"}


TRAITS = PlatformTraits(
    name="toy",
    program=ProgramTraits(components="tests.toy_platform.components", extra="toy"),
    review=ToyReview(),
    policy=ToyPolicy(),
)
