"""The serving Gateway: GKE's managed class, agentgateway (InferencePool routing, issue 52) or Envoy Gateway, with the
standard Gateway API CRDs.

agentgateway: the standard Gateway API CRDs, the Inference Extension's CRDs (versions.INFERENCE_EXTENSION_INSTALL), the
agentgateway-crds and agentgateway charts in `agentgateway-system` (InferencePool routing on), and an
AgentgatewayParameters beside the Gateway that sets its proxy's Service (the platform's `gateway_service`). The
controller creates GatewayClass `agentgateway` itself.

Envoy Gateway's chart bundles the Gateway API *experimental* CRDs of the same release (versions.GATEWAY_API) in its `crds` subchart.
gpufleet applies the *standard* channel first (the release's standard-install.yaml, with its safe-upgrades
ValidatingAdmissionPolicy) and installs Envoy Gateway after it: Helm never replaces a CRD that already exists in a
chart's crds/ ("CRDs are never reinstalled", helm.sh/docs/chart_best_practices/custom_resource_definitions; Helm's
install skips each existing one), so the cluster keeps the standard channel, and the safe-upgrades policy refuses
experimental CRDs over standard ones ("Installing experimental CRDs on top of standard channel CRDs is prohibited by
default", gateway.networking.k8s.io_vap_safeupgrades.yaml at the pinned release). The chart's own copy of that policy is off
(`crds.gatewayAPI.safeUpgradePolicy.enabled: false`): the standard bundle's is the one installed. Envoy Gateway's
own CRDs (gateway.envoyproxy.io, the subchart's crds/generated/) are applied by gpufleet before the release, which
skips its crds/, so the experimental bundle is not installed at all (versions.ENVOY_GATEWAY, docs/upgrades.md).

Envoy Gateway and its proxies carry no GPU toleration, so they run on the system (untainted) nodes.

Exposure (issue 48): the Gateway admits routes only from the model namespaces (`allowedRoutes.namespaces.from:
Selector` on the namespace's own name label, which the API server sets and no user can: kubernetes.io/metadata.name),
listens on HTTPS 443 when a certificate is named (HTTP 80 otherwise), and on Envoy Gateway is published through the
Service the platform says (an EnvoyProxy, `provider.kubernetes.envoyService`, referenced by the GatewayClass's
`parametersRef`: gateway.envoyproxy.io "Customize EnvoyProxy"; CRD gateway.envoyproxy.io_envoyproxies.yaml in the
pinned chart's crds subchart). An external Gateway carries its stack's reason as its secure-defaults exemption.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import pulumi
import pulumi_kubernetes as k8s

from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.components.helm_chart import namespaced_release, pinned_release
from gpufleet.base import labels as L
from gpufleet.base import versions
from gpufleet.base.spec.features.serving import AGENTGATEWAY_CLASS, ENVOY_CLASS, ENVOY_CONTROLLER

NAMESPACE = "gpufleet-serving"
ENVOY_NAMESPACE = "envoy-gateway-system"
# agentgateway's namespace: the one its install guide uses (agentgateway.dev docs; the Inference Extension's
# site-src/guides/index.md at versions.INFERENCE_EXTENSION: `--namespace agentgateway-system`).
AGENTGATEWAY_NAMESPACE = "agentgateway-system"
# The AgentgatewayParameters the serving Gateway names in `infrastructure.parametersRef` (in the Gateway's namespace:
# the controller looks it up there, controller/pkg/deployer/agentgateway_parameters.go at versions.AGENTGATEWAY).
AGENTGATEWAY_PARAMS_NAME = "gpufleet-serving"
GATEWAY_NAME = "inference-gateway"
# The EnvoyProxy the `envoy` GatewayClass points at (in Envoy Gateway's namespace, as its parametersRef names it).
ENVOY_PROXY_NAME = "gpufleet-serving"


@dataclass(frozen=True)
class ServingGatewayArgs:
    class_name: str
    """The GatewayClass (resolved: a GKE managed class, `agentgateway` or `envoy`)."""
    namespace: str = NAMESPACE
    """Namespace of the Gateway."""
    route_namespaces: tuple[str, ...] = ()
    """The namespaces whose HTTPRoutes may attach (the model servers'); default: none but the Gateway's own."""
    envoy_service: dict = field(default_factory=lambda: {"type": "ClusterIP"})
    """With the `envoy` or `agentgateway` class: the Service the gateway's proxy is published through (`type`, `annotations`: the
    platform's `gateway_service` trait). Default: ClusterIP, reachable inside the cluster only."""
    external_reason: Optional[str] = None
    """Why the Gateway faces the internet (its secure-defaults exemption); default: none (an internal Gateway)."""
    tls_secret: Optional[str] = None
    """A kubernetes.io/tls Secret in `namespace`: the listener is HTTPS on 443 with it; default: HTTP on 80."""


def agentgateway_values() -> dict:
    """The agentgateway chart's values (keys of its values.yaml at versions.AGENTGATEWAY): InferencePool routing on
    (`inferenceExtension.enabled`: env AGW_ENABLE_INFER_EXT and RBAC for inference.networking.k8s.io inferencepools) and
    the proxy image's tag (`proxy.image.tag`, env AGW_PROXY_IMAGE_TAG; the controller's own is v + appVersion,
    templates/_helpers.tpl agentgateway.imageTag)."""
    # The proxy's tag said, not left to the controller's built-in default: what `gpufleet images` lists (and a mirror
    # must hold) is then in the values.
    return {"inferenceExtension": {"enabled": True},
            "proxy": {"image": {"tag": f"v{versions.AGENTGATEWAY.app_version}"}}}


def agentgateway_parameters_object(args: ServingGatewayArgs) -> dict:
    """The AgentgatewayParameters (agentgateway.dev/v1alpha1, CRD in the agentgateway-crds chart) whose `service`
    overrides the Service the controller publishes the Gateway's proxy through: the platform's `gateway_service` (type
    and annotations), as the controller's own deployer tests set them (controller/test/deployer/testdata/
    agentgateway-aws-annotations.yaml at versions.AGENTGATEWAY)."""
    service: dict = {"spec": {"type": args.envoy_service.get("type", "ClusterIP")}}
    if args.envoy_service.get("annotations"):
        service["metadata"] = {"annotations": dict(args.envoy_service["annotations"])}
    return {
        "apiVersion": "agentgateway.dev/v1alpha1", "kind": "AgentgatewayParameters",
        "metadata": {"name": AGENTGATEWAY_PARAMS_NAME, "namespace": args.namespace, **_exemption(args)},
        "spec": {"service": service},
    }


def envoy_values() -> dict:
    return {"crds": {"gatewayAPI": {"safeUpgradePolicy": {"enabled": False}}}}


def _exemption(args: ServingGatewayArgs) -> dict:
    return {"annotations": {L.exempt_key(L.SECURE_DEFAULTS_POLICY): args.external_reason}} if args.external_reason else {}


def allowed_routes(namespaces: tuple[str, ...]) -> dict:
    """Routes from the model namespaces only, by the name label the API server sets on every namespace; none named:
    the Gateway's own namespace (`Same`)."""
    if not namespaces:
        return {"namespaces": {"from": "Same"}}
    return {"namespaces": {"from": "Selector", "selector": {"matchExpressions": [
        {"key": L.NAMESPACE_NAME_LABEL, "operator": "In", "values": sorted(set(namespaces))}]}}}


def gateway_object(args: ServingGatewayArgs) -> dict:
    routes = allowed_routes(args.route_namespaces)
    if args.tls_secret:
        listener = {"name": "https", "protocol": "HTTPS", "port": 443, "allowedRoutes": routes,
                    "tls": {"mode": "Terminate", "certificateRefs": [{"kind": "Secret", "name": args.tls_secret}]}}
    else:
        listener = {"name": "http", "protocol": "HTTP", "port": 80, "allowedRoutes": routes}
    spec: dict = {"gatewayClassName": args.class_name, "listeners": [listener]}
    if args.class_name == AGENTGATEWAY_CLASS:
        # Its Service from the AgentgatewayParameters beside it (Gateway API `infrastructure.parametersRef`).
        spec["infrastructure"] = {"parametersRef": {"group": "agentgateway.dev", "kind": "AgentgatewayParameters",
                                                    "name": AGENTGATEWAY_PARAMS_NAME}}
    return {
        "apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
        "metadata": {"name": GATEWAY_NAME, "namespace": args.namespace, **_exemption(args)},
        "spec": spec,
    }


def envoy_proxy_object(args: ServingGatewayArgs) -> dict:
    """The EnvoyProxy (gateway.envoyproxy.io/v1alpha1) whose `envoyService` publishes the Gateway."""
    return {
        "apiVersion": "gateway.envoyproxy.io/v1alpha1", "kind": "EnvoyProxy",
        "metadata": {"name": ENVOY_PROXY_NAME, "namespace": ENVOY_NAMESPACE, **_exemption(args)},
        "spec": {"provider": {"type": "Kubernetes", "kubernetes": {"envoyService": dict(args.envoy_service)}}},
    }


class ServingGateway(pulumi.ComponentResource):
    """`gpufleet:serving:ServingGateway`: the serving namespace (`<name>-ns`) and its Gateway (`<name>-gateway`): GKE's
    managed class, or Envoy Gateway (`<name>-envoy`) after the standard Gateway API CRDs (`<name>-gateway-api`)
    with its GatewayClass (`<name>-class`). Internal unless the stack gives a reason to expose it."""

    def __init__(self, name: str, args: ServingGatewayArgs, access: ClusterAccess,
                 opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:serving:ServingGateway", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, provider=access.provider)
        after: list[pulumi.Resource] = list(access.ready or [])
        self.crds = self.envoy = self.proxy = None
        self.inference_crds = self.agentgateway_crds = self.agentgateway = self.params = None
        if args.class_name == AGENTGATEWAY_CLASS:
            # Standard Gateway API CRDs, the Inference Extension's CRDs (InferencePool v1: the pinned release's
            # manifests.yaml), agentgateway's CRDs, then its controller, which creates and owns GatewayClass
            # `agentgateway` itself.
            self.crds = k8s.yaml.v2.ConfigFile(f"{name}-gateway-api", file=versions.GATEWAY_API_STANDARD_INSTALL,
                                               opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=after)))
            self.inference_crds = k8s.yaml.v2.ConfigFile(
                f"{name}-inference-extension", file=versions.INFERENCE_EXTENSION_INSTALL,
                opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=after)))
            ns, self.agentgateway_crds = namespaced_release(f"{name}-agentgateway-crds", versions.AGENTGATEWAY_CRDS,
                                                            AGENTGATEWAY_NAMESPACE, {}, access, parent=self)
            self.agentgateway = pinned_release(f"{name}-agentgateway", versions.AGENTGATEWAY, ns.metadata["name"],
                                               agentgateway_values(), access, parent=self,
                                               depends_on=[self.crds, self.inference_crds, self.agentgateway_crds])
            after = [self.agentgateway]
        if args.class_name == ENVOY_CLASS:
            self.crds = k8s.yaml.v2.ConfigFile(f"{name}-gateway-api", file=versions.GATEWAY_API_STANDARD_INSTALL,
                                               opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=after)))
            _, self.envoy = namespaced_release(f"{name}-envoy", versions.ENVOY_GATEWAY, ENVOY_NAMESPACE, envoy_values(),
                                               access, parent=self, depends_on=[self.crds])
            proxy = envoy_proxy_object(args)
            self.proxy = k8s.apiextensions.CustomResource(
                f"{name}-proxy", api_version=proxy["apiVersion"], kind=proxy["kind"], metadata=proxy["metadata"],
                spec=proxy["spec"], opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[self.envoy])))
            # Envoy Gateway's docs: create the EnvoyProxy before the GatewayClass that references it.
            klass = k8s.apiextensions.CustomResource(
                f"{name}-class", api_version="gateway.networking.k8s.io/v1", kind="GatewayClass",
                metadata={"name": ENVOY_CLASS}, spec={"controllerName": ENVOY_CONTROLLER, "parametersRef": {
                    "group": "gateway.envoyproxy.io", "kind": "EnvoyProxy", "name": ENVOY_PROXY_NAME,
                    "namespace": ENVOY_NAMESPACE}},
                opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[self.proxy])))
            after = [klass]
        self.namespace = k8s.core.v1.Namespace(f"{name}-ns", metadata={"name": args.namespace}, opts=child)
        if args.class_name == AGENTGATEWAY_CLASS:
            params = agentgateway_parameters_object(args)
            self.params = k8s.apiextensions.CustomResource(
                f"{name}-params", api_version=params["apiVersion"], kind=params["kind"],
                metadata={**params["metadata"], "namespace": self.namespace.metadata["name"]}, spec=params["spec"],
                opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=after)))
            after = [self.params]
        obj = gateway_object(args)
        self.gateway = k8s.apiextensions.CustomResource(
            f"{name}-gateway", api_version=obj["apiVersion"], kind=obj["kind"],
            metadata={**obj["metadata"], "namespace": self.namespace.metadata["name"]}, spec=obj["spec"],
            opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=after)))
        self.gateway_name = GATEWAY_NAME
        self.namespace_name = args.namespace
        self.register_outputs({"gatewayClass": args.class_name, "gateway": f"{args.namespace}/{GATEWAY_NAME}",
                               "external": bool(args.external_reason)})
