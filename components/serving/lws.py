"""LeaderWorkerSet's controller: one model replica as a group of pods (a leader and workers) across nodes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pulumi

from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.components.helm_chart import namespaced_release
from gpufleet.base import versions

# The namespace kubernetes-sigs/lws installs into (docs at the pinned tag, site/content/en/docs/installation: `lws-system`).
NAMESPACE = "lws-system"


@dataclass(frozen=True)
class LeaderWorkerSetControllerArgs:
    namespace: str = NAMESPACE
    """Namespace the controller runs in."""


class LeaderWorkerSetController(pulumi.ComponentResource):
    """`gpufleet:serving:LeaderWorkerSetController`: the pinned LeaderWorkerSet controller chart: one model replica as
    a group of pods (a leader and workers) across nodes."""

    def __init__(self, name: str, args: LeaderWorkerSetControllerArgs, access: ClusterAccess,
                 opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:serving:LeaderWorkerSetController", name, None, opts)
        # The chart's values are left at their defaults: its CRDs (crds/) and a self-signed webhook certificate
        # (`enableCertManager: false` in values.yaml at the pinned tag).
        self.namespace, self.release = namespaced_release(name, versions.LWS, args.namespace, {}, access, parent=self)
        self.register_outputs({"namespace": args.namespace, "chartVersion": versions.LWS.version})
