"""The whole stack: one field per `gpufleet:<key>` config key."""

from __future__ import annotations

from pydantic import Field, field_validator

from gpufleet import catalog
from gpufleet.spec.addons import AddonsSpec
from gpufleet.spec.base import Model
from gpufleet.spec.cluster import ClusterSpec
from gpufleet.spec.operator import GpuOperatorSpec
from gpufleet.spec.pools import NodePoolSpec


class WorkloadsSpec(Model):
    """What the cluster must run; drives version alignment checks."""

    cuda_versions: list[str] = []
    """CUDA toolkit minor versions your images use, e.g. ["12.8"]: the nodes' driver must run each."""

    @field_validator("cuda_versions")
    @classmethod
    def _known_cuda(cls, values: list[str]) -> list[str]:
        known = catalog.cuda_versions()
        bad = [v for v in values if v not in known]
        if bad:
            raise ValueError(f"unknown CUDA version {', '.join(map(repr, bad))} (allowed: {', '.join(known)})")
        return values


class StorageSpec(Model):
    """CSI storage (reserved: filled in by the storage work)."""


class StackSpec(Model):
    """Everything under the `gpufleet:` config namespace of one stack."""

    cluster: ClusterSpec
    """gpufleet:cluster — the control plane."""
    node_pools: list[NodePoolSpec] = Field(default=[])
    """gpufleet:nodePools — GPU node pools."""
    gpu_operator: GpuOperatorSpec = GpuOperatorSpec()
    """gpufleet:gpuOperator — NVIDIA GPU Operator release and driver."""
    workloads: WorkloadsSpec = WorkloadsSpec()
    """gpufleet:workloads — what the cluster must run."""
    storage: StorageSpec = StorageSpec()
    """gpufleet:storage — CSI storage."""
    addons: AddonsSpec = AddonsSpec()
    """gpufleet:addons — optional add-ons."""
