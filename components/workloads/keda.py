"""KEDA: Deployments (inference servers) scale on metrics such as DCGM GPU utilization (examples/)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pulumi

from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.components.helm_chart import namespaced_release
from gpufleet import versions

NAMESPACE = "keda"


@dataclass(frozen=True)
class KedaArgs:
    namespace: str = NAMESPACE
    """Namespace KEDA's operator and metrics server run in."""


class Keda(pulumi.ComponentResource):
    def __init__(self, name: str, args: KedaArgs, access: ClusterAccess, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:addons:Keda", name, None, opts)
        self.namespace, self.release = namespaced_release(name, versions.KEDA, args.namespace, {}, access, parent=self)
        self.register_outputs({"namespace": args.namespace, "chartVersion": versions.KEDA.version})
