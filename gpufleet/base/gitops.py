"""The split between Pulumi and a GitOps engine: which in-cluster objects are "the delegated layer". The one place
that decides it (docs/gitops.md).

The delegated layer is what teams change every week and what needs no cloud rights to apply: their namespaces with
the GPU quota and limits, their Kueue queues, the PriorityClasses their jobs name, the model servers they serve, and
the GPU alerts and dashboards. Everything else stays with Pulumi: the cloud, the cluster and its pools, the GPU
operators and drivers, every CRD and every Helm chart (Kueue's, KEDA's, kube-prometheus-stack's, Envoy Gateway's,
LeaderWorkerSet's controller), and what follows the pools rather than the teams (Kueue's ResourceFlavors, Topologies
and AdmissionChecks, DRA's DeviceClasses and claim templates, storage classes, model caches, the serving Gateway).

Why there: an object is delegated when a team's change to it is the common case and no check of it needs the cloud.
A ResourceFlavor names a pool's labels and taints, which only a `pulumi up` of the pool changes; a ClusterQueue's
quota is a team's to move. The checks still hold on both sides: the spec refuses a quota over a pool's capacity
whoever applies it, and `gpufleet plan` runs the policies on the delegated objects too (gpufleet/app/gitops/).

Each layer asks `pulumi_applies(spec, part)` before it creates a part; nothing else compares an engine's name.
"""

from __future__ import annotations

from dataclasses import dataclass

PULUMI = "pulumi"
ARGOCD = "argocd"
FLUX = "flux"


@dataclass(frozen=True)
class Part:
    name: str
    """The part's name (its constant below)."""
    what: str
    """What it holds, in words (docs/gitops.md lists it)."""
    kinds: tuple[str, ...]
    """The Kubernetes kinds of its objects (the AppProject whitelists them)."""
    layer: str
    """The GpuCluster layer that makes it (components/cluster_layers.py)."""


TEAMS = Part("teams", "each Kueue team's Namespace with its GPU ResourceQuota and LimitRange, its ClusterQueues "
             "(`<team>-<pool>`) and LocalQueues", ("Namespace", "ResourceQuota", "LimitRange", "ClusterQueue",
                                                  "LocalQueue"), "workloads")
PRIORITIES = Part("priorities", "the PriorityClasses of gpufleet:addons.priorityClasses", ("PriorityClass",), "workloads")
MODELS = Part("models", "each serving namespace and model server: LeaderWorkerSet, Service, HTTPRoute, PodMonitor or "
              "PodMonitoring, KEDA ScaledObject", ("Namespace", "LeaderWorkerSet", "Service", "HTTPRoute", "PodMonitor",
                                                   "PodMonitoring", "ScaledObject"), "serving")
ALERTS = Part("alerts", "kube-prometheus-stack's PrometheusRule of GPU alerts (gpufleet-gpu-alerts)", ("PrometheusRule",),
              "observability")
DASHBOARDS = Part("dashboards", "the Grafana dashboards ConfigMap (gpufleet-dashboards)", ("ConfigMap",), "observability")

DELEGATED: tuple[Part, ...] = (ALERTS, DASHBOARDS, PRIORITIES, TEAMS, MODELS)
"""Every part a GitOps engine applies instead of Pulumi, in gpufleet's layer order."""

PULUMI_KEEPS: tuple[str, ...] = (
    "the cloud network, the control plane and the node pools",
    "the GPU operators, drivers, device plugins and DRA driver with its DeviceClasses and claim templates",
    "every CRD and every Helm release (Kueue, KEDA, JobSet, trainer, kube-prometheus-stack, Envoy Gateway, "
    "LeaderWorkerSet's controller)",
    "Kueue's ResourceFlavors, Topologies, ProvisioningRequestConfigs and AdmissionChecks: they follow the pools",
    "storage classes and model caches, the serving Gateway, the managed backends' monitoring",
    "the Argo CD cluster Secret that registers the cluster",
)
"""What stays with Pulumi under any engine (docs/gitops.md)."""


def engine(spec) -> str:
    """The stack's engine for the delegated layer (gpufleet:gitops.engine)."""
    return spec.gitops.engine


def delegates(spec) -> bool:
    """Whether a GitOps engine applies the delegated layer of this stack."""
    return engine(spec) != PULUMI


def registers_with_argocd(spec) -> bool:
    """Whether `pulumi up` registers the cluster with Argo CD (its cluster Secret: components/gitops/argocd.py)."""
    return engine(spec) == ARGOCD


def pulumi_applies(spec, part: Part) -> bool:
    """Whether `pulumi up` creates this part of the stack (always, unless a GitOps engine applies the delegated
    layer)."""
    return part not in DELEGATED or not delegates(spec)
