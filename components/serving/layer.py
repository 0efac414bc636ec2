"""The serving layer (gpufleet:serving): LeaderWorkerSet's controller, the Gateway and each model server."""

from __future__ import annotations

from typing import Optional

import pulumi
import pulumi_kubernetes as k8s

from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.base import gitops, platforms
from gpufleet.base import labels as L
from gpufleet.base.node_labels import pool_taints
from gpufleet.base.spec import StackSpec
from gpufleet.base.spec.features.serving import resolved_class, routes_to_inference_pool


def rdma_pod(spec: StackSpec, pool, gpus: Optional[int] = None) -> Optional[dict]:
    """What a serving pod on an RDMA pool asks for to get the pool's interfaces, by the platform's
    `serving_rdma_fabric` trait, as gpufleet's own NCCL check asks for them (gpufleet/app/verify/nccl/allreduce.py):
    EFA, the node's EFA devices (NodeTraits.rdma_devices) in proportion to the pod's `gpus` of the node's GPUs (all of
    them for a pod that takes the whole node); the Network Operator, its RDMA device and the pool's Multus network;
    InfiniBand (AKS), the RDMA shared device plugin's resource of the pool's ports, no network; the platform's own
    (GKE's GPUDirect multi-networking, `serving_rdma_pod`). None: no RDMA pool, or a fabric not covered."""
    if not pool.rdma:
        return None
    p = platforms.of(spec)
    fabric = p.scheduling.serving_rdma_fabric
    if fabric == "own":
        return p.scheduling.serving_rdma_pod(spec, pool)
    if fabric == "efa":
        from gpufleet.base.spec.features.topology import gpus_per_node

        node_gpus = gpus_per_node(pool, spec.cluster.platform)
        devices = {name: max(1, count * gpus // node_gpus) if gpus and node_gpus and gpus < node_gpus else count
                   for name, count in p.nodes.rdma_devices(pool).items()}
        return {"resources": devices} if devices else None
    from gpufleet.components.gpu_stack.network_operator import network_name, pod_resource

    if fabric == "infiniband":
        # The pool's InfiniBand ports, advertised by the RDMA shared device plugin (NetworkOperatorArgs.infiniband:
        # no secondary network; pods use IB verbs on the host's ports, Azure/aks-rdma-infiniband configs).
        return {"resources": {pod_resource(pool): 1}}
    if fabric == "network-operator" and pool.rdma_network is not None:
        return {"resources": {pod_resource(pool): 1},
                "annotations": {L.MULTUS_NETWORKS_ANNOTATION: f"{pool.rdma_network.namespace}/{network_name(pool)}"}}
    return None


def build_serving(name: str, spec: StackSpec, access: ClusterAccess, opts: pulumi.ResourceOptions,
                  keda: Optional[pulumi.ComponentResource] = None, metrics_backend: str = "none",
                  team_namespaces: Optional[dict] = None) -> dict:
    """Every serving component the spec enables; returns them by role. `keda`: the workload layer's KEDA (its
    Prometheus address and trigger authentication); `metrics_backend`: the resolved observability backend;
    `team_namespaces`: namespace name -> the Namespace a Kueue team of the stack makes (a model there uses it)."""
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
    # Namespaces another component of the stack already makes (a Kueue team's), by name: used, not made again.
    namespaces: dict[str, k8s.core.v1.Namespace] = dict(team_namespaces or {})
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
            api_key=(serving.api_key.secret_name, serving.api_key.key), rdma=rdma_pod(spec, pools[m.pool], m.gpus_per_node),
            provider_name=traits.inference_pool_provider if pooled else "none",
            # The picker's metrics (the flow-control queue a model at zero wakes on): the platform's provider monitors
            # them (GKE), or the chart's ServiceMonitor does where prometheus-operator runs (kube-prometheus-stack).
            epp_monitoring=pooled and (traits.inference_pool_monitoring or monitor == "pod-monitor"), metrics=monitor,
            prometheus_url=getattr(keda, "prometheus_server_address", None),
            prometheus_auth=(keda.trigger_authentication and keda.trigger_authentication.metadata["name"]) if keda else None,
            depends_on=[out["lws"].release, gateway.gateway, namespaces[m.namespace], *([keda.release] if keda else [])])
        out[f"model-{m.namespace}-{m.name}"] = ModelServer(f"{name}-model-{m.namespace}-{m.name}", args, access, opts=opts)
    return out
