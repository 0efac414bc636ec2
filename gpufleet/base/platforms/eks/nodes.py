"""eks: nodes traits (gpufleet/base/platforms/contract/nodes.py says what each one means)."""

from __future__ import annotations

from typing import Any, Optional

from gpufleet.base import labels as L
from gpufleet.base.catalog import aws
from gpufleet.base.platforms.contract.nodes import GpuShape, NodeTraits


class EksNodes(NodeTraits):
    stack_shape_unknowns = "its network cards, EFA interfaces and instance store are unknown (RDMA and raid0 are not offered)"

    def uncatalogued(self, pool: Any) -> list[str]:
        from gpufleet.base.spec.platforms.eks import pool_instance_types

        return [t for t in pool_instance_types(pool) if t not in aws.instance_types()]

    def gpu_shape(self, pool: Any) -> Optional[GpuShape]:
        """The first instance type's GPU model and count (gpufleet/base/catalog/aws_instances.yaml)."""
        t = _instance_type(pool)
        return None if t is None else GpuShape(t.gpu, t.gpus)

    def rdma_devices(self, pool: Any) -> dict[str, int]:
        """vpc.amazonaws.com/efa: every EFA interface the instance type supports (an EFA pool uses all of them)."""
        from gpufleet.base.spec.platforms.eks import pool_instance_types

        return {L.EFA_RESOURCE: aws.instance_type(pool_instance_types(pool)[0]).efa_interfaces}


def _instance_type(pool: Any) -> Optional[aws.InstanceType]:
    """The catalog's facts of the pool's first instance type (None: no type, or one the catalog does not know)."""
    from gpufleet.base.spec.platforms.eks import pool_instance_types

    types = pool_instance_types(pool)
    if not types or types[0] not in aws.instance_types():
        return None
    return aws.instance_type(types[0])
