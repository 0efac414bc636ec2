"""The whole stack: one field per `gpufleet:<key>` config key."""

from typing import Annotated, Optional

from pydantic import Field, StringConstraints, field_validator

from gpufleet.base import catalog, limits
from gpufleet.base.catalog import amd
from gpufleet.base.spec.features.addons import AddonsSpec
from gpufleet.base.spec.base import Model
from gpufleet.base.spec.cluster import ClusterSpec
from gpufleet.base.spec.features.dra import DraSpec
from gpufleet.base.spec.features.gitops import GitopsSpec
from gpufleet.base.spec.features.cold_start import ModelCacheSpec
from gpufleet.base.spec.features.amd_operator import AmdGpuOperatorSpec
from gpufleet.base.spec.ids import STACK_NAME
from gpufleet.base.spec.features.images import ImagesSpec
from gpufleet.base.spec.features.observability import ObservabilitySpec
from gpufleet.base.spec.features.operator import GpuOperatorSpec
from gpufleet.base.spec.pools import NodePoolSpec
from gpufleet.base.spec.features.registry import RegistrySpec
from gpufleet.base.spec.features.serving import ServingSpec
from gpufleet.base.spec.features.storage import CheckpointVolumeSpec, LocalPathSpec, NfsSpec



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

    rocm_versions: list[str] = []
    """ROCm minor releases your images use on AMD pools, e.g. ["7.2"]: the AMD GPU Driver of the nodes must run
    each (AMD's user-space / driver support matrix, gpufleet/base/catalog/amd_gpus.yaml)."""

    @field_validator("rocm_versions")
    @classmethod
    def _known_rocm(cls, values: list[str]) -> list[str]:
        known = amd.rocm_versions()
        bad = [v for v in values if v not in known]
        if bad:
            raise ValueError(f"unknown ROCm version {', '.join(map(repr, bad))} (allowed: {', '.join(known)})")
        return values


class StorageSpec(Model):
    """CSI storage (k3s: local-path RWO default, NFS CSI RWX class, optional checkpoint claim)."""

    local_path: LocalPathSpec = LocalPathSpec()
    """k3s: node-local RWO volumes as the default StorageClass; default: on, at k3s's default path."""
    nfs: Optional[NfsSpec] = None
    """NFS CSI driver and a ReadWriteMany StorageClass on this server; default: none."""
    checkpoints: Optional[CheckpointVolumeSpec] = None
    """A ReadWriteMany checkpoint claim on the NFS class (needs `nfs`); default: none."""


class StackSpec(Model):
    """Everything under the `gpufleet:` config namespace of one stack."""

    cluster: ClusterSpec
    """gpufleet:cluster — the control plane."""
    node_pools: list[NodePoolSpec] = Field(default=[], max_length=limits.NODE_POOLS_MAX)
    """gpufleet:nodePools — GPU node pools, at most limits.NODE_POOLS_MAX (100: AKS's node pools per cluster)."""
    gpu_operator: GpuOperatorSpec = GpuOperatorSpec()
    """gpufleet:gpuOperator — NVIDIA GPU Operator release and driver."""
    amd_gpu_operator: AmdGpuOperatorSpec = AmdGpuOperatorSpec()
    """gpufleet:amdGpuOperator — AMD GPU Operator release and driver (k3s stacks with AMD Instinct pools)."""
    workloads: WorkloadsSpec = WorkloadsSpec()
    """gpufleet:workloads — what the cluster must run."""
    storage: StorageSpec = StorageSpec()
    """gpufleet:storage — CSI storage."""
    addons: AddonsSpec = AddonsSpec()
    """gpufleet:addons — optional add-ons."""
    observability: ObservabilitySpec = ObservabilitySpec()
    """gpufleet:observability — metrics, GPU alerts, dashboards, node health and repair."""
    dra: DraSpec = DraSpec()
    """gpufleet:dra — ResourceClaimTemplates and ComputeDomains of the DRA pools (nodePools[*].allocation: dra)."""
    model_caches: list[ModelCacheSpec] = Field(default=[], max_length=32)
    """gpufleet:modelCaches — shared read-only model caches on the stack's ReadWriteMany storage, each filled once by a
    prefetch Job (docs/cold-start.md)."""
    images: ImagesSpec = ImagesSpec()
    """gpufleet:images — how the images of the charts gpufleet configures are referenced (pinned by digest or not)."""
    registry: RegistrySpec = RegistrySpec()
    """gpufleet:registry — a private mirror every image is pulled from (air-gapped sites, docs/air-gapped.md)."""
    serving: ServingSpec = ServingSpec()
    """gpufleet:serving — inference serving: LeaderWorkerSet model servers, a Gateway with the Inference Extension, scaling
    on the model server's metrics (docs/inference.md)."""
    gitops: GitopsSpec = GitopsSpec()
    """gpufleet:gitops — who applies the in-cluster layer teams own: `pulumi` (default), or `argocd` / `flux` from
    `gpufleet export <engine>` (docs/gitops.md)."""
    depends_on: list[Annotated[str, StringConstraints(pattern=STACK_NAME)]] = Field(default=[], max_length=64)
    """gpufleet:dependsOn — stacks this one needs deployed first (it reads their outputs through a StackReference):
    `gpufleet up` updates them before it, and never starts it when one of them failed (docs/fleet.md). Default: none."""
