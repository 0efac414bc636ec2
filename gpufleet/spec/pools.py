"""gpufleet:nodePools — GPU node pools, one component each."""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import Field, ValidationInfo, field_validator

from gpufleet import catalog
from gpufleet.spec.base import DNS_LABEL, Model
from gpufleet.spec.cluster import Host
from gpufleet.spec.gke import GkePoolSpec

SHARING_MODES = ("none", "time-slicing", "mps", "mig")
# Sharing modes whose wiring exists; the others are reserved names in the schema.
IMPLEMENTED_SHARING_MODES = ("none",)


class Taint(Model):
    key: str = Field(min_length=1)
    value: str = ""
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] = "NoSchedule"


class SharingSpec(Model):
    """How the pool's GPUs are shared between pods."""

    mode: Literal["none", "time-slicing", "mps", "mig"] = "none"
    """none: one pod per GPU. time-slicing | mps | mig share GPUs between pods."""

    @field_validator("mode")
    @classmethod
    def _implemented(cls, v: str) -> str:
        if v not in IMPLEMENTED_SHARING_MODES:
            raise ValueError(f"sharing mode '{v}' is not available yet (available: {', '.join(IMPLEMENTED_SHARING_MODES)})")
        return v


class NodePoolSpec(Model):
    """A GPU node pool: nodes of one GPU shape, labelled and tainted so only GPU work lands there."""

    name: str = Field(pattern=DNS_LABEL, max_length=40)
    """Pool name: node label `gpufleet.io/pool` and child resource names. Renaming replaces the pool."""
    gpu: Optional[str] = None
    """GPU model from the catalog (k3s); on clouds it follows from the instance type."""
    gpus_per_node: Optional[int] = Field(default=None, ge=1, le=16)
    """GPUs in each node (k3s); on clouds it follows from the instance type."""
    hosts: list[Host] = []
    """k3s: the GPU machines of this pool; the pool's size is their number."""
    min_nodes: int = Field(default=0, ge=0)
    """Cloud pools: minimum size; 0 lets the autoscaler remove every idle GPU node."""
    max_nodes: int = Field(default=1, ge=0)
    """Cloud pools: maximum size the autoscaler may reach (must be >= minNodes)."""
    capacity: Literal["on-demand", "spot"] = "on-demand"
    """on-demand, or spot/preemptible (cheaper, can be interrupted)."""
    sharing: SharingSpec = SharingSpec()
    """GPU sharing for this pool; default: none (one pod per GPU)."""
    rdma: bool = False
    """RDMA networking for multi-node training on this pool."""
    labels: dict[str, str] = {}
    """Extra node labels (gpufleet adds pool, GPU model and capacity type itself)."""
    taints: list[Taint] = []
    """Extra node taints (gpufleet adds the nvidia.com/gpu NoSchedule taint itself)."""
    price_per_node_hour: Optional[float] = Field(default=None, ge=0)
    """Hourly cost of one node, for the plan's cost section where the catalog has no price (bare metal)."""
    machine_type: Optional[str] = None
    """GKE: GPU machine type (gpufleet/catalog/gcp_machines.yaml); the GPU model and count follow from it."""
    accelerator_count: Optional[int] = Field(default=None, ge=1, le=16)
    """GKE: GPUs to attach where the machine type takes several counts (N1 + T4); default: the machine's fixed count."""
    gke: Optional[GkePoolSpec] = None
    """GKE: driver installation, GPU sharing, MIG partition size, reservation, zones; default: GKE's defaults."""

    @field_validator("gpu")
    @classmethod
    def _known_gpu(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and v not in catalog.gpu_models():
            raise ValueError(f"unknown GPU model '{v}' (allowed: {', '.join(catalog.gpu_models())})")
        return v

    @field_validator("max_nodes")
    @classmethod
    def _max_at_least_min(cls, v: int, info: ValidationInfo) -> int:
        lo = info.data.get("min_nodes")
        if lo is not None and v < lo:
            raise ValueError(f"maxNodes ({v}) must be >= minNodes ({lo})")
        return v

