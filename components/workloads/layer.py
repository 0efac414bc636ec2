"""The workload layer (gpufleet:addons): each enabled add-on as a child of the cluster component."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import pulumi

from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.base.spec.features.dra import channel_pools
from gpufleet.base import gitops
from gpufleet.base.spec import StackSpec

if TYPE_CHECKING:
    from gpufleet.components.workloads.keda import KedaPodIdentity


def build_workloads(name: str, spec: StackSpec, access: ClusterAccess, opts: pulumi.ResourceOptions,
                    prometheus_url: Optional[pulumi.Input[str]] = None, service_monitors: bool = True,
                    expose_metrics: bool = False, keda_identity: Optional["KedaPodIdentity"] = None) -> dict:
    """Create every add-on the spec enables (all off by default); returns them by role. With `prometheus_url` (the
    stack's Prometheus query address), KEDA is told that address and KEDA's metrics ports are opened; with
    `service_monitors` (a prometheus-operator Prometheus, kube-prometheus-stack) KEDA's and Kueue's charts'
    ServiceMonitors scrape them. The managed backends have no ServiceMonitor CRD: on GKE PodMonitorings scrape KEDA
    and Kueue (components/observability/gke_managed.py), on EKS the AMP scraper's configuration does
    (components/observability/amp_config.py). `keda_identity`: the cloud identity KEDA's operator queries a managed
    Prometheus with (chart values and a ClusterTriggerAuthentication). With `expose_metrics` and no address, KEDA
    opens its metrics ports for an outside collector."""
    addons = spec.addons
    out: dict[str, pulumi.ComponentResource] = {}
    if addons.priority_classes.enabled and gitops.pulumi_applies(spec, gitops.PRIORITIES):
        from gpufleet.components.workloads.priority_classes import PriorityClasses, PriorityClassesArgs

        out["priorityClasses"] = PriorityClasses(
            f"{name}-priority", PriorityClassesArgs(list(addons.priority_classes.classes)), access, opts=opts
        )
    if addons.kueue.enabled or addons.volcano.enabled:
        from gpufleet.components.workloads.pool_flavor import pool_flavors

        flavors = pool_flavors(spec)
    if addons.kueue.enabled:
        from gpufleet.components.workloads.kueue import Kueue, KueueArgs

        args = KueueArgs(addons.kueue, flavors, metrics=prometheus_url is not None and service_monitors,
                         compute_domains=bool(spec.dra.compute_domains), channel_pools=channel_pools(spec),
                         teams=gitops.pulumi_applies(spec, gitops.TEAMS))
        out["kueue"] = Kueue(f"{name}-kueue", args, access, opts=opts)
    if addons.jobset.enabled:
        from gpufleet.components.workloads.jobset import JobSet, JobSetArgs

        out["jobset"] = JobSet(f"{name}-jobset", JobSetArgs(), access, opts=opts)
    if addons.trainer.enabled:
        from gpufleet.components.workloads.trainer import Trainer, TrainerArgs

        jobset = out.get("jobset")
        out["trainer"] = Trainer(
            f"{name}-trainer",
            TrainerArgs(install_jobset=jobset is None, depends_on=[jobset.release] if jobset else []),
            access, opts=opts,
        )
    if addons.volcano.enabled:
        from gpufleet.components.workloads.volcano import Volcano, VolcanoArgs

        out["volcano"] = Volcano(
            f"{name}-volcano", VolcanoArgs([flavors[p] for p in addons.volcano.pools]), access, opts=opts
        )
    if addons.keda.enabled:
        from gpufleet.components.workloads.keda import Keda, KedaArgs

        out["keda"] = Keda(f"{name}-keda", KedaArgs(prometheus_url=prometheus_url, service_monitors=service_monitors,
                                                    expose_metrics=expose_metrics, pod_identity=keda_identity),
                           access, opts=opts)
    return out
