"""EfaDevicePlugin: the aws-efa-k8s-device-plugin chart (pinned), on EFA nodes only, so pods can
request `vpc.amazonaws.com/efa`. Values key paths exist in the chart's values.yaml (tests check them
against ../shared/reference/aws)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import pulumi

from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.components.gpu_stack.operator import tolerations
from gpufleet.components.helm_chart import pinned_release
from gpufleet.base import labels as L
from gpufleet.base import versions

NAMESPACE = "kube-system"


@dataclass(frozen=True)
class EfaDevicePluginArgs:
    node_taints: list = field(default_factory=list)
    """Taints EFA nodes carry (GPU, spot, extra): the daemonset tolerates each."""


def plugin_values(args: EfaDevicePluginArgs) -> dict:
    return {
        "nodeSelector": {L.EFA_LABEL: "true"},
        "tolerations": tolerations(args.node_taints),
    }


class EfaDevicePlugin(pulumi.ComponentResource):
    """`gpufleet:eks:EfaDevicePlugin`: the pinned aws-efa-k8s-device-plugin chart, on EFA nodes only, so pods can
    request `vpc.amazonaws.com/efa`."""

    def __init__(self, name: str, args: EfaDevicePluginArgs, access: ClusterAccess, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:eks:EfaDevicePlugin", name, None, opts)
        chart = versions.EFA_DEVICE_PLUGIN
        self.values = plugin_values(args)
        self.release = pinned_release(name, chart, NAMESPACE, self.values, access, parent=self)
        self.register_outputs({"chartVersion": chart.version})
