"""Kubeflow trainer v2: TrainJob runs PyTorch/MPI/JAX jobs across nodes on top of JobSet (admitted by Kueue).

The chart installs the controller and the CRDs; the upstream ClusterTrainingRuntimes TrainJobs reference
(torch-, deepspeed-, mlx-, jax-, xgboost-distributed) are gpufleet resources (trainer_runtimes.py), created
after the release, never through the chart's runtime installer hook (it downloads kubectl at install time)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import pulumi
import pulumi_kubernetes as k8s

from gpufleet.components.workloads import trainer_runtimes
from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.components.helm_chart import namespaced_release
from gpufleet.components.image_mirror import MIRROR_FACT
from gpufleet.base import versions

NAMESPACE = "kubeflow-system"


@dataclass(frozen=True)
class TrainerArgs:
    install_jobset: bool = True
    """Let the trainer chart install its bundled JobSet. False when the JobSet add-on installs JobSet
    (two releases owning one CRD fail to install)."""
    depends_on: list[pulumi.Resource] = field(default_factory=list)
    """Resources to wait for (the JobSet add-on, whose CRD TrainJobs create)."""
    namespace: str = NAMESPACE
    """Namespace the trainer's controller runs in."""
    runtimes: bool = True
    """Create the upstream ClusterTrainingRuntimes (torch-, deepspeed-, mlx-, jax-, xgboost-distributed) that
    TrainJobs reference by name. Default: on (without a runtime no TrainJob can run)."""
    protect_pods: bool = True
    """The runtimes' pods carry Karpenter's `karpenter.sh/do-not-disrupt: "true"` and the Cluster Autoscaler's
    `safe-to-evict: "false"` (gpufleet.base.labels.TRAINING_POD_ANNOTATIONS), so no autoscaler consolidates or scales
    down a node while a training job runs on it (docs/upgrades.md). Default: on; off gives upstream's runtimes as is."""


def trainer_values(args: TrainerArgs) -> dict:
    """Helm values: `jobset.install` is the chart's condition on its bundled JobSet dependency;
    `runtimes.defaultEnabled` stays off (gpufleet creates the runtimes itself, without the kubectl hook)."""
    return {"jobset": {"install": args.install_jobset}, "runtimes": {"defaultEnabled": False}}


class Trainer(pulumi.ComponentResource):
    """`gpufleet:addons:Trainer`: the pinned Kubeflow trainer v2 chart (controller and CRDs) and the upstream
    ClusterTrainingRuntimes as gpufleet resources: TrainJobs run PyTorch, MPI or JAX across nodes on JobSet,
    admitted by Kueue."""

    def __init__(self, name: str, args: TrainerArgs, access: ClusterAccess, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:addons:Trainer", name, None, opts)
        self.values = trainer_values(args)
        self.namespace, self.release = namespaced_release(
            name, versions.KUBEFLOW_TRAINER, args.namespace, self.values, access, parent=self, depends_on=args.depends_on,
        )
        # The ClusterTrainingRuntime CRD is a plain template of the chart (templates/crd/), there once the release is.
        after_release = pulumi.ResourceOptions(parent=self, provider=access.provider, depends_on=[self.release])
        self.runtimes = [
            k8s.apiextensions.CustomResource(
                f"{name}-runtime-{obj['metadata']['name']}", api_version=obj["apiVersion"], kind=obj["kind"],
                metadata=obj["metadata"], spec=obj["spec"], opts=after_release,
            )
            for obj in (trainer_runtimes.runtimes(access.facts.get(MIRROR_FACT), args.protect_pods) if args.runtimes else [])
        ]
        self.register_outputs({
            "namespace": args.namespace,
            "chartVersion": versions.KUBEFLOW_TRAINER.version,
            "runtimes": list(trainer_runtimes.RUNTIMES) if args.runtimes else [],
        })
