"""JobSet: a group of Jobs (leader, workers) started, restarted and admitted by Kueue as one unit."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pulumi

from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.components.helm_chart import namespaced_release
from gpufleet.base import versions

NAMESPACE = "jobset-system"


@dataclass(frozen=True)
class JobSetArgs:
    namespace: str = NAMESPACE
    """Namespace JobSet's controller runs in."""


class JobSet(pulumi.ComponentResource):
    """`gpufleet:addons:JobSet`: the pinned JobSet controller chart: a group of Jobs (leader, workers) started,
    restarted and admitted by Kueue as one unit."""

    def __init__(self, name: str, args: JobSetArgs, access: ClusterAccess, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:addons:JobSet", name, None, opts)
        self.namespace, self.release = namespaced_release(name, versions.JOBSET, args.namespace, {}, access, parent=self)
        self.register_outputs({"namespace": args.namespace, "chartVersion": versions.JOBSET.version})
