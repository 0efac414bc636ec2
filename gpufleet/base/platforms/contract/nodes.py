"""The labels and taints a platform's nodes really carry, and a pool's GPU shape from its cloud shape.

Asked by gpufleet/base/node_labels.py (`node_taints`: what the platform's node pools declare and what pods tolerate)
and gpufleet/base/spec/shape.py (`shaped`, `advertised`: what the sharing checks, the sharing configs, the quota
checks and the plan's capacity read). `pool` is a gpufleet.base.spec.pools.NodePoolSpec (not imported here: the spec
imports the platforms' registry).
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional


class GpuShape(NamedTuple):
    """What one node of a pool holds, as its cloud shape (instance, machine or VM type, offering) decides it."""

    gpu: Optional[str]
    """The catalog's GPU model name (gpufleet/base/catalog/gpus.yaml)."""
    gpus_per_node: Optional[int]


class NodeTraits:
    """Defaults: a platform that declares nothing here."""

    def taints(self, pool: Any, declared: list[dict[str, str]]) -> list[dict[str, str]]:
        """The taints the pool's nodes really carry, given gpufleet's own (`declared`: node_labels.pool_taints, the GPU
        taint, the spot taint, then the pool's extra taints), each `{key, value, effect}`. A platform that taints its
        nodes itself (a value of its own for the GPU taint, a Spot taint) says so here, so the pool declares what the
        nodes carry and pods tolerate it exactly. Default: exactly gpufleet's taints."""
        return declared

    def gpu_shape(self, pool: Any) -> Optional[GpuShape]:
        """The GPU model and GPUs per node the pool's cloud shape decides (an instance, machine or VM type, a GPU
        cloud's offering), from the catalog. None: the pool's own `gpu` and `gpusPerNode` stand (and an unknown cloud
        shape, which the platform's checks report). Default: None."""
        return None

    def advertised(self, pool: Any) -> Optional[dict[str, int]]:
        """Extended resource -> count one node of the pool advertises, when the platform's own device plugin decides
        it rather than the GPU Operator's (GKE's: gke.gpuPartitionSize, gke.gpuSharing). None: the GPU Operator's
        device plugin or the AMD GPU Operator, per the pool's `sharing` (gpufleet/base/sharing.py). Default: None."""
        return None

    def uncatalogued(self, pool: Any) -> list[str]:
        """The pool's cloud shapes (instance, machine or VM types) that the catalog lacks: such a pool plans only with
        the facts the stack gives (`gpu`, `gpusPerNode`, and `pricePerNodeHour` for the cost), and the plan warns that
        no source confirms them (gpufleet/base/spec/checks/stack_shape_checks.py, catalog_checks.stack_shape_warnings;
        issue 49). Default: none (the platform has no cloud shape: its pools always state their GPU)."""
        return []

    stack_shape_unknowns: str = "its network cards and disks are unknown"
    """What a pool of an uncatalogued shape cannot be given, as the plan's warning says it."""

    def rdma_devices(self, pool: Any) -> dict[str, int]:
        """Extended resources one node of an RDMA pool (`rdma: true`) advertises besides its GPUs, as the plan's
        capacity counts them (EKS: vpc.amazonaws.com/efa, one per EFA interface of the instance type). Default: none."""
        return {}
