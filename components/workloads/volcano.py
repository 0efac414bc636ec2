"""Volcano: the alternative batch scheduler with gang scheduling, on pools no Kueue queue uses.

One Volcano Queue per claimed pool, its capability capped at what the pool advertises at max size.
Jobs pick the pool's nodes themselves (nodeSelector `gpufleet.io/pool`, tolerations): Volcano queues
share capacity, they do not place pods (the spec check keeps Kueue off these pools).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pulumi
import pulumi_kubernetes as k8s

from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.components.helm_chart import namespaced_release
from gpufleet.components.workloads.pool_flavor import PoolFlavor
from gpufleet.base import versions

NAMESPACE = "volcano-system"
QUEUE_API_VERSION = "scheduling.volcano.sh/v1beta1"


@dataclass(frozen=True)
class VolcanoArgs:
    pools: list[PoolFlavor]
    """The pools Volcano schedules (spec addons.volcano.pools), one Queue each."""
    namespace: str = NAMESPACE
    """Namespace Volcano's scheduler, controllers and admission webhook run in."""


def queue_spec(flavor: PoolFlavor) -> dict:
    return {
        "weight": 1,
        "reclaimable": True,
        "capability": {r: str(n) for r, n in sorted(flavor.at_max_size.items())},
    }


class Volcano(pulumi.ComponentResource):
    """`gpufleet:addons:Volcano`: the pinned Volcano batch scheduler (gang scheduling) and one Queue per pool it
    claims, its capability capped at what the pool advertises at maximum size."""

    def __init__(self, name: str, args: VolcanoArgs, access: ClusterAccess, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:addons:Volcano", name, None, opts)
        self.namespace, self.release = namespaced_release(name, versions.VOLCANO, args.namespace, {}, access, parent=self)
        crs = pulumi.ResourceOptions(parent=self, provider=access.provider, depends_on=[self.release])
        self.queues = {
            flavor.pool: k8s.apiextensions.CustomResource(
                f"{name}-queue-{flavor.pool}", api_version=QUEUE_API_VERSION, kind="Queue",
                metadata={"name": flavor.pool}, spec=queue_spec(flavor), opts=crs,
            )
            for flavor in args.pools
        }
        self.register_outputs({"namespace": args.namespace, "chartVersion": versions.VOLCANO.version})
