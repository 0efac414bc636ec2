"""Inference serving (issue 38), upstream formats: the Gateway API objects gpufleet creates validate against the
*standard* channel CRDs of Gateway API v1.6.1 (../shared/reference/crds/gateway-api; the plan itself validates them
against the experimental copy in Envoy Gateway's chart, a superset), and every serving custom resource validates against
the CRD the plan reads from its pinned chart (LeaderWorkerSet from lws, ScaledObject from keda). Plus the component
shape a reviewer checks: names, parents, what each route points at."""

from __future__ import annotations

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


def test_routes_go_to_an_inference_pool_only_where_the_gateway_implements_it():
    gke = {o["_name"]: o for o in _objects("inference-gke", ("HTTPRoute",))}
    eks = {o["_name"]: o for o in _objects("inference-eks", ("HTTPRoute",))}
    backend = gke["inference-gke-model-serving-qwen3-8b-route"]["spec"]["rules"][0]["backendRefs"][0]
    assert backend == {"group": "inference.networking.k8s.io", "kind": "InferencePool", "name": "qwen3-8b"}
    backend = eks["inference-eks-model-serving-qwen3-8b-route"]["spec"]["rules"][0]["backendRefs"][0]
    assert backend == {"kind": "Service", "name": "qwen3-8b", "port": 8000}


def test_serving_components_are_named_and_parented_predictably():
    plan = planned("inference-eks")
    by_name = {r.name: r for r in plan.resources}
    server = by_name["inference-eks-model-serving-llama-70b"]
    assert server.type == "gpufleet:serving:ModelServer"
    for role in ("lws", "service", "route", "metrics", "scaler"):
        child = by_name[f"inference-eks-model-serving-llama-70b-{role}"]
        assert child.parent == server.urn, role
    gateway = by_name["inference-eks-serving-gateway"]
    assert by_name["inference-eks-serving-gateway-envoy-release"].parent == gateway.urn
    release = by_name["inference-eks-serving-gateway-envoy-release"].revealed
    # Standard CRDs first; the chart's bundled safe-upgrades policy off (the standard bundle installs its own).
    assert release["values"]["crds"] == {"gatewayAPI": {"safeUpgradePolicy": {"enabled": False}}}
    assert by_name["inference-eks-serving-gateway-gateway-api"].revealed["file"] == versions.GATEWAY_API_STANDARD_INSTALL
    # A model server's objects wait for what they need: the LWS controller, the Gateway, the namespace and KEDA (its
    # ScaledObject's CRD) (issue 56: the KEDA dependency turned off survived).
    needs = {by_name[n].urn for n in ("inference-eks-lws-release", "inference-eks-serving-gateway-gateway",
                                      "inference-eks-serving-serving", "inference-eks-keda-release")}
    assert needs <= set(by_name["inference-eks-model-serving-llama-70b-lws"].dependencies)


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


def test_gke_scale_to_zero_wakes_on_the_endpoint_pickers_queue():
    scaler = {o["_name"]: o for o in _objects("inference-gke", ("ScaledObject",))}
    spec = scaler["inference-gke-model-serving-qwen3-8b-scaler"]["spec"]
    assert spec["minReplicaCount"] == 0
    queries = [t["metadata"]["query"] for t in spec["triggers"]]
    assert any("vllm:num_requests_waiting" in q for q in queries)
    assert any('inference_extension_flow_control_queue_size{inference_pool="qwen3-8b"}' in q for q in queries)
    # GKE's managed Prometheus needs KEDA's ClusterTriggerAuthentication on every trigger (issue 56: the KEDA test
    # before the authentication turned `not` survived).
    refs = {t.get("authenticationRef", {}).get("kind") for t in spec["triggers"]}
    assert refs == {"ClusterTriggerAuthentication"}


def test_the_idle_line_names_the_endpoint_pickers_requests_from_the_chart():
    """EPP_REQUESTS is the pinned inferencepool chart's own default (values.yaml), one picker per pooled model server;
    a Service-routed model (Envoy Gateway) has no picker and names none."""
    import tarfile

    import yaml

    from gpufleet.base.spec.features.serving import EPP_REQUESTS, serving_path

    path = find_archive(versions.INFERENCEPOOL, CHARTS)
    if path is None:
        pytest.skip("no inferencepool archive")
    with tarfile.open(path) as tar:
        values = yaml.safe_load(tar.extractfile("inferencepool/values.yaml"))
    assert values["inferenceExtension"]["resources"]["requests"] == EPP_REQUESTS
    assert values["inferenceExtension"]["replicas"] == 1
    gke = planned("inference-gke")
    lines = serving_path(gke.spec, gke.capacity)[1:]
    assert lines and all("+ endpoint picker 4 CPU / 8Gi requested on system nodes" in line for line in lines)
    k3s = planned("inference-k3s")
    assert not any("endpoint picker" in line and "requested" in line for line in serving_path(k3s.spec, k3s.capacity))


# Exposure (issue 48): internal endpoints, routes from the model namespaces only, an API key from a Secret.

@pytest.mark.parametrize("stack", STACKS)
def test_the_gateway_admits_routes_from_the_model_namespaces_only(stack):
    (gateway,) = _objects(stack, ("Gateway",))
    (listener,) = gateway["spec"]["listeners"]
    assert listener["allowedRoutes"] == {"namespaces": {"from": "Selector", "selector": {"matchExpressions": [
        {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["serving"]}]}}}
    assert (listener["protocol"], listener["port"]) == ("HTTP", 80)


@pytest.mark.parametrize("stack, service", [
    ("inference-eks", {"type": "LoadBalancer", "annotations": {
        "service.beta.kubernetes.io/aws-load-balancer-internal": "true",
        "service.beta.kubernetes.io/aws-load-balancer-scheme": "internal"}}),
    ("inference-k3s", {"type": "ClusterIP"}),
])
def test_envoy_publishes_the_gateway_through_an_internal_service(stack, service):
    (klass,) = _objects(stack, ("GatewayClass",))
    (proxy,) = _objects(stack, ("EnvoyProxy",))
    ref = klass["spec"]["parametersRef"]
    assert (ref["kind"], ref["name"], ref["namespace"]) == ("EnvoyProxy", proxy["metadata"]["name"],
                                                            proxy["metadata"]["namespace"])
    assert proxy["spec"]["provider"]["kubernetes"]["envoyService"] == service
    if find_archive(versions.ENVOY_GATEWAY, CHARTS) is None:
        pytest.skip("no gateway-helm archive")
    found = lookup(proxy["apiVersion"], proxy["kind"], CHARTS)
    assert isinstance(found, Crd), found
    body = {k: v for k, v in proxy.items() if k != "_name"}
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
        assert leader["env"] == [{"name": "VLLM_API_KEY", "valueFrom": {"secretKeyRef": {
            "name": "vllm-api-key", "key": "api-key", "optional": False}}}], lws["_name"]
        assert "api-key" not in " ".join(leader["command"])  # never on the command line


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
    """exposure: external end to end on EKS: Envoy's Service internet-facing, HTTPS on the named certificate, the
    reason on the Gateway and the EnvoyProxy, and secure-defaults passes them because of it."""
    import copy

    from tests.helpers import example_config, plan_config

    config = copy.deepcopy(example_config("inference-eks"))
    config["gpufleet:serving"]["gateway"] = {"exposure": "external", "externalReason": "public demo",
                                             "tls": {"certificateSecret": "serving-tls"}}
    plan = plan_config(config, "inference-eks")
    by_name = {r.name: r.revealed for r in plan.resources}
    proxy = by_name["inference-eks-serving-gateway-proxy"]
    assert proxy["spec"]["provider"]["kubernetes"]["envoyService"] == {"type": "LoadBalancer", "annotations": {
        "service.beta.kubernetes.io/aws-load-balancer-scheme": "internet-facing"}}
    gateway = by_name["inference-eks-serving-gateway-gateway"]
    assert gateway["spec"]["listeners"][0]["tls"]["certificateRefs"] == [{"kind": "Secret", "name": "serving-tls"}]
    for obj in (proxy, gateway):
        assert obj["metadata"]["annotations"] == {"gpufleet.io/exempt-secure-defaults": "public demo"}
    assert [v for v in plan.violations if v.policy == "secure-defaults"] == []
