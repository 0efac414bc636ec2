"""Inference serving (issue 38), upstream formats: the Gateway API objects gpufleet creates validate against the
*standard* channel CRDs of Gateway API v1.6.1 (../shared/reference/crds/gateway-api; the plan itself validates them
against the experimental copy in Envoy Gateway's chart, a superset), and every serving custom resource validates against
the CRD the plan reads from its pinned chart (LeaderWorkerSet from lws, ScaledObject from keda). Plus the component
shape a reviewer checks: names, parents, what each route points at."""

from __future__ import annotations

import functools

import pytest

from gpufleet.app.plan.chart_archives import find_archive
from gpufleet.app.plan.custom_resources import validate
from gpufleet.app.plan.crd_sources import Crd, lookup
from gpufleet.base import versions
from tests.crd_validate import validate_cr
from tests.helpers import CHARTS, planned

GATEWAY_KINDS = ("GatewayClass", "Gateway", "HTTPRoute")
STACKS = ("inference-eks", "inference-gke", "inference-k3s")


def _objects(stack: str, kinds) -> list[dict]:
    out = []
    for r in planned(stack).resources:
        kind = r.type.rsplit(":", 1)[-1]
        if kind in kinds:
            inputs = r.revealed
            out.append({"apiVersion": inputs["apiVersion"], "kind": inputs["kind"], "metadata": inputs["metadata"],
                        "spec": inputs["spec"], "_name": r.name})
    return out


@pytest.mark.parametrize("stack", STACKS)
def test_gateway_api_objects_validate_against_the_standard_channel(stack):
    objs = _objects(stack, GATEWAY_KINDS)
    assert {o["kind"] for o in objs} >= {"Gateway", "HTTPRoute"}
    for obj in objs:
        obj = {k: v for k, v in obj.items() if k != "_name"}
        assert validate_cr(obj) == [], obj["kind"]


@pytest.mark.parametrize("stack", STACKS)
def test_serving_custom_resources_validate_against_their_pinned_charts_crds(stack):
    for pin in (versions.LWS, versions.KEDA):
        if find_archive(pin, CHARTS) is None:
            pytest.skip(f"no {pin.name} archive in {CHARTS}")
    objs = _objects(stack, ("LeaderWorkerSet", "ScaledObject"))
    assert {o["kind"] for o in objs} == {"LeaderWorkerSet", "ScaledObject"}
    for obj in objs:
        found = lookup(obj["apiVersion"], obj["kind"], CHARTS)
        assert isinstance(found, Crd), found
        body = {k: v for k, v in obj.items() if k != "_name"}
        assert [f"{f.path}: {f.message}" for f in validate(body, found.schema)] == [], obj["_name"]


@functools.lru_cache(maxsize=None)
def _envoy_k3s():
    """inference-k3s with Envoy Gateway asked for (className envoy) instead of the default agentgateway."""
    import copy

    from tests.helpers import example_config, plan_config

    config = copy.deepcopy(example_config("inference-k3s"))
    config["gpufleet:serving"]["gateway"] = {"className": "envoy"}
    return plan_config(config, "inference-k3s")


def _revealed(plan, kinds) -> list[dict]:
    return [{**r.revealed, "_name": r.name} for r in plan.resources if r.type.rsplit(":", 1)[-1] in kinds]


def test_routes_go_to_an_inference_pool_only_where_the_gateway_implements_it():
    """GKE's class and agentgateway (issue 52) route to the model's InferencePool; Envoy Gateway to its Service."""
    pool = {"group": "inference.networking.k8s.io", "kind": "InferencePool", "name": "qwen3-8b"}
    for stack, prefix in (("inference-gke", "inference-gke"), ("inference-eks", "inference-eks"),
                          ("inference-k3s", "inference")):
        routes = {o["_name"]: o for o in _objects(stack, ("HTTPRoute",))}
        assert routes[f"{prefix}-model-serving-qwen3-8b-route"]["spec"]["rules"][0]["backendRefs"] == [pool], stack
    routes = {o["_name"]: o for o in _revealed(_envoy_k3s(), ("HTTPRoute",))}
    backend = routes["inference-model-serving-qwen3-8b-route"]["spec"]["rules"][0]["backendRefs"][0]
    assert backend == {"kind": "Service", "name": "qwen3-8b", "port": 8000}


def test_serving_components_are_named_and_parented_predictably():
    plan = planned("inference-eks")
    by_name = {r.name: r for r in plan.resources}
    server = by_name["inference-eks-model-serving-llama-70b"]
    assert server.type == "gpufleet:serving:ModelServer"
    for role in ("lws", "pool-release", "route", "metrics", "scaler"):
        child = by_name[f"inference-eks-model-serving-llama-70b-{role}"]
        assert child.parent == server.urn, role
    assert "inference-eks-model-serving-llama-70b-service" not in by_name  # the picker routes, no Service
    gateway = by_name["inference-eks-serving-gateway"]
    for child in ("gateway-api", "inference-extension", "agentgateway-crds-ns", "agentgateway-crds-release",
                  "agentgateway-release", "params", "ns", "gateway"):
        assert by_name[f"inference-eks-serving-gateway-{child}"].parent == gateway.urn, child
    assert not any(name.startswith("inference-eks-serving-gateway-envoy") for name in by_name)
    agw = by_name["inference-eks-serving-gateway-agentgateway-release"].revealed
    assert (agw["name"], agw["namespace"], agw["version"]) == ("agentgateway", "agentgateway-system",
                                                               versions.AGENTGATEWAY.version)
    assert agw["values"] == {"inferenceExtension": {"enabled": True}, "proxy": {"image": {"tag": "v1.4.1"}}}
    crds = by_name["inference-eks-serving-gateway-agentgateway-crds-release"].revealed
    assert (crds["name"], crds["version"]) == ("agentgateway-crds", versions.AGENTGATEWAY_CRDS.version)
    assert by_name["inference-eks-serving-gateway-gateway-api"].revealed["file"] == versions.GATEWAY_API_STANDARD_INSTALL
    # A model server's objects wait for what they need: the LWS controller, the Gateway, the namespace and KEDA (its
    # ScaledObject's CRD) (issue 56: the KEDA dependency turned off survived).
    needs = {by_name[n].urn for n in ("inference-eks-lws-release", "inference-eks-serving-gateway-gateway",
                                      "inference-eks-serving-serving", "inference-eks-keda-release")}
    assert needs <= set(by_name["inference-eks-model-serving-llama-70b-lws"].dependencies)
    assert by_name["inference-eks-serving-gateway-inference-extension"].revealed["file"] == (
        "https://github.com/kubernetes-sigs/gateway-api-inference-extension/releases/download/v1.5.0/manifests.yaml")
    # Envoy Gateway on request: standard CRDs first, the chart's bundled safe-upgrades policy off.
    envoy = {r.name: r for r in _envoy_k3s().resources}
    release = envoy["inference-serving-gateway-envoy-release"]
    assert release.parent == envoy["inference-serving-gateway"].urn
    assert release.revealed["values"]["crds"] == {"gatewayAPI": {"safeUpgradePolicy": {"enabled": False}}}
    assert "inference-serving-gateway-agentgateway-release" not in envoy


def test_versions_of_gateway_picker_and_crds_agree():
    """One Gateway API and one Inference Extension release across what gpufleet installs: agentgateway and the endpoint
    picker were built against the pinned CRD releases (their go.mod, versions.py)."""
    assert versions.AGENTGATEWAY_GATEWAY_API == versions.GATEWAY_API
    assert versions.AGENTGATEWAY_INFERENCE_EXTENSION == versions.INFERENCE_EXTENSION
    assert versions.ENDPOINT_PICKER_INFERENCE_EXTENSION == versions.INFERENCE_EXTENSION
    assert versions.AGENTGATEWAY.version == versions.AGENTGATEWAY_CRDS.version


def test_multi_node_replica_is_a_leader_and_workers_and_a_dra_replica_claims_the_domain():
    lws = {o["_name"]: o for o in _objects("inference-k3s", ("LeaderWorkerSet",))}
    spec = lws["inference-model-serving-deepseek-r1-lws"]["spec"]["leaderWorkerTemplate"]
    assert spec["size"] == 4
    leader, worker = spec["leaderTemplate"]["spec"], spec["workerTemplate"]["spec"]
    claims = [{"name": "gpus", "resourceClaimTemplateName": "gb200-node"},
              {"name": "channel", "resourceClaimTemplateName": "serve-channel"}]
    assert leader["resourceClaims"] == claims and worker["resourceClaims"] == claims
    assert "nvidia.com/gpu" not in str(leader["containers"][0]["resources"])
    # Workers run without a shell: the kubelet expands the leader's address in the argv.
    assert worker["containers"][0]["command"] == ["ray", "start", "--address=$(LWS_LEADER_ADDRESS):6379", "--block"]
    assert spec["leaderTemplate"]["metadata"]["labels"] == {"app": "deepseek-r1"}


@pytest.mark.parametrize("stack, prefix", [("inference-gke", "inference-gke"), ("inference-eks", "inference-eks")])
def test_scale_to_zero_wakes_on_the_endpoint_pickers_queue(stack, prefix):
    scaler = {o["_name"]: o for o in _objects(stack, ("ScaledObject",))}
    spec = scaler[f"{prefix}-model-serving-qwen3-8b-scaler"]["spec"]
    assert spec["minReplicaCount"] == 0
    queries = [t["metadata"]["query"] for t in spec["triggers"]]
    assert any("vllm:num_requests_waiting" in q for q in queries)
    assert 'sum(llm_d_epp_flow_control_queue_size{inference_pool="qwen3-8b"})' in queries
    # GKE's managed Prometheus needs KEDA's ClusterTriggerAuthentication on every trigger (issue 56: the KEDA test
    # before the authentication turned `not` survived); the in-cluster Prometheus of kube-prometheus-stack needs none.
    refs = {t.get("authenticationRef", {}).get("kind") for t in spec["triggers"]}
    assert refs == ({"ClusterTriggerAuthentication"} if stack == "inference-gke" else {None})


def test_the_pickers_metrics_are_scraped_where_a_model_scales():
    """The picker chart's monitoring: GKE's provider (Managed Service for Prometheus), elsewhere a ServiceMonitor with
    a token Secret of its own per release (the chart's default name is one for all)."""
    by_name = {r.name: r.revealed for r in planned("inference-eks").resources}
    router = by_name["inference-eks-model-serving-qwen3-8b-pool-release"]["values"]["router"]
    assert router["monitoring"] == {"prometheus": {"enabled": True, "auth": {"secretName": "qwen3-8b-epp-metrics-reader"}}}
    assert router["modelServers"] == {"matchLabels": {"app": "qwen3-8b"}, "targetPorts": [{"number": 8000}], "type": "vllm"}
    assert router["epp"]["pluginsConfigFile"] == "flow-control.yaml"
    gke = {r.name: r.revealed for r in planned("inference-gke").resources}
    values = gke["inference-gke-model-serving-qwen3-8b-pool-release"]["values"]
    assert values["provider"] == {"name": "gke"}
    assert values["router"]["monitoring"] == {"prometheus": {"enabled": True}}


def test_the_idle_line_names_the_endpoint_pickers_requests_from_the_chart():
    """EPP_REQUESTS is the pinned picker chart's own default (its router library's values.yaml), one picker per pooled
    model server; a Service-routed model (Envoy Gateway) has no picker and names none."""
    import tarfile

    import yaml

    from gpufleet.base.spec.features.serving import EPP_REQUESTS, serving_path

    path = find_archive(versions.ENDPOINT_PICKER, CHARTS)
    if path is None:
        pytest.skip("no llm-d-router-gateway archive")
    with tarfile.open(path) as tar:
        values = yaml.safe_load(tar.extractfile("llm-d-router-gateway/charts/router/values.yaml"))
    assert values["epp"]["resources"]["requests"] == EPP_REQUESTS
    assert values["epp"]["replicas"] == 1
    for stack in ("inference-gke", "inference-eks", "inference-k3s"):
        plan = planned(stack)
        lines = serving_path(plan.spec, plan.capacity)[1:]
        assert lines and all("+ endpoint picker 8 CPU / 8Gi requested on system nodes" in line for line in lines), stack
    envoy = _envoy_k3s()
    assert not any("endpoint picker" in line and "requested" in line for line in serving_path(envoy.spec, envoy.capacity))


# Exposure (issue 48): internal endpoints, routes from the model namespaces only, an API key from a Secret.

@pytest.mark.parametrize("stack", STACKS)
def test_the_gateway_admits_routes_from_the_model_namespaces_only(stack):
    (gateway,) = _objects(stack, ("Gateway",))
    (listener,) = gateway["spec"]["listeners"]
    assert listener["allowedRoutes"] == {"namespaces": {"from": "Selector", "selector": {"matchExpressions": [
        {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["serving"]}]}}}
    assert (listener["protocol"], listener["port"]) == ("HTTP", 80)


@pytest.mark.parametrize("stack, service", [
    ("inference-eks", {"metadata": {"annotations": {
        "service.beta.kubernetes.io/aws-load-balancer-internal": "true",
        "service.beta.kubernetes.io/aws-load-balancer-scheme": "internal"}}, "spec": {"type": "LoadBalancer"}}),
    ("inference-k3s", {"spec": {"type": "ClusterIP"}}),
])
def test_agentgateway_publishes_the_gateway_through_an_internal_service(stack, service):
    """The Gateway names the AgentgatewayParameters beside it, whose Service is the platform's internal one; the
    object validates against the CRD of the pinned agentgateway-crds chart."""
    (gateway,) = _objects(stack, ("Gateway",))
    (params,) = _objects(stack, ("AgentgatewayParameters",))
    assert gateway["spec"]["gatewayClassName"] == "agentgateway"
    assert gateway["spec"]["infrastructure"] == {"parametersRef": {
        "group": "agentgateway.dev", "kind": "AgentgatewayParameters", "name": params["metadata"]["name"]}}
    assert params["metadata"]["namespace"] == gateway["metadata"]["namespace"] == "gpufleet-serving"
    assert params["spec"] == {"service": service}
    assert _objects(stack, ("GatewayClass",)) == []  # agentgateway's controller owns class `agentgateway`
    if find_archive(versions.AGENTGATEWAY_CRDS, CHARTS) is None:
        pytest.skip("no agentgateway-crds archive")
    found = lookup(params["apiVersion"], params["kind"], CHARTS)
    assert isinstance(found, Crd), found
    body = {k: v for k, v in params.items() if k != "_name"}
    assert [f"{f.path}: {f.message}" for f in validate(body, found.schema)] == []


def test_envoy_publishes_the_gateway_through_an_internal_service():
    (klass,) = _revealed(_envoy_k3s(), ("GatewayClass",))
    (proxy,) = _revealed(_envoy_k3s(), ("EnvoyProxy",))
    ref = klass["spec"]["parametersRef"]
    assert (ref["kind"], ref["name"], ref["namespace"]) == ("EnvoyProxy", proxy["metadata"]["name"],
                                                            proxy["metadata"]["namespace"])
    assert proxy["spec"]["provider"]["kubernetes"]["envoyService"] == {"type": "ClusterIP"}
    if find_archive(versions.ENVOY_GATEWAY, CHARTS) is None:
        pytest.skip("no gateway-helm archive")
    found = lookup(proxy["apiVersion"], proxy["kind"], CHARTS)
    assert isinstance(found, Crd), found
    body = {k: v for k, v in proxy.items() if k not in ("_name", "urn", "id")}
    body = {k: body[k] for k in ("apiVersion", "kind", "metadata", "spec")}
    assert [f"{f.path}: {f.message}" for f in validate(body, found.schema)] == []


def test_gke_defaults_to_its_internal_class():
    (gateway,) = _objects("inference-gke", ("Gateway",))
    assert gateway["spec"]["gatewayClassName"] == "gke-l7-rilb"
    assert "annotations" not in gateway["metadata"]  # no exemption: nothing to exempt


@pytest.mark.parametrize("stack", STACKS)
def test_every_model_server_requires_the_api_key_from_its_secret(stack):
    for lws in _objects(stack, ("LeaderWorkerSet",)):
        template = lws["spec"]["leaderWorkerTemplate"]
        leader = template.get("leaderTemplate", template["workerTemplate"])["spec"]["containers"][0]
        assert leader["env"][0] == {"name": "VLLM_API_KEY", "valueFrom": {"secretKeyRef": {
            "name": "vllm-api-key", "key": "api-key", "optional": False}}}, lws["_name"]
        assert "api-key" not in " ".join(leader["command"])  # never on the command line


@pytest.mark.parametrize("stack, prefix", [("inference-eks", "inference-eks"), ("inference-gke", "inference-gke")])
def test_a_gated_model_reads_its_token_and_a_tensor_parallel_one_gets_shm(stack, prefix):
    """Issue 52: the Llama server (gated, tensor parallel 8 over two pods) gets HF_TOKEN from the Secret in every pod
    and a memory-backed /dev/shm of the stack's size; the objects validate against the lws chart's CRD (above)."""
    lws = {o["_name"]: o for o in _objects(stack, ("LeaderWorkerSet",))}
    template = lws[f"{prefix}-model-serving-llama-70b-lws"]["spec"]["leaderWorkerTemplate"]
    token = {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf-token", "key": "HF_TOKEN", "optional": False}}}
    for role in ("leaderTemplate", "workerTemplate"):
        pod = template[role]["spec"]
        (container,) = pod["containers"]
        assert token in container["env"], role
        assert container["volumeMounts"] == [{"name": "dshm", "mountPath": "/dev/shm"}]
        assert pod["volumes"] == [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "16Gi"}}]
    # The small model: neither (not gated, tensor parallel 1), so its objects are as before issue 52.
    small = lws[f"{prefix}-model-serving-qwen3-8b-lws"]["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]
    assert "volumes" not in small and [e["name"] for e in small["containers"][0]["env"]] == ["VLLM_API_KEY"]


def test_an_external_https_gateway_validates_and_carries_its_reason():
    """The objects an external stack gets: an HTTPS listener on a certificate Secret (standard channel CRD), the
    reason as the secure-defaults exemption on the Gateway and the EnvoyProxy."""
    from gpufleet.components.serving.gateway import ServingGatewayArgs, envoy_proxy_object, gateway_object

    args = ServingGatewayArgs("envoy", route_namespaces=("serving", "team-a"), external_reason="public demo",
                              tls_secret="serving-tls", envoy_service={"type": "LoadBalancer"})
    gateway = gateway_object(args)
    (listener,) = gateway["spec"]["listeners"]
    assert (listener["protocol"], listener["port"]) == ("HTTPS", 443)
    assert listener["tls"]["certificateRefs"] == [{"kind": "Secret", "name": "serving-tls"}]
    assert gateway["metadata"]["annotations"] == {"gpufleet.io/exempt-secure-defaults": "public demo"}
    assert envoy_proxy_object(args)["metadata"]["annotations"] == {"gpufleet.io/exempt-secure-defaults": "public demo"}
    assert validate_cr(gateway) == []


def test_an_external_stack_plans_an_https_gateway_its_reason_exempts():
    """exposure: external end to end on EKS: agentgateway's Service internet-facing, HTTPS on the named certificate,
    the reason on the Gateway and the AgentgatewayParameters, and secure-defaults passes them because of it."""
    import copy

    from tests.helpers import example_config, plan_config

    config = copy.deepcopy(example_config("inference-eks"))
    config["gpufleet:serving"]["gateway"] = {"exposure": "external", "externalReason": "public demo",
                                             "tls": {"certificateSecret": "serving-tls"}}
    plan = plan_config(config, "inference-eks")
    by_name = {r.name: r.revealed for r in plan.resources}
    params = by_name["inference-eks-serving-gateway-params"]
    assert params["spec"]["service"] == {"metadata": {"annotations": {
        "service.beta.kubernetes.io/aws-load-balancer-scheme": "internet-facing"}}, "spec": {"type": "LoadBalancer"}}
    gateway = by_name["inference-eks-serving-gateway-gateway"]
    assert gateway["spec"]["listeners"][0]["tls"]["certificateRefs"] == [{"kind": "Secret", "name": "serving-tls"}]
    for obj in (params, gateway):
        assert obj["metadata"]["annotations"] == {"gpufleet.io/exempt-secure-defaults": "public demo"}
    assert [v for v in plan.violations if v.policy == "secure-defaults"] == []


def picker_routes(plan) -> dict[str, str]:
    """route name -> the InferencePool it goes to, for routes whose pool has its endpoint picker release in the plan
    (a route to anything else fails)."""
    pickers = {r.revealed.get("name") for r in plan.resources
               if r.type.endswith(":Release") and r.revealed.get("chart", "").endswith(versions.ENDPOINT_PICKER.name)}
    out = {}
    for r in plan.resources:
        if r.type.endswith(":HTTPRoute"):
            (backend,) = r.revealed["spec"]["rules"][0]["backendRefs"]
            assert backend["kind"] == "InferencePool" and backend["name"] in pickers, (r.name, backend, pickers)
            out[r.revealed["metadata"]["name"]] = backend["name"]
    return out


def test_every_platform_has_an_inference_stack_routing_through_the_picker():
    """Issue 52's "done when": one inference stack per platform plans with model-aware routing, every HTTPRoute to an
    InferencePool whose endpoint picker the stack installs (AKS's: examples/serving/Pulumi.inference-aks.yaml,
    tests/upstream/test_serving_examples.py test_serving_on_aks_routes_through_the_picker)."""
    from gpufleet.base import platforms

    plans = {s: planned(s) for s in (*STACKS, "existing-coreweave")}
    assert {p.spec.cluster.platform for p in plans.values()} == set(platforms.names()) - {"aks"}
    assert {s: picker_routes(p) for s, p in plans.items()} == {
        "inference-eks": {"qwen3-8b": "qwen3-8b", "llama-70b": "llama-70b"},
        "inference-gke": {"qwen3-8b": "qwen3-8b", "llama-70b": "llama-70b"},
        "inference-k3s": {"qwen3-8b": "qwen3-8b", "deepseek-r1": "deepseek-r1"},
        "existing-coreweave": {"qwen3-8b": "qwen3-8b"}}
