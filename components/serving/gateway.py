"""The serving Gateway: GKE's managed class, or Envoy Gateway with the standard Gateway API CRDs.

Envoy Gateway's chart bundles the Gateway API *experimental* CRDs of the same release (versions.GATEWAY_API) in its `crds` subchart.
gpufleet applies the *standard* channel first (the release's standard-install.yaml, with its safe-upgrades
ValidatingAdmissionPolicy) and installs Envoy Gateway after it: Helm never replaces a CRD that already exists in a
chart's crds/ ("CRDs are never reinstalled", helm.sh/docs/chart_best_practices/custom_resource_definitions; Helm's
install skips each existing one), so the cluster keeps the standard channel, and the safe-upgrades policy refuses
experimental CRDs over standard ones ("Installing experimental CRDs on top of standard channel CRDs is prohibited by
default", gateway.networking.k8s.io_vap_safeupgrades.yaml at the pinned release). The chart's own copy of that policy is off
(`crds.gatewayAPI.safeUpgradePolicy.enabled: false`): the standard bundle's is the one installed. Envoy Gateway's
own CRDs (gateway.envoyproxy.io) still come from the subchart.

Envoy Gateway and its proxies carry no GPU toleration, so they run on the system (untainted) nodes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pulumi
import pulumi_kubernetes as k8s

from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.components.helm_chart import namespaced_release
from gpufleet.base import versions
from gpufleet.base.spec.features.serving import ENVOY_CLASS

NAMESPACE = "gpufleet-serving"
ENVOY_NAMESPACE = "envoy-gateway-system"
# Envoy Gateway's controller name: the chart's `config.envoyGateway.gateway.controllerName` default (values.yaml at
# the pinned chart, versions.ENVOY_GATEWAY).
ENVOY_CONTROLLER = "gateway.envoyproxy.io/gatewayclass-controller"
GATEWAY_NAME = "inference-gateway"


@dataclass(frozen=True)
class ServingGatewayArgs:
    class_name: str
    """The GatewayClass (resolved: a GKE managed class, or `envoy`)."""
    namespace: str = NAMESPACE
    """Namespace of the Gateway; routes from every namespace may attach."""


def envoy_values() -> dict:
    return {"crds": {"gatewayAPI": {"safeUpgradePolicy": {"enabled": False}}}}


def gateway_object(args: ServingGatewayArgs) -> dict:
    return {
        "apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
        "metadata": {"name": GATEWAY_NAME, "namespace": args.namespace},
        "spec": {"gatewayClassName": args.class_name, "listeners": [
            {"name": "http", "protocol": "HTTP", "port": 80, "allowedRoutes": {"namespaces": {"from": "All"}}}]},
    }


class ServingGateway(pulumi.ComponentResource):
    def __init__(self, name: str, args: ServingGatewayArgs, access: ClusterAccess,
                 opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:serving:ServingGateway", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, provider=access.provider)
        after: list[pulumi.Resource] = list(access.ready or [])
        self.crds = self.envoy = None
        if args.class_name == ENVOY_CLASS:
            self.crds = k8s.yaml.v2.ConfigFile(f"{name}-gateway-api", file=versions.GATEWAY_API_STANDARD_INSTALL,
                                               opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=after)))
            _, self.envoy = namespaced_release(f"{name}-envoy", versions.ENVOY_GATEWAY, ENVOY_NAMESPACE, envoy_values(),
                                               access, parent=self, depends_on=[self.crds])
            klass = k8s.apiextensions.CustomResource(
                f"{name}-class", api_version="gateway.networking.k8s.io/v1", kind="GatewayClass",
                metadata={"name": ENVOY_CLASS}, spec={"controllerName": ENVOY_CONTROLLER},
                opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[self.envoy])))
            after = [klass]
        self.namespace = k8s.core.v1.Namespace(f"{name}-ns", metadata={"name": args.namespace}, opts=child)
        obj = gateway_object(args)
        self.gateway = k8s.apiextensions.CustomResource(
            f"{name}-gateway", api_version=obj["apiVersion"], kind=obj["kind"],
            metadata={**obj["metadata"], "namespace": self.namespace.metadata["name"]}, spec=obj["spec"],
            opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=after)))
        self.gateway_name = GATEWAY_NAME
        self.namespace_name = args.namespace
        self.register_outputs({"gatewayClass": args.class_name, "gateway": f"{args.namespace}/{GATEWAY_NAME}"})
