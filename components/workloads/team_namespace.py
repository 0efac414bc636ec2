"""TeamNamespace: a team's namespace, with a ResourceQuota and a LimitRange on GPU requests."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import pulumi
import pulumi_kubernetes as k8s

from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.base import labels as L


@dataclass(frozen=True)
class TeamNamespaceArgs:
    team: str
    """Team name (label `gpufleet.io/team` on the namespace)."""
    namespace: str
    """Namespace to create."""
    gpu_quota: dict[str, int] = field(default_factory=dict)
    """Extended resource -> most the namespace may request at once (ResourceQuota `requests.<resource>`).
    Default: none (no ResourceQuota)."""
    max_per_container: dict[str, int] = field(default_factory=dict)
    """Extended resource -> most one container may ask for (LimitRange): a node's worth. Default: no LimitRange."""


class TeamNamespace(pulumi.ComponentResource):
    """`gpufleet:addons:TeamNamespace`: a team's namespace (`<name>-ns`) with a ResourceQuota (`<name>-gpu-quota`) and
    a LimitRange (`<name>-gpu-limits`) on GPU requests."""

    def __init__(
        self, name: str, args: TeamNamespaceArgs, access: ClusterAccess, opts: Optional[pulumi.ResourceOptions] = None
    ):
        super().__init__("gpufleet:addons:TeamNamespace", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, provider=access.provider)
        self.namespace = k8s.core.v1.Namespace(
            f"{name}-ns", metadata={"name": args.namespace, "labels": {L.TEAM_LABEL: args.team}}, opts=child,
        )
        meta = {"namespace": self.namespace.metadata["name"]}
        self.quota = None
        if args.gpu_quota:
            self.quota = k8s.core.v1.ResourceQuota(
                f"{name}-gpu-quota",
                # The provider waits until the quota controller fills status.hard.
                metadata={**meta, "name": "gpu-quota"},
                spec={"hard": {f"requests.{r}": str(n) for r, n in sorted(args.gpu_quota.items())}},
                opts=child,
            )
        self.limits = None
        if args.max_per_container:
            # Extended resources are never overcommitted: a container's request equals its limit, and one
            # container cannot use more than a node advertises.
            self.limits = k8s.core.v1.LimitRange(
                f"{name}-gpu-limits",
                metadata={**meta, "name": "gpu-limits"},
                spec={"limits": [{
                    "type": "Container",
                    "max": {r: str(n) for r, n in sorted(args.max_per_container.items())},
                }]},
                opts=child,
            )
        self.register_outputs({"namespace": args.namespace})
