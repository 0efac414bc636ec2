"""PriorityClasses: production inference > training > batch/preemptible, used by pods and Kueue queues."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pulumi
import pulumi_kubernetes as k8s

from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.base.spec.features.addons import PriorityClassSpec


@dataclass(frozen=True)
class PriorityClassesArgs:
    classes: list[PriorityClassSpec]
    """The classes to create (spec default: production-inference, training, batch-preemptible)."""


class PriorityClasses(pulumi.ComponentResource):
    """`gpufleet:addons:PriorityClasses`: PriorityClasses in the order production inference > training >
    batch/preemptible, which pods and Kueue queues name."""

    def __init__(
        self, name: str, args: PriorityClassesArgs, access: ClusterAccess, opts: Optional[pulumi.ResourceOptions] = None
    ):
        super().__init__("gpufleet:addons:PriorityClasses", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, provider=access.provider)
        self.classes = {
            pc.name: k8s.scheduling.v1.PriorityClass(
                f"{name}-{pc.name}",
                metadata={"name": pc.name},
                value=pc.value,
                preemption_policy=pc.preemption_policy,
                description=pc.description,
                global_default=False,  # pods without a class keep priority 0: nothing is silently promoted
                opts=child,
            )
            for pc in args.classes
        }
        self.register_outputs({"classes": sorted(self.classes)})
