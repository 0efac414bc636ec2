"""The serving layer (gpufleet:serving): LeaderWorkerSet's controller, the Gateway and each model server."""

from __future__ import annotations

from typing import Optional

import pulumi
import pulumi_kubernetes as k8s

from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.base import gitops, platforms
from gpufleet.base.node_labels import pool_taints
from gpufleet.base.spec import StackSpec
from gpufleet.base.spec.features.serving import resolved_class, routes_to_inference_pool


def build_serving(name: str, spec: StackSpec, access: ClusterAccess, opts: pulumi.ResourceOptions,
                  keda: Optional[pulumi.ComponentResource] = None, metrics_backend: str = "none") -> dict:
    """Every serving component the spec enables; returns them by role. `keda`: the workload layer's KEDA (its
    Prometheus address and trigger authentication); `metrics_backend`: the resolved observability backend."""
    serving = spec.serving
    if not serving.enabled:
        return {}
    from gpufleet.components.serving.gateway import ServingGateway, ServingGatewayArgs
    from gpufleet.components.serving.lws import LeaderWorkerSetController, LeaderWorkerSetControllerArgs
    from gpufleet.components.serving.model_server import ModelServer, ModelServerArgs

    traits = platforms.of(spec).scheduling
    klass = resolved_class(spec)
    out: dict = {"lws": LeaderWorkerSetController(f"{name}-lws", LeaderWorkerSetControllerArgs(), access, opts=opts)}
    exposure = serving.gateway
    external = exposure.exposure == "external"
    gateway = ServingGateway(f"{name}-serving-gateway", ServingGatewayArgs(
        klass, route_namespaces=tuple(sorted({m.namespace for m in serving.models})),
        envoy_service=traits.gateway_service(external), external_reason=exposure.external_reason if external else None,
        tls_secret=exposure.tls.certificate_secret if exposure.tls else None), access, opts=opts)
    out["gateway"] = gateway
    pooled = routes_to_inference_pool(spec)
    monitor = {"kube-prometheus-stack": "pod-monitor", "gke-managed": "pod-monitoring"}.get(metrics_backend)
    pools = {p.name: p for p in spec.node_pools}
    namespaces: dict[str, k8s.core.v1.Namespace] = {}
    # The namespaces and model servers are the delegated layer's where a GitOps engine applies it (gpufleet/base/gitops.py).
    for m in serving.models if gitops.pulumi_applies(spec, gitops.MODELS) else ():
        if m.namespace not in namespaces:
            namespaces[m.namespace] = k8s.core.v1.Namespace(
                f"{name}-serving-{m.namespace}", metadata={"name": m.namespace},
                opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(provider=access.provider)))
        # Tolerate by key and effect: GKE sets its own value on the GPU taint (gpufleet/base/node_labels.py).
        taints = tuple({"key": t["key"], "operator": "Exists", "effect": t["effect"]} for t in pool_taints(pools[m.pool]))
        args = ModelServerArgs(
            m, taints, dra_claim_template=f"{m.pool}-node" if pools[m.pool].allocation == "dra" else None, gateway=(gateway.namespace_name, gateway.gateway_name), inference_pool=pooled,
            api_key=(serving.api_key.secret_name, serving.api_key.key),
            provider_name=traits.inference_pool_provider if pooled else "none",
            epp_monitoring=pooled and traits.inference_pool_monitoring, metrics=monitor,
            prometheus_url=getattr(keda, "prometheus_server_address", None),
            prometheus_auth=(keda.trigger_authentication and keda.trigger_authentication.metadata["name"]) if keda else None,
            depends_on=[out["lws"].release, gateway.gateway, namespaces[m.namespace], *([keda.release] if keda else [])])
        out[f"model-{m.namespace}-{m.name}"] = ModelServer(f"{name}-model-{m.namespace}-{m.name}", args, access, opts=opts)
    return out
