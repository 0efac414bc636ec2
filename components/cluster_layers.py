"""The layers GpuCluster puts on a cluster once its platform has built the control plane and pools, in order.

Each layer is a small function of the `LayerContext` (the cluster so far: its name, spec, ClusterAccess, platform
and what the earlier layers made) that returns what it made, by the GpuCluster attribute that keeps it
(`{"gpu_operator": GpuOperator(...)}`), or values of None when the spec asks for none of it. The spec selects within a
layer (no `dra` pools, no DRA driver); the platform selects through its hooks (components/platform.py: `addons`,
`node_health`, `observability_after_workloads`). A new layer is a new function and an entry in `LAYERS`, in the place
its dependencies put it: GpuCluster's constructor does not grow.

The order is public: it is the order of registration, so every child keeps its URN and every plan its bytes
(tests/plan_identity.py).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import pulumi

from gpufleet.base import gitops, platforms
from gpufleet.base.node_labels import node_taints
from gpufleet.base.sharing import is_amd
from gpufleet.base.spec.features.observability import MANAGED_BACKENDS, SCRAPES_GPU_OPERATOR_DCGM
from gpufleet.base.spec.pools import NodePoolSpec
from gpufleet.base.spec.shape import shaped_pools
from gpufleet.components.platform import ClusterContext, Platform, PlatformBuild


@dataclass(frozen=True)
class LayerContext(ClusterContext):
    """The cluster as the next layer finds it."""

    platform: Optional[Platform] = None
    """The platform's components (components/<name>/platform.py `PLATFORM`)."""
    built: Optional[PlatformBuild] = None
    """What the platform built: control plane, pools, its managed Prometheus, KEDA's identity."""
    metrics_backend: str = "none"
    """`observability.metrics.backend` as it applies on this platform."""
    made: dict[str, Any] = field(default_factory=dict)
    """What the earlier layers made, by attribute (`made["workloads"]["kueue"]`)."""

    @property
    def nvidia_pools(self) -> list[NodePoolSpec]:
        """Every pool but the AMD GPU pools (CPU pools too: the NVIDIA GPU Operator's NFD runs everywhere)."""
        return [p for p in shaped_pools(self.spec) if not (p.gpu and is_amd(p))]

    @property
    def amd_pools(self) -> list[NodePoolSpec]:
        return [p for p in shaped_pools(self.spec) if p.gpu and is_amd(p)]

    def taints(self, pools: list[NodePoolSpec]) -> list:
        """The taints these pools' nodes really carry (a platform's own Spot taint too), for tolerations."""
        return [t for pool in pools for t in node_taints(pool, self.spec.cluster.platform)]


Layer = Callable[[LayerContext], dict[str, Any]]


def nvidia_gpu_operator(ctx: LayerContext) -> dict[str, Any]:
    """The NVIDIA GPU Operator and its sharing configs, for the NVIDIA pools (each vendor's operator serves only its
    own pools, issue 17), unless the platform runs its own GPU stack (AddonTraits.own_gpu_stack) or the stack has
    only AMD pools."""
    spec, nvidia, amd = ctx.spec, ctx.nvidia_pools, ctx.amd_pools
    if not (spec.gpu_operator.enabled and platforms.of(spec).addons.own_gpu_stack(spec) is None and (nvidia or not amd)):
        return {"gpu_operator": None, "gpu_sharing": None}
    from gpufleet.components.gpu_stack.operator import GpuOperator, GpuOperatorArgs
    from gpufleet.components.gpu_stack.sharing import GpuSharing, GpuSharingArgs, operator_settings

    # The backends that scrape the GPU Operator's DCGM exporter get gpufleet's counter list; only
    # kube-prometheus-stack has the ServiceMonitor CRD (a managed collector reads its own scrape configuration).
    extra = dict(operator_settings(nvidia), rdma=ctx.platform.gpu_operator_rdma(nvidia),
                 metrics=ctx.metrics_backend in SCRAPES_GPU_OPERATOR_DCGM,
                 service_monitor=ctx.metrics_backend == "kube-prometheus-stack")
    operator = GpuOperator(
        f"{ctx.name}-gpu-operator",
        GpuOperatorArgs(spec.gpu_operator, ctx.taints(nvidia), nfd_extra_taints=ctx.taints(amd),
                        cuda_versions=tuple(spec.workloads.cuda_versions), pin_digests=spec.images.pin_digests, **extra),
        ctx.access, opts=ctx.opts,
    )
    sharing = None
    if extra.get("device_plugin_config"):
        sharing = GpuSharing(f"{ctx.name}-gpu-sharing", GpuSharingArgs(nvidia, operator.namespace.metadata["name"]),
                             ctx.access, opts=ctx.opts)
    return {"gpu_operator": operator, "gpu_sharing": sharing}


def amd_gpu_operator(ctx: LayerContext) -> dict[str, Any]:
    """AMD's GPU Operator for the AMD pools, where the platform runs AMD GPUs (it loads a kernel driver on the hosts:
    bare metal; SchedulingTraits.amd_gpus)."""
    amd = ctx.amd_pools
    if not (amd and platforms.of(ctx.spec).scheduling.amd_gpus):
        return {"amd_gpu_operator": None}
    from gpufleet.components.gpu_stack.amd_operator import AmdGpuOperator, AmdGpuOperatorArgs

    args = AmdGpuOperatorArgs(ctx.spec.amd_gpu_operator, amd, own_nfd=ctx.made["gpu_operator"] is None,
                              rocm_versions=tuple(ctx.spec.workloads.rocm_versions))
    return {"amd_gpu_operator": AmdGpuOperator(f"{ctx.name}-amd-gpu-operator", args, ctx.access, opts=ctx.opts)}


def platform_addons(ctx: LayerContext) -> dict[str, Any]:
    """The platform's add-ons after the GPU operators, by role (components/<platform>/platform.py `addons`)."""
    addons = ctx.platform.addons(ctx)
    return {"addons": addons, "network_operator": addons.get("network-operator"), "storage": addons.get("storage")}


def observability(ctx: LayerContext) -> dict[str, Any]:
    """kube-prometheus-stack, when `metrics.backend` asks for it."""
    if ctx.metrics_backend != "kube-prometheus-stack":
        return {"observability": None}
    from gpufleet.components.observability.pools import pool_facts
    from gpufleet.components.observability.stack import Observability, ObservabilityArgs

    args = ObservabilityArgs(ctx.spec.observability, pool_facts(ctx.spec),
                             node_problem_detector=ctx.platform.node_problem_detector(ctx.spec),
                             apply_alerts=gitops.pulumi_applies(ctx.spec, gitops.ALERTS),
                             apply_dashboards=gitops.pulumi_applies(ctx.spec, gitops.DASHBOARDS))
    return {"observability": Observability(f"{ctx.name}-observability", args, ctx.access, opts=ctx.opts)}


def node_health(ctx: LayerContext) -> dict[str, Any]:
    """The platform's node health that needs the cluster's kube-prometheus-stack (or None without one)."""
    return {"node_health": ctx.platform.node_health(ctx, ctx.made["observability"])}


def workloads(ctx: LayerContext) -> dict[str, Any]:
    """The workload layer (queues, gang scheduling, trainer, KEDA), on the metrics the cluster has: kube-prometheus-
    stack's in-cluster Service, or the managed backend's query API with the cloud identity the platform made for KEDA
    (managed backends have no ServiceMonitor CRD)."""
    from gpufleet.components.workloads.layer import build_workloads

    stack = ctx.made["observability"]
    prometheus_url = stack.prometheus_url if stack else ctx.built.prometheus_query_url
    service_monitors = ctx.metrics_backend not in MANAGED_BACKENDS
    access = ctx.access
    if stack is not None and service_monitors:
        # Kueue's and KEDA's charts render ServiceMonitors: their releases wait for kube-prometheus-stack, whose CRDs
        # (applied before its release, docs/upgrades.md) must exist when Helm maps the manifests, or the install fails
        # ("no matches for kind ServiceMonitor"; the e2e tier's `up` found it).
        access = dataclasses.replace(access, ready=[*(access.ready or []), stack])
    made = build_workloads(ctx.name, ctx.spec, access, ctx.opts, prometheus_url=prometheus_url,
                           service_monitors=service_monitors, keda_identity=ctx.built.keda_identity)
    return {"workloads": made}


def managed_observability(ctx: LayerContext) -> dict[str, Any]:
    """A platform's managed observability stack that reads the workload layer; else kube-prometheus-stack stays."""
    managed = ctx.platform.observability_after_workloads(ctx, ctx.made["workloads"])
    return {"observability": managed or ctx.made["observability"]}


def serving(ctx: LayerContext) -> dict[str, Any]:
    """Model serving (gateway, model servers, scaling on KEDA)."""
    from gpufleet.components.serving.layer import build_serving

    kueue = ctx.made["workloads"].get("kueue")
    # A model in a Kueue team's namespace (placement by topology admits it through the team's LocalQueue) uses the
    # namespace the team's component made: one owner per object. Teams a GitOps engine applies (gpufleet:gitops) were
    # not made here, and are not passed on.
    teams = ({t.namespace_name: kueue.teams[t.name].namespace for t in ctx.spec.addons.kueue.teams if t.name in kueue.teams}
             if kueue is not None else {})
    made = build_serving(ctx.name, ctx.spec, ctx.access, ctx.opts, keda=ctx.made["workloads"].get("keda"),
                         metrics_backend=ctx.metrics_backend, team_namespaces=teams)
    return {"serving": made}


def dra_driver(ctx: LayerContext) -> dict[str, Any]:
    """NVIDIA's DRA driver for `allocation: dra` pools, after the workload layer: ResourceClaimTemplates and
    ComputeDomains in a Kueue team's namespace wait for it."""
    from gpufleet.components.gpu_stack.dra_driver import DraDriver, dra_args, driver_pools

    dra_pools = driver_pools(ctx.spec, ctx.nvidia_pools)
    if not dra_pools:
        return {"dra_driver": None}
    kueue = ctx.made["workloads"].get("kueue")
    created = ({t.namespace_name: kueue.teams[t.name].namespace for t in ctx.spec.addons.kueue.teams if t.name in kueue.teams}
               if kueue else {})
    # The GPU Operator's chart ships the ComputeDomain CRDs too: its release owns them where it runs.
    operator = ctx.made.get("gpu_operator")
    owner = operator.release if operator is not None else None
    args = dataclasses.replace(dra_args(ctx.spec, dra_pools, ctx.access.facts, crd_owner=owner), namespace_creators=created)
    return {"dra_driver": DraDriver(f"{ctx.name}-dra-driver", args, ctx.access, opts=ctx.opts)}


def cold_start(ctx: LayerContext) -> dict[str, Any]:
    """Pre-pull DaemonSets of pools that list images, and model caches (docs/cold-start.md): after the storage
    classes and the team namespaces they use exist. Nothing without `coldStart` / `modelCaches`."""
    spec = ctx.spec
    out: dict[str, pulumi.ComponentResource] = {}
    pulls = [p for p in spec.node_pools if p.cold_start and p.cold_start.pre_pulls(spec.cluster.platform)]
    if not pulls and not spec.model_caches:
        return {"cold_start": out}
    from gpufleet.components.cold_start import ImagePrePull, ImagePrePullArgs, ModelCache, ModelCacheArgs

    for pool in pulls:
        args = ImagePrePullArgs(pool.name, tuple(pool.cold_start.images), ctx.taints([pool]))
        out[f"prepull-{pool.name}"] = ImagePrePull(f"{ctx.name}-prepull-{pool.name}", args, ctx.access, opts=ctx.opts)
    after = [r for r in (ctx.made["storage"], *ctx.made["workloads"].values()) if r is not None]
    for cache in spec.model_caches:
        args = ModelCacheArgs(cache, cache.storage_class or platforms.of(spec).addons.rwx_storage_class(spec), spec.cluster.protection)
        out[f"model-cache-{cache.namespace}-{cache.name}"] = ModelCache(
            f"{ctx.name}-model-cache-{cache.namespace}-{cache.name}", args, ctx.access,
            opts=pulumi.ResourceOptions.merge(ctx.opts, pulumi.ResourceOptions(depends_on=after)))
    return {"cold_start": out}


def gitops_registration(ctx: LayerContext) -> dict[str, Any]:
    """Where Argo CD applies the delegated layer (gpufleet:gitops, gpufleet/base/gitops.py): the cluster's registration
    with it, last, carrying what the stack made. Nothing otherwise (Flux reads no cluster registration)."""
    if not gitops.registers_with_argocd(ctx.spec):
        return {"argocd_cluster": None}
    from gpufleet.components.gitops.argocd import ArgoCdCluster, cluster_args

    args = cluster_args(ctx.name, ctx.spec, platforms.of(ctx.spec).keys.outputs(ctx.built))
    return {"argocd_cluster": ArgoCdCluster(f"{ctx.name}-argocd-cluster", args, ctx.access, opts=ctx.opts)}


LAYERS: tuple[Layer, ...] = (
    nvidia_gpu_operator,
    amd_gpu_operator,
    platform_addons,
    observability,
    node_health,
    workloads,
    managed_observability,
    serving,
    dra_driver,
    cold_start,
    gitops_registration,
)
"""Every layer, in the order GpuCluster applies them (and registers their resources)."""
