"""Kubeflow trainer v2: TrainJob runs PyTorch/MPI/JAX jobs across nodes on top of JobSet (admitted by Kueue)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import pulumi

from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.components.helm_chart import namespaced_release
from gpufleet import versions

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


def trainer_values(args: TrainerArgs) -> dict:
    """Helm values: `jobset.install` is the chart's condition on its bundled JobSet dependency."""
    return {"jobset": {"install": args.install_jobset}}


class Trainer(pulumi.ComponentResource):
    def __init__(self, name: str, args: TrainerArgs, access: ClusterAccess, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:addons:Trainer", name, None, opts)
        self.values = trainer_values(args)
        self.namespace, self.release = namespaced_release(
            name, versions.KUBEFLOW_TRAINER, args.namespace, self.values, access, parent=self, depends_on=args.depends_on,
        )
        self.register_outputs({"namespace": args.namespace, "chartVersion": versions.KUBEFLOW_TRAINER.version})
