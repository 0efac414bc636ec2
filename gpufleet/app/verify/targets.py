"""What `gpufleet verify` checks, read from a stack: the GPU stack's operator namespaces and, per GPU pool, its
node selector, tolerations, advertised resources per node (gpufleet.base.capacity: the plan's capacity section) and
RDMA set-up. Pure: no cluster access."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from gpufleet.base import labels, platforms
from gpufleet.app.verify.nccl import allreduce
from gpufleet.base import sharing
from gpufleet.base.capacity import capacity
from gpufleet.base.node_labels import node_tolerations, pool_labels
from gpufleet.base.spec import StackSpec
from gpufleet.base.spec.shape import shaped_pools


@dataclass(frozen=True)
class Operator:
    """An operator the stack installs: its DaemonSets in `namespace` must all be Ready."""

    name: str
    namespace: str


@dataclass(frozen=True)
class DescribedNodes:
    """What the stack says an existing cluster's pool already is (cluster.platform existing,
    gpufleet/base/spec/platforms/existing.py): `verify` checks the live nodes agree before anything is scheduled there."""

    selector: dict[str, str]  # existing.nodeSelector: labels the pool's nodes carry
    names: list[str]  # existing.nodes: the nodes gpufleet labels (may be empty)
    min_nodes: int
    max_nodes: int
    gpus_per_node: int
    gpu_count_label: bool  # whether GPU feature discovery's nvidia.com/gpu.count counts whole GPUs on this pool
    labels: dict[str, str]  # gpufleet's pool labels (gpufleet/base/node_labels.py) the nodes must carry


@dataclass(frozen=True)
class PoolTarget:
    name: str
    vendor: str  # nvidia | amd
    node_selector: dict[str, str]
    tolerations: list[dict]
    advertised: dict[str, int]  # extended resource -> count per node (the plan's capacity)
    gpus_per_node: int
    shared: bool
    mig: bool
    rdma: bool
    instance_type: Optional[str]
    capacity: str = "on-demand"  # the pool's capacity type (spec): queued pools scale only via ProvisioningRequests
    rdma_manifests: list[dict] = field(default_factory=list)  # gpufleet.app.verify.nccl.allreduce pods (k3s RDMA, EKS EFA pools)
    nccl_note: str = ""  # why an RDMA pool has no NCCL manifests (reported as the nccl check's skip reason)
    described: Optional[DescribedNodes] = None  # an existing cluster's pool: the nodes the stack describes

    @property
    def probe_resource(self) -> str:
        """The resource the one-GPU probe pod requests: the pool's first advertised one."""
        return next(iter(self.advertised), labels.gpu_resource(self.vendor))


@dataclass(frozen=True)
class Targets:
    stack: str
    platform: str
    operators: list[Operator]
    operators_note: str  # why there is no operator to check (GKE-managed drivers), else ""
    pools: list[PoolTarget]


def targets(stack: str, spec: StackSpec) -> Targets:
    from gpufleet.components.gpu_stack import operator as nvidia_operator
    from gpufleet.components.gpu_stack import amd_operator

    platform = spec.cluster.platform
    pools = shaped_pools(spec)
    amd_pools = [p for p in pools if p.gpu and sharing.is_amd(p)]
    nvidia_pools = [p for p in pools if not (p.gpu and sharing.is_amd(p))]
    addons = platforms.of(spec).addons
    ops = []
    # Same decision as gpufleet/components/gpu_cluster.py (GpuCluster) makes when it installs the operators: none of
    # NVIDIA's where the platform runs its own GPU stack (the note says so).
    note = addons.own_gpu_stack(spec) or ""
    if spec.gpu_operator.enabled and not note and (nvidia_pools or not amd_pools):
        ops.append(Operator("NVIDIA GPU Operator", nvidia_operator.NAMESPACE))
    if amd_pools and platforms.of(spec).scheduling.amd_gpus:
        ops.append(Operator("AMD GPU Operator", amd_operator.NAMESPACE))
    caps = {c.pool: c for c in capacity(spec)}
    out = []
    for pool in pools:
        cap = caps.get(pool.name)
        vendor = "amd" if pool.gpu and sharing.is_amd(pool) else "nvidia"
        tolerations = node_tolerations(pool, platform)
        itype = pool.instance_type or (list(pool.instance_types or []) or [None])[0] or pool.machine_type
        rdma_objs, nccl_note = allreduce.for_pool(spec, pool) if pool.rdma else ([], "")
        out.append(PoolTarget(
            name=pool.name, vendor=vendor, node_selector={labels.POOL_LABEL: pool.name}, tolerations=tolerations,
            advertised=dict(cap.advertised) if cap else {}, gpus_per_node=pool.gpus_per_node or 1,
            shared=bool(cap and cap.shared), mig=pool.sharing.mode == "mig", rdma=pool.rdma, instance_type=itype,
            rdma_manifests=rdma_objs, nccl_note=nccl_note, capacity=pool.capacity, described=_described(pool),
        ))
    return Targets(stack, platform, ops, note, out)


def _described(pool) -> Optional[DescribedNodes]:
    if pool.existing is None:
        return None
    # GPU feature discovery's nvidia.com/gpu.count is the number of GPUs, except under MIG's single strategy, where it
    # counts MIG devices (NVIDIA/k8s-device-plugin docs/gpu-feature-discovery/README.md, "Generated Labels").
    mig_single = pool.sharing.mode == "mig" and pool.sharing.strategy == "single"
    return DescribedNodes(
        selector=dict(pool.existing.node_selector), names=list(pool.existing.nodes), min_nodes=pool.min_nodes,
        max_nodes=pool.max_nodes, gpus_per_node=pool.gpus_per_node or 0,
        gpu_count_label=not mig_single and not sharing.is_amd(pool), labels=pool_labels(pool),
    )
