"""gpufleet:addons — the workload layer: queues and quotas (Kueue), gang scheduling (JobSet or
Volcano), the Kubeflow trainer, PriorityClasses and inference autoscaling (KEDA).

Every add-on is off by default. Cross-block checks (queues naming pools that exist, Kueue and Volcano
never scheduling the same pool) are in addon_checks.py; quotas above what a pool can ever provide are
warnings (`gpufleet.base.capacity.addons_warnings`: they need each pool's capacity), printed by the plan and
listed under its JSON key "warnings".
"""

from typing import Annotated, Literal, Optional

from pydantic import Field, field_validator

from gpufleet.base.spec.base import DNS_LABEL, LABEL_KEY, Model

NAMESPACE = "gpufleet"


LabelKey = Annotated[str, Field(pattern=LABEL_KEY, max_length=316)]


class QueueTopologySpec(Model):
    """How the queue's jobs ask for topology-aware placement (docs/topology.md). gpufleet cannot annotate the jobs
    themselves: the LocalQueue carries the annotation to copy into pod templates, and the plan checks it fits."""

    required: Optional[LabelKey] = None
    """Node label of the level every pod of a job must share (`kueue.x-k8s.io/podset-required-topology`), one of
    the pool's topology levels. Default: none."""
    preferred: Optional[LabelKey] = None
    """Node label of the level Kueue tries first, then the next level up (`kueue.x-k8s.io/podset-preferred-topology`).
    Default: none."""
    gpus_per_job: Optional[int] = Field(default=None, ge=1)
    """The largest job the team runs on this queue, in GPUs: with `required`, an error when no domain of that level
    can hold it. Default: unchecked."""


class QueueSpec(Model):
    """A team's queue on one GPU pool: a Kueue ClusterQueue `<team>-<pool>` and a LocalQueue `<pool>`."""

    pool: str = Field(pattern=DNS_LABEL)
    """Name of the node pool (gpufleet:nodePools[].name) whose GPUs this queue admits work onto."""
    nominal_quota: Optional[int] = Field(default=None, ge=0)
    """Guaranteed quota in the units the pool advertises (GPUs; time-slice replicas or MIG slices on shared
    pools). Default: everything the pool advertises at its maximum size."""
    borrowing_limit: Optional[int] = Field(default=None, ge=0)
    """How much idle quota of other queues in the cohort this queue may borrow. Default: no limit."""
    lending_limit: Optional[int] = Field(default=None, ge=0)
    """How much of this queue's unused quota others in the cohort may borrow. Default: all of it."""
    topology: Optional[QueueTopologySpec] = None
    """Required or preferred topology for the queue's jobs, on a pool listed in `kueue.topology.pools`. Default:
    none."""


class TeamSpec(Model):
    """A team: a namespace with a ResourceQuota and LimitRange for GPUs, and one queue per pool it uses."""

    name: str = Field(pattern=DNS_LABEL, max_length=40)
    """Team name: prefix of its ClusterQueues (`<team>-<pool>`) and label `gpufleet.io/team` on its namespace."""
    namespace: Optional[str] = Field(default=None, pattern=DNS_LABEL, max_length=63)
    """Namespace the team submits work in. Default: the team's name."""
    queues: list[QueueSpec] = []
    """The team's queues, one per GPU pool it may use. Default: none (the namespace gets no GPUs)."""
    gpu_quota: Optional[int] = Field(default=None, ge=0)
    """Hard cap on GPU requests in the namespace: ResourceQuota `requests.<resource>` for each GPU resource the
    team's pools advertise (nvidia.com/gpu, each MIG slice resource, amd.com/gpu), in that resource's units. Default: the most
    the team's queues can ever be admitted (nominal quota plus borrowing limit, or the pool's whole size when
    borrowing is unlimited), so the quota only catches pods that bypass Kueue."""

    @property
    def namespace_name(self) -> str:
        return self.namespace or self.name


class PreemptionSpec(Model):
    """How a ClusterQueue makes room for pending work (Kueue `spec.preemption`)."""

    within_cluster_queue: Literal["Never", "LowerPriority", "LowerOrNewerEqualPriority"] = "LowerPriority"
    """Pending work may evict lower-priority work admitted in the same queue (PriorityClass value decides)."""
    reclaim_within_cohort: Literal["Never", "LowerPriority", "Any"] = "Any"
    """A queue below its nominal quota may evict work that borrowed its quota, whatever that work's priority."""


class TopologyPoolSpec(Model):
    """A pool whose ResourceFlavor names a Kueue Topology: Kueue places each job's pods by the nodes' topology labels."""

    name: str = Field(pattern=DNS_LABEL)
    """The pool (gpufleet:nodePools[].name); it needs at least one team queue."""
    levels: Optional[list[LabelKey]] = Field(default=None, min_length=1, max_length=16)
    """Node labels of the levels, coarsest first. Default: what the platform labels the pool's machines with (EKS
    network-node layers, GKE gce-topology block/sub-block/host, k3s hosts' declared block/rack; the NVLink clique on
    multi-node NVLink pools), then kubernetes.io/hostname (docs/topology.md)."""


class TopologySpec(Model):
    """Kueue Topology Aware Scheduling: one Topology per listed pool, named after it, and its flavor naming it."""

    pools: list[TopologyPoolSpec] = []
    """Pools Kueue places topology-aware. Default: none (queues place jobs without regard to topology)."""


class KueueSpec(Model):
    """Kueue: queues with GPU quotas per team and pool, all-or-nothing admission of multi-pod jobs."""

    enabled: bool = False
    """Install Kueue (Helm) and declare the teams' queues. Default: off."""
    cohort: str = Field(default="gpufleet", pattern=DNS_LABEL)
    """Cohort every ClusterQueue joins, so queues lend idle quota and borrow it (per pool flavor)."""
    preemption: PreemptionSpec = PreemptionSpec()
    """Preemption within a queue and within the cohort; default: by priority, and reclaim lent quota."""
    teams: list[TeamSpec] = []
    """Teams and their queues. Default: none (Kueue installed, nothing admitted until queues exist)."""
    topology: TopologySpec = TopologySpec()
    """Topology Aware Scheduling per pool. Default: off."""


class JobSetSpec(Model):
    enabled: bool = False
    """Install JobSet (Helm): groups of Jobs started and restarted as one unit. Default: off."""


class TrainerSpec(Model):
    enabled: bool = False
    """Install the Kubeflow trainer v2 (Helm; TrainJob, PyTorch/MPI across nodes). Uses the JobSet add-on when it
    is enabled, otherwise the JobSet the trainer chart bundles. Default: off."""


class VolcanoSpec(Model):
    """Volcano: an alternative batch scheduler with gang scheduling. Never on a pool Kueue queues use."""

    enabled: bool = False
    """Install Volcano (Helm) and a Volcano Queue per claimed pool. Default: off."""
    pools: list[Annotated[str, Field(pattern=DNS_LABEL)]] = []
    """Pools whose GPUs Volcano schedules (one Volcano Queue each, capped at the pool's capacity)."""


class PriorityClassSpec(Model):
    name: str = Field(pattern=DNS_LABEL)
    """PriorityClass name pods and Kueue workloads refer to (`priorityClassName`)."""
    value: int = Field(ge=-(10**9), le=10**9)
    """Higher value wins: schedules first, and may preempt lower values (user classes are capped at 1e9)."""
    preemption_policy: Literal["PreemptLowerPriority", "Never"] = "PreemptLowerPriority"
    """Never: the pod waits instead of evicting others (batch work)."""
    description: str = ""
    """Shown by `kubectl get priorityclass`."""


DEFAULT_PRIORITY_CLASSES = (
    PriorityClassSpec(name="production-inference", value=100000, description="Serving production traffic: evicts training and batch work."),
    PriorityClassSpec(name="training", value=10000, description="Training jobs: evict batch work, yield to production inference."),
    PriorityClassSpec(
        name="batch-preemptible", value=1000, preemption_policy="Never",
        description="Interruptible batch work (spot pools): never evicts others, evicted first.",
    ),
)


class PriorityClassesSpec(Model):
    enabled: bool = False
    """Create the PriorityClasses. Default: off."""
    classes: list[PriorityClassSpec] = list(DEFAULT_PRIORITY_CLASSES)
    """Default: production-inference (100000) > training (10000) > batch-preemptible (1000, never preempts)."""

    @field_validator("classes")
    @classmethod
    def _unique(cls, v: list[PriorityClassSpec]) -> list[PriorityClassSpec]:
        names = [c.name for c in v]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"duplicate PriorityClass name {', '.join(map(repr, dupes))} (names must be unique)")
        return v


class KedaSpec(Model):
    enabled: bool = False
    """Install KEDA (Helm) so Deployments scale on metrics such as DCGM GPU utilization. Default: off."""


class AddonsSpec(Model):
    """Optional cluster add-ons: the workload layer. Everything is off by default."""

    kueue: KueueSpec = KueueSpec()
    """Kueue queues and GPU quotas per team."""
    jobset: JobSetSpec = JobSetSpec()
    """JobSet for multi-node training (admitted all-or-nothing through Kueue)."""
    trainer: TrainerSpec = TrainerSpec()
    """Kubeflow trainer v2."""
    volcano: VolcanoSpec = VolcanoSpec()
    """Volcano, the alternative gang scheduler (on pools Kueue does not use)."""
    priority_classes: PriorityClassesSpec = PriorityClassesSpec()
    """PriorityClasses: production inference > training > batch/preemptible."""
    keda: KedaSpec = KedaSpec()
    """KEDA for inference autoscaling on GPU metrics."""
