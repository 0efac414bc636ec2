"""Kueue: queues with GPU quotas per team and pool, and all-or-nothing admission of multi-pod jobs.

Per pool a ResourceFlavor (the pool's node labels; its taints as tolerations Kueue adds to admitted
pods). Per team and pool a ClusterQueue `<team>-<pool>` in one cohort (idle quota is lent and reclaimed
by preemption), and a LocalQueue named after the pool in the team's namespace. Quotas count what the
pool advertises (GPUs, or time-slice replicas / MIG slices on shared pools). DRA pools' pods claim GPUs through
ResourceClaimTemplates instead: Kueue's Configuration maps NVIDIA's DeviceClasses to quota resources
(`resources.deviceClassMappings`, KueueDRAIntegration, beta and on by default since Kueue 0.18: Kueue at the pin (versions.KUEUE)
site/content/en/docs/concepts/dynamic_resource_allocation.md, tasks/manage/setup_dra.md) and those pools' ClusterQueues
count them (gpufleet/base/labels.py DRA_*_RESOURCE).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import pulumi
import pulumi_kubernetes as k8s
import yaml

from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.components.gpu_stack.dra_driver import CHANNEL_CLASS, GPU_CLASS, mig_class
from gpufleet.components.helm_chart import namespaced_release
from gpufleet.components.workloads.pool_flavor import PoolFlavor
from gpufleet.components.workloads.team_namespace import TeamNamespace, TeamNamespaceArgs
from gpufleet.base import labels as L
from gpufleet.base import versions
from gpufleet.base.spec.features.addons import KueueSpec, QueueSpec, TeamSpec

NAMESPACE = "kueue-system"
API_VERSION = "kueue.x-k8s.io/v1beta2"
# Kueue admits a workload only if its ClusterQueue covers every resource it requests. CPU and memory are
# covered with quotas no cluster reaches, so GPUs alone gate admission.
UNGATED = {"cpu": "100000", "memory": "1000Ti"}


# The Kueue Configuration the chart holds by default at the pin (charts/kueue/values.yaml at versions.KUEUE,
# managerConfig.controllerManagerConfigYaml, its uncommented keys; tests/upstream/test_workload_chart_values.py compares
# it with the pinned chart). Setting that value replaces the whole file, so gpufleet writes it back with its additions.
DEFAULT_MANAGER_CONFIG: dict = {
    "apiVersion": "config.kueue.x-k8s.io/v1beta2",
    "kind": "Configuration",
    "health": {"healthProbeBindAddress": ":8081"},
    "metrics": {"bindAddress": ":8443"},
    "webhook": {"port": 9443},
    "leaderElection": {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"},
    "controller": {"groupKindConcurrency": {
        "Job.batch": 5, "Pod": 5, "Workload.kueue.x-k8s.io": 10, "LocalQueue.kueue.x-k8s.io": 5,
        "ClusterQueue.kueue.x-k8s.io": 5, "ResourceFlavor.kueue.x-k8s.io": 1,
    }},
    "clientConnection": {"qps": 300, "burst": 500},
    "integrations": {"frameworks": [
        "batch/job", "kubeflow.org/mpijob", "ray.io/rayjob", "ray.io/rayservice", "ray.io/raycluster",
        "jobset.x-k8s.io/jobset", "workload.codeflare.dev/appwrapper", "trainer.kubeflow.org/trainjob", "pod",
        "deployment", "statefulset", "leaderworkerset.x-k8s.io/leaderworkerset",
    ]},
}
# An unmapped DeviceClass makes a workload inadmissible ("DeviceClass ... is not mapped in DRA configuration",
# Kueue at the pin, pkg/dra/claims.go), so a ComputeDomain's channel class is mapped too, with a quota no job reaches.
DRA_CLASS_RESOURCES = {GPU_CLASS: L.DRA_GPU_RESOURCE, CHANNEL_CLASS: L.DRA_CHANNEL_RESOURCE}
UNGATED_CHANNELS = "100000"


def dra_resource(resource: str) -> str:
    """The quota resource a DRA pool's claims charge for what its flavor advertises (whole GPUs, MIG slices)."""
    if resource == L.GPU_RESOURCE:
        return L.DRA_GPU_RESOURCE
    if resource.startswith(L.MIG_RESOURCE_PREFIX):
        return L.DRA_MIG_RESOURCE_PREFIX + resource.removeprefix(L.MIG_RESOURCE_PREFIX)
    return resource


def quota_of(flavor: PoolFlavor, quota: dict[str, int]) -> dict[str, int]:
    """A quota in the resources the pool's pods are charged: as is on device-plugin pools, DRA resources on DRA pools."""
    if flavor.allocation != "dra":
        return quota
    out: dict[str, int] = {}
    for r, n in quota.items():
        out[dra_resource(r)] = out.get(dra_resource(r), 0) + n
    return out


def device_class_mappings(pools: dict[str, PoolFlavor], compute_domains: bool, channel_pools: tuple[str, ...] = ()) -> list[dict]:
    """Kueue's resources.deviceClassMappings for the stack's DRA pools: whole GPUs, MIG devices where a DRA pool is cut
    into MIG, ComputeDomain channels where the stack has ComputeDomains. Without DRA pools: only the channels, where
    device-plugin pools run ComputeDomains (`channel_pools`: their pods claim channels, not GPUs); else empty."""
    dra = [f for f in pools.values() if f.allocation == "dra"]
    if not dra:
        return [{"name": L.DRA_CHANNEL_RESOURCE, "deviceClassNames": [CHANNEL_CLASS]}] if compute_domains and channel_pools else []
    used = {dra_resource(r) for f in dra for r in f.per_node}
    profiles = sorted(r.removeprefix(L.DRA_MIG_RESOURCE_PREFIX) for r in used if r.startswith(L.DRA_MIG_RESOURCE_PREFIX))
    out = [{"name": L.DRA_GPU_RESOURCE, "deviceClassNames": [GPU_CLASS]}]
    # One resource per MIG profile (gpufleet's DeviceClass per profile: components/gpu_stack/dra_driver.py mig_class),
    # so a queue's quota counts each profile as the device plugin's nvidia.com/mig-<profile> would.
    out += [{"name": L.DRA_MIG_RESOURCE_PREFIX + p, "deviceClassNames": [mig_class(p)]} for p in profiles]
    if compute_domains:
        out.append({"name": L.DRA_CHANNEL_RESOURCE, "deviceClassNames": [CHANNEL_CLASS]})
    return out


def manager_config(mappings: list[dict]) -> str:
    """controllerManagerConfigYaml: the chart's default Configuration with gpufleet's device class mappings."""
    return yaml.safe_dump({**DEFAULT_MANAGER_CONFIG, "resources": {"deviceClassMappings": mappings}}, sort_keys=False)


def chart_values(metrics: bool, mappings: list[dict]) -> dict:
    """The Kueue release's values (kueue chart values.yaml at the pin): `enablePrometheus` creates the controller's
    ServiceMonitor; `managerConfig.controllerManagerConfigYaml` only where DRA pools need device class mappings."""
    out: dict = {"enablePrometheus": True} if metrics else {}
    if mappings:
        out["managerConfig"] = {"controllerManagerConfigYaml": manager_config(mappings)}
    return out


@dataclass(frozen=True)
class KueueArgs:
    spec: KueueSpec
    """Teams, queues, cohort and preemption from the stack spec."""
    pools: dict[str, PoolFlavor]
    """The stack's pools by name (components/workloads/pool_flavor.py): flavors and capacities come from here."""
    namespace: str = NAMESPACE
    """Namespace Kueue's controller runs in."""
    metrics: bool = False
    """The stack runs kube-prometheus-stack: the chart's ServiceMonitor (`enablePrometheus`) so queue, admission
    and quota metrics reach it. Default: off. (GKE's managed collection scrapes Kueue with a PodMonitoring instead:
    components/observability/gke_managed.py.)"""
    compute_domains: bool = False
    """The stack declares ComputeDomains (gpufleet:dra.computeDomains): their channel DeviceClass is mapped and DRA
    pools' ClusterQueues cover channels. Default: off."""
    channel_pools: tuple[str, ...] = ()
    """Device-plugin pools that run ComputeDomains (GPUs from the device plugin, IMEX channels from the DRA driver:
    Google's A4X design, docs/dra.md): their ClusterQueues cover channels too. Default: none."""
    teams: bool = True
    """Create each team's namespace, ClusterQueues and LocalQueues. Default: on; off where a GitOps engine applies
    them (gpufleet:gitops, gpufleet/base/gitops.py TEAMS): the release, flavors, topologies and checks stay."""


def in_units(flavor: PoolFlavor, gpus: int) -> dict[str, int]:
    """A quota the spec states in GPUs (what the pool advertises under nvidia.com/ or amd.com/), for every resource the
    pool advertises: GPU resources get it as is, companions such as EFA interfaces their share of the pool
    (16 of 16 GPUs on two p5 nodes -> all 64 EFA interfaces), rounded up so a whole-node job still fits."""
    most = flavor.at_max_size
    gpu_like = [r for r in most if L.is_gpu_resource(r)]
    pool_gpus = max((most[r] for r in gpu_like), default=0)
    out = {}
    for r, n in most.items():
        if r in gpu_like or not pool_gpus:
            out[r] = gpus
        else:
            out[r] = min(n, math.ceil(n * gpus / pool_gpus))
    return out


def nominal(queue: QueueSpec, flavor: PoolFlavor) -> dict[str, int]:
    """Resource -> nominal quota: the queue's own figure (in GPUs), or everything the pool advertises at max size."""
    if queue.nominal_quota is None:
        return dict(flavor.at_max_size)
    return in_units(flavor, queue.nominal_quota)


def most_admitted(queue: QueueSpec, flavor: PoolFlavor) -> dict[str, int]:
    """The most a queue can ever have admitted: nominal + borrowing limit, capped by the pool's size."""
    most = flavor.at_max_size
    own = nominal(queue, flavor)
    if queue.borrowing_limit is None:
        return dict(most)
    borrow = in_units(flavor, queue.borrowing_limit)
    return {r: min(most[r], own[r] + borrow[r]) for r in most}


def team_quota(team: TeamSpec, pools: dict[str, PoolFlavor]) -> dict[str, int]:
    """The team namespace's ResourceQuota: the spec's gpuQuota, else the most its queues can be admitted."""
    total: dict[str, int] = {} if team.queues else {L.GPU_RESOURCE: 0}
    for queue in team.queues:
        if pools[queue.pool].allocation == "dra":
            continue  # its pods request no extended resource: Kueue's quota on their claims gates them
        for r, n in most_admitted(queue, pools[queue.pool]).items():
            total[r] = total.get(r, 0) + n
    if team.gpu_quota is not None:
        # gpuQuota counts GPUs; companion resources (EFA) keep what the team's queues can be admitted.
        return {r: (team.gpu_quota if L.is_gpu_resource(r) else n) for r, n in total.items()}
    return total


def max_per_container(team: TeamSpec, pools: dict[str, PoolFlavor]) -> dict[str, int]:
    out: dict[str, int] = {}
    for queue in team.queues:
        if pools[queue.pool].allocation == "dra":
            continue
        for r, n in pools[queue.pool].per_node.items():
            out[r] = max(out.get(r, 0), n)
    return out


def resource_flavor(flavor: PoolFlavor) -> dict:
    out = {"nodeLabels": dict(flavor.node_labels), "tolerations": list(flavor.tolerations)}
    if flavor.topology_levels:
        # Topology Aware Scheduling: the Topology of the same name (docs/topology.md).
        out["topologyName"] = flavor.pool
    return out


def topology(flavor: PoolFlavor) -> dict:
    """A Kueue Topology's spec: the pool's levels, coarsest first (immutable once created: Kueue's CRD)."""
    return {"levels": [{"nodeLabel": level} for level in flavor.topology_levels]}


def local_queue_annotations(queue: QueueSpec) -> dict[str, str]:
    """The Kueue pod-template annotation a topology-aware queue's jobs should carry, for its users to copy."""
    qt = queue.topology
    if qt is None:
        return {}
    return {f"{L.QUEUE_TOPOLOGY_ANNOTATION_PREFIX}{key}-topology": level
            for key, level in (("required", qt.required), ("preferred", qt.preferred)) if level}


PROVISIONING_CONTROLLER = "kueue.x-k8s.io/provisioning-request"


def dws_check_name(pool: str) -> str:
    return f"{pool}-dws"


def provisioning_request_config() -> dict:
    return {"provisioningClassName": L.GKE_QUEUED_PROVISIONING_CLASS, "managedResources": [L.GPU_RESOURCE]}


def admission_check(pool: str) -> dict:
    return {
        "controllerName": PROVISIONING_CONTROLLER,
        "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig", "name": dws_check_name(pool)},
    }


def cluster_queue(spec: KueueSpec, team: TeamSpec, queue: QueueSpec, flavor: PoolFlavor, compute_domains: bool = False,
                  channel_pools: tuple[str, ...] = ()) -> dict:
    gpu = quota_of(flavor, nominal(queue, flavor))
    resources = [{"name": r, "nominalQuota": q} for r, q in UNGATED.items()]
    if (flavor.allocation == "dra" or flavor.pool in channel_pools) and compute_domains:
        resources.append({"name": L.DRA_CHANNEL_RESOURCE, "nominalQuota": UNGATED_CHANNELS})
    borrow = quota_of(flavor, in_units(flavor, queue.borrowing_limit)) if queue.borrowing_limit is not None else {}
    lend = quota_of(flavor, in_units(flavor, queue.lending_limit)) if queue.lending_limit is not None else {}
    for r, q in sorted(gpu.items()):
        entry: dict = {"name": r, "nominalQuota": q}
        if r in borrow:
            entry["borrowingLimit"] = borrow[r]
        if r in lend:
            entry["lendingLimit"] = lend[r]
        resources.append(entry)
    checks = {}
    if flavor.capacity == "queued":
        checks = {"admissionChecksStrategy": {"admissionChecks": [{"name": dws_check_name(flavor.pool), "onFlavors": [flavor.pool]}]}}
    return {
        **checks,
        "cohortName": spec.cohort,
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": team.namespace_name}},
        "queueingStrategy": "BestEffortFIFO",
        "preemption": {
            "withinClusterQueue": spec.preemption.within_cluster_queue,
            "reclaimWithinCohort": spec.preemption.reclaim_within_cohort,
        },
        "resourceGroups": [{
            "coveredResources": [e["name"] for e in resources],
            "flavors": [{"name": flavor.pool, "resources": resources}],
        }],
    }


class Kueue(pulumi.ComponentResource):
    """Kueue's Helm release, a ResourceFlavor per pool, and each team's namespace and queues."""

    def __init__(self, name: str, args: KueueArgs, access: ClusterAccess, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:addons:Kueue", name, None, opts)
        self.namespace_name = args.namespace
        self.device_class_mappings = device_class_mappings(args.pools, args.compute_domains, args.channel_pools)
        self.namespace, self.release = namespaced_release(
            name, versions.KUEUE, args.namespace, chart_values(args.metrics, self.device_class_mappings), access, parent=self,
        )
        # Custom resources need Kueue's CRDs and webhooks: wait for the release.
        crs = pulumi.ResourceOptions(parent=self, provider=access.provider, depends_on=[self.release])
        used = sorted({q.pool for t in args.spec.teams for q in t.queues})
        # Topology Aware Scheduling: a Topology per topology-aware pool, named after it, before its flavor.
        self.topologies = {
            pool: k8s.apiextensions.CustomResource(
                f"{name}-topology-{pool}", api_version=API_VERSION, kind="Topology",
                metadata={"name": pool}, spec=topology(args.pools[pool]), opts=crs,
            )
            for pool in used if args.pools[pool].topology_levels
        }
        self.flavors = {
            pool: k8s.apiextensions.CustomResource(
                f"{name}-flavor-{pool}", api_version=API_VERSION, kind="ResourceFlavor",
                metadata={"name": pool}, spec=resource_flavor(args.pools[pool]),
                opts=pulumi.ResourceOptions.merge(crs, pulumi.ResourceOptions(depends_on=[self.topologies[pool]]))
                if pool in self.topologies else crs,
            )
            for pool in used
        }
        # Queued (DWS) pools: a ProvisioningRequestConfig and an AdmissionCheck each, named <pool>-dws.
        self.admission_checks: dict[str, k8s.apiextensions.CustomResource] = {}
        for pool in used:
            if args.pools[pool].capacity != "queued":
                continue
            prc = k8s.apiextensions.CustomResource(
                f"{name}-provreq-{pool}", api_version=API_VERSION, kind="ProvisioningRequestConfig",
                metadata={"name": dws_check_name(pool)}, spec=provisioning_request_config(), opts=crs,
            )
            self.admission_checks[pool] = k8s.apiextensions.CustomResource(
                f"{name}-check-{pool}", api_version=API_VERSION, kind="AdmissionCheck",
                metadata={"name": dws_check_name(pool)}, spec=admission_check(pool),
                opts=pulumi.ResourceOptions.merge(crs, pulumi.ResourceOptions(depends_on=[prc])),
            )
        self.teams: dict[str, TeamNamespace] = {}
        self.cluster_queues: dict[str, k8s.apiextensions.CustomResource] = {}
        self.local_queues: dict[str, k8s.apiextensions.CustomResource] = {}
        for team in args.spec.teams if args.teams else ():
            ns = TeamNamespace(
                f"{name}-team-{team.name}",
                TeamNamespaceArgs(
                    team=team.name, namespace=team.namespace_name,
                    gpu_quota=team_quota(team, args.pools), max_per_container=max_per_container(team, args.pools),
                ),
                access, opts=pulumi.ResourceOptions(parent=self),
            )
            self.teams[team.name] = ns
            for queue in team.queues:
                cq_name = f"{team.name}-{queue.pool}"
                cq = k8s.apiextensions.CustomResource(
                    f"{name}-cq-{cq_name}", api_version=API_VERSION, kind="ClusterQueue",
                    metadata={"name": cq_name},
                    spec=cluster_queue(args.spec, team, queue, args.pools[queue.pool], args.compute_domains,
                                       args.channel_pools),
                    opts=pulumi.ResourceOptions.merge(crs, pulumi.ResourceOptions(depends_on=[
                        self.flavors[queue.pool], *([self.admission_checks[queue.pool]] if queue.pool in self.admission_checks else []),
                    ])),
                )
                self.cluster_queues[cq_name] = cq
                self.local_queues[cq_name] = k8s.apiextensions.CustomResource(
                    f"{name}-lq-{cq_name}", api_version=API_VERSION, kind="LocalQueue",
                    metadata={"name": queue.pool, "namespace": ns.namespace.metadata["name"],
                              **({"annotations": a} if (a := local_queue_annotations(queue)) else {})},
                    spec={"clusterQueue": cq_name},
                    opts=pulumi.ResourceOptions.merge(crs, pulumi.ResourceOptions(depends_on=[cq])),
                )
        self.register_outputs({
            "namespace": args.namespace, "chartVersion": versions.KUEUE.version,
            "clusterQueues": sorted(self.cluster_queues),
        })
