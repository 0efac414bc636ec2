"""components/serving on small model specs (issue 56): the objects the serving layer emits, exactly, per branch (one
node or several per replica, DRA claims, scaling to zero, an InferencePool or a Service behind the route, the
Gateway's listener and allowed routes), so a mutant of a branch fails here without planning an example stack."""

from __future__ import annotations

from gpufleet.base import labels as L
from gpufleet.base.spec.features.serving import FLOW_CONTROL_QUEUE_METRIC, ModelServerSpec
from gpufleet.components.serving import gateway as G
from gpufleet.components.serving import model_server as S

TAINT = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


def _m(**more) -> ModelServerSpec:
    return ModelServerSpec.model_validate({"name": "llama", "pool": "h100", "model": "meta/llama", **more})


def test_a_one_node_replica_is_its_own_leader_with_the_api_key_from_its_secret():
    lws = S.leader_worker_set(_m(gpusPerNode=2), (TAINT,), image="img")
    assert lws["metadata"] == {"name": "llama", "namespace": "serving"}
    assert lws["spec"]["replicas"] == 1
    template = lws["spec"]["leaderWorkerTemplate"]
    assert "leaderTemplate" not in template and template["size"] == 1
    assert template["restartPolicy"] == "RecreateGroupOnPodRestart"
    pod = template["workerTemplate"]
    assert pod["metadata"] == {"labels": {"app": "llama"}}
    assert pod["spec"] == {"nodeSelector": {L.POOL_LABEL: "h100"}, "tolerations": [TAINT], "containers": [{
        "name": "vllm", "image": "img",
        "command": ["vllm", "serve", "meta/llama", "--port", "8000", "--tensor-parallel-size", "2"],
        "resources": {"limits": {"nvidia.com/gpu": "2"}},
        "ports": [{"name": "http", "containerPort": 8000}],
        "readinessProbe": {"httpGet": {"path": "/health", "port": 8000}, "periodSeconds": 10},
        "env": [{"name": "VLLM_API_KEY", "valueFrom": {"secretKeyRef": {"name": "vllm-api-key", "key": "api-key",
                                                                        "optional": False}}}],
    }]}
    no_key = S.pod_template(_m(), "leader", (), api_key=None)["spec"]["containers"][0]
    assert "env" not in no_key


def test_a_two_node_replica_has_a_leader_and_shell_free_workers_claiming_the_domain():
    lws = S.leader_worker_set(_m(nodesPerReplica=2, computeDomain="nvl"), claim="h100-node",
                              api_key=("k", "v"))
    template = lws["spec"]["leaderWorkerTemplate"]
    assert template["size"] == 2
    worker, leader = template["workerTemplate"], template["leaderTemplate"]
    assert worker["metadata"] == {"labels": {"app": "llama-worker"}}
    (w,) = worker["spec"]["containers"]
    assert "ports" not in w and "readinessProbe" not in w and "env" not in w
    claims = [{"name": "gpus", "resourceClaimTemplateName": "h100-node"},
              {"name": "channel", "resourceClaimTemplateName": "nvl-channel"}]
    assert worker["spec"]["resourceClaims"] == leader["spec"]["resourceClaims"] == claims
    assert w["resources"] == {"claims": [{"name": "gpus"}, {"name": "channel"}]}
    assert leader["spec"]["containers"][0]["command"][:2] == ["sh", "-c"]
    assert leader["spec"]["containers"][0]["env"][0]["valueFrom"]["secretKeyRef"]["name"] == "k"
    # A DRA claim without a ComputeDomain: the GPUs only.
    alone = S.pod_template(_m(), "leader", (), claim="h100-gpu")["spec"]
    assert alone["resourceClaims"] == [{"name": "gpus", "resourceClaimTemplateName": "h100-gpu"}]
    assert "resourceClaims" not in S.pod_template(_m(), "leader", ())["spec"]


def test_scaling_sets_the_replicas_and_zero_wakes_on_the_flow_control_queue_only_when_pooled():
    m = _m(scaling={"minReplicas": 0, "maxReplicas": 3, "target": 4})
    assert S.leader_worker_set(m)["spec"]["replicas"] == 0
    pooled = S.scaled_object(m, "http://prom", "gmp", pooled=True)
    assert pooled["spec"]["scaleTargetRef"] == {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet", "name": "llama"}
    assert (pooled["spec"]["minReplicaCount"], pooled["spec"]["maxReplicaCount"]) == (0, 3)
    first, wake = pooled["spec"]["triggers"]
    assert first == {"type": "prometheus", "metricType": "AverageValue", "metadata": {
        "serverAddress": "http://prom", "threshold": "4.0",
        "query": 'sum(avg_over_time(vllm:num_requests_waiting{namespace="serving",pod=~"llama-[0-9]+"}[1m]))'},
        "authenticationRef": {"name": "gmp", "kind": "ClusterTriggerAuthentication"}}
    assert wake["metadata"] == {"serverAddress": "http://prom", "query": f'sum({FLOW_CONTROL_QUEUE_METRIC}{{inference_pool="llama"}})',
                                "threshold": "1", "activationThreshold": "0"}
    assert len(S.scaled_object(m, "http://prom", None, pooled=False)["spec"]["triggers"]) == 1
    one = S.scaled_object(_m(scaling={"minReplicas": 1, "signal": "kvCache"}), "http://prom", None, pooled=True)
    (only,) = one["spec"]["triggers"]
    assert "authenticationRef" not in only and "vllm:kv_cache_usage_perc" in only["metadata"]["query"]


def test_the_route_goes_to_the_pool_or_the_service_under_the_model_s_prefix():
    pooled = S.http_route(_m(), ("gw-ns", "gw"), pooled=True)["spec"]
    assert pooled["parentRefs"] == [{"name": "gw", "namespace": "gw-ns"}]
    (rule,) = pooled["rules"]
    assert rule["matches"] == [{"path": {"type": "PathPrefix", "value": "/llama"}}]
    assert rule["backendRefs"] == [{"group": "inference.networking.k8s.io", "kind": "InferencePool", "name": "llama"}]
    plain = S.http_route(_m(), ("gw-ns", "gw"), pooled=False)["spec"]["rules"][0]["backendRefs"]
    assert plain == [{"kind": "Service", "name": "llama", "port": 8000}]


def test_picker_values_per_flow_control_and_monitoring():
    """llm-d-router-gateway's values (versions.ENDPOINT_PICKER): the pool's selector, port and server type; flow
    control's plugins config; monitoring on request, with a token Secret per release outside GKE."""
    assert S.picker_values(_m(inferencePool={"flowControl": False}), "none", False) == {
        "router": {"modelServers": {"matchLabels": {"app": "llama"}, "targetPorts": [{"number": 8000}], "type": "vllm"}},
        "provider": {"name": "none"}}
    both = S.picker_values(_m(inferencePool={"selector": {"tier": "a"}}), "gke", True)
    assert both["router"]["modelServers"] == {"matchLabels": {"tier": "a"}, "targetPorts": [{"number": 8000}], "type": "vllm"}
    assert both["router"]["epp"] == {"pluginsCustomConfig": {"flow-control.yaml": S.FLOW_CONTROL_CONFIG},
                                     "pluginsConfigFile": "flow-control.yaml"}
    assert both["router"]["monitoring"] == {"prometheus": {"enabled": True}}
    scraped = S.picker_values(_m(), "none", True)
    assert scraped["router"]["monitoring"] == {"prometheus": {"enabled": True, "auth": {"secretName": "llama-epp-metrics-reader"}}}


def test_metrics_monitors_of_each_kind():
    pm = S.metrics_monitor(_m(labels={"team": "a"}), "pod-monitor")
    assert pm["kind"] == "PodMonitor" and pm["metadata"] == {"name": "llama", "namespace": "serving"}
    assert pm["spec"] == {"selector": {"matchLabels": {"app": "llama", "team": "a"}},
                          "podMetricsEndpoints": [{"port": "http", "path": "/metrics"}]}
    gmp = S.metrics_monitor(_m(), "pod-monitoring")
    assert gmp["kind"] == "PodMonitoring" and gmp["metadata"]["name"] == S.monitoring_name(_m()) == "llama-server"


def test_the_gateway_listener_and_the_namespaces_it_admits():
    plain = G.gateway_object(G.ServingGatewayArgs("envoy"))
    assert plain["metadata"] == {"name": G.GATEWAY_NAME, "namespace": G.NAMESPACE}
    assert plain["spec"] == {"gatewayClassName": "envoy", "listeners": [
        {"name": "http", "protocol": "HTTP", "port": 80, "allowedRoutes": {"namespaces": {"from": "Same"}}}]}
    tls = G.gateway_object(G.ServingGatewayArgs("gke-l7-rilb", route_namespaces=("b", "a", "b"), tls_secret="cert",
                                                external_reason="public demo"))
    assert tls["metadata"]["annotations"] == {L.exempt_key(L.SECURE_DEFAULTS_POLICY): "public demo"}
    assert tls["spec"]["listeners"] == [{"name": "https", "protocol": "HTTPS", "port": 443, "allowedRoutes": {"namespaces": {
        "from": "Selector", "selector": {"matchExpressions": [{"key": L.NAMESPACE_NAME_LABEL, "operator": "In", "values": ["a", "b"]}]}}},
        "tls": {"mode": "Terminate", "certificateRefs": [{"kind": "Secret", "name": "cert"}]}}]
    proxy = G.envoy_proxy_object(G.ServingGatewayArgs("envoy"))
    assert proxy["metadata"] == {"name": G.ENVOY_PROXY_NAME, "namespace": G.ENVOY_NAMESPACE}
    assert proxy["spec"] == {"provider": {"type": "Kubernetes", "kubernetes": {"envoyService": {"type": "ClusterIP"}}}}
    assert G.envoy_values() == {"crds": {"gatewayAPI": {"safeUpgradePolicy": {"enabled": False}}}}


def test_the_args_are_frozen_values():
    from gpufleet.components.serving.lws import LeaderWorkerSetControllerArgs

    assert all(a.__dataclass_params__.frozen for a in (S.ModelServerArgs, G.ServingGatewayArgs, LeaderWorkerSetControllerArgs))


def _children(args: S.ModelServerArgs, facts: dict | None = None) -> dict:
    import pulumi
    import pulumi_kubernetes as k8s

    from gpufleet.components.cluster_access import ClusterAccess
    from gpufleet.testing import run as run_under_mocks

    def program():
        provider = k8s.Provider("k8s", kubeconfig="apiVersion: v1\nkind: Config\n")
        access = ClusterAccess(name="c", platform="k3s", kubernetes_version="1.34", kubeconfig=pulumi.Output.from_input(""),
                               provider=provider, facts=facts or {})
        S.ModelServer("llama", args, access)

    return {r.name: r for r in run_under_mocks(program).registrations}


def test_the_model_server_s_children_per_branch():
    scaled = _m(scaling={"minReplicas": 0, "maxReplicas": 2})
    pooled = _children(S.ModelServerArgs(scaled, gateway=("gw-ns", "gw"), inference_pool=True, epp_monitoring=True,
                                         metrics="pod-monitor", prometheus_url="http://prom"))
    assert sorted(n for n in pooled if n.startswith("llama-")) == [
        "llama-lws", "llama-metrics", "llama-pool-release", "llama-route", "llama-scaler"]
    assert pooled["llama-pool-release"].inputs["values"]["router"]["monitoring"]["prometheus"]["enabled"] is True
    assert pooled["llama-pool-release"].urn in pooled["llama-route"].dependencies
    assert pooled["llama-lws"].urn in pooled["llama-scaler"].dependencies
    # The endpoint picker is monitored only for a model that scales (its queue wakes the pool).
    still = _children(S.ModelServerArgs(_m(), inference_pool=True, epp_monitoring=True))
    assert "monitoring" not in still["llama-pool-release"].inputs["values"]["router"]
    plain = _children(S.ModelServerArgs(_m(), gateway=("gw-ns", "gw")), {"image_mirror": "mirror.example.com"})
    assert sorted(n for n in plain if n.startswith("llama-")) == ["llama-lws", "llama-route", "llama-service"]
    assert plain["llama-service"].inputs["spec"] == {"selector": {"app": "llama"},
                                                    "ports": [{"name": "http", "port": 8000, "targetPort": 8000}]}
    assert plain["llama-service"].urn in plain["llama-route"].dependencies
    image = plain["llama-lws"].inputs["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]["image"]
    assert image.startswith("mirror.example.com/")
    # Scaling without a Prometheus address: no ScaledObject.
    assert "llama-scaler" not in _children(S.ModelServerArgs(scaled))


def test_model_server_args_default_to_an_unmonitored_endpoint_picker():
    assert S.ModelServerArgs(_m()).epp_monitoring is False and S.ModelServerArgs(_m()).inference_pool is False


def _gateway_children(class_name: str) -> dict:
    import pulumi
    import pulumi_kubernetes as k8s

    from gpufleet.components.cluster_access import ClusterAccess
    from gpufleet.testing import run as run_under_mocks

    def program():
        provider = k8s.Provider("k8s", kubeconfig="apiVersion: v1\nkind: Config\n")
        access = ClusterAccess(name="c", platform="k3s", kubernetes_version="1.34", kubeconfig=pulumi.Output.from_input(""),
                               provider=provider)
        G.ServingGateway("gw", G.ServingGatewayArgs(class_name), access)

    return {r.name: r for r in run_under_mocks(program).registrations if r.name.startswith("gw-")}


def test_envoy_gateway_is_installed_for_the_envoy_class_only():
    envoy = _gateway_children("envoy")
    assert {"gw-gateway-api", "gw-envoy-release", "gw-proxy", "gw-class", "gw-ns", "gw-gateway"} <= set(envoy)
    assert envoy["gw-class"].urn in envoy["gw-gateway"].dependencies
    # Another class (a cluster's own Gateway API implementation, sorting before or after "envoy"): the Gateway only.
    for other in ("cilium", "gke-l7-rilb"):
        assert sorted(_gateway_children(other)) == ["gw-gateway", "gw-ns"], other
