"""existing: nodes traits (gpufleet/base/platforms/contract/nodes.py says what each one means)."""

from __future__ import annotations

from gpufleet.base.platforms.contract.nodes import NodeTraits


class ExistingNodes(NodeTraits):
    pass
