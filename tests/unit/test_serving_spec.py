"""Inference serving (issue 38): the checks on failing and passing stacks, each failing stack one change away from a
passing example; the serving path lines of the plan."""

from __future__ import annotations

import copy

import pytest

from gpufleet.base import versions
from gpufleet.base.spec import SpecError
from gpufleet.base.spec.features.serving import serving_path
from tests.helpers import example_config, load_config

SERVING = "gpufleet:serving"


def _serving_problems(config) -> list[tuple[str, str]]:
    try:
        load_config(config)
    except SpecError as exc:
        return [(p.path, p.message) for p in exc.problems]
    return []


def _changed(stack: str, change) -> list[tuple[str, str]]:
    config = copy.deepcopy(example_config(stack))
    change(config)
    return _serving_problems(config)


def _paths(problems) -> list[str]:
    return [path for path, _ in problems]


def test_the_three_example_stacks_pass():
    for stack in ("inference-eks", "inference-gke", "inference-k3s"):
        assert _serving_problems(example_config(stack)) == [], stack


def test_inference_pool_selecting_no_model_server():
    def change(c):
        c[SERVING]["models"][0]["inferencePool"] = {"selector": {"app": "qwen3-8b-typo"}}
    problems = _changed("inference-gke", change)
    assert _paths(problems) == [f"{SERVING}.models[0].inferencePool.selector"]
    assert "selects no model server in namespace serving" in problems[0][1]


def test_gateway_class_the_platform_does_not_provide():
    def gke_class_on_eks(c):
        c[SERVING]["gateway"] = {"className": "gke-l7-rilb"}
    problems = _changed("inference-eks", gke_class_on_eks)
    assert _paths(problems) == [f"{SERVING}.gateway.className"]
    assert "allowed: auto, agentgateway, envoy" in problems[0][1]

    def envoy_on_gke(c):
        c[SERVING]["gateway"] = {"className": "envoy"}
    assert f"{SERVING}.gateway.className" in _paths(_changed("inference-gke", envoy_on_gke))


def test_gke_internal_class_is_accepted():
    def change(c):
        c[SERVING]["gateway"] = {"className": "gke-l7-rilb"}
    assert _changed("inference-gke", change) == []


def test_gke_below_1_34_cannot_route_to_a_pool():
    def change(c):
        c["gpufleet:cluster"]["kubernetesVersion"] = "1.33"
    assert "gpufleet:cluster.kubernetesVersion" in _paths(_changed("inference-gke", change))


def test_scaling_on_a_metric_nobody_exports():
    def change(c):
        c[SERVING]["models"][0]["scaling"]["signal"] = "vllm:gpu_cache_usage_perc"
    problems = _changed("inference-eks", change)
    assert _paths(problems) == [f"{SERVING}.models[0].scaling.signal"]
    assert "vllm:num_requests_waiting" in problems[0][1]


def test_scaling_without_a_metrics_pipeline():
    def change(c):
        c["gpufleet:observability"] = {"metrics": {"backend": "none"}}
    assert _paths(_changed("inference-eks", change)) == [f"{SERVING}.models[0].scaling", f"{SERVING}.models[1].scaling"]


def test_scaling_without_keda():
    def change(c):
        del c["gpufleet:addons"]
    paths = _paths(_changed("inference-k3s", change))
    assert paths == [f"{SERVING}.models[0].scaling", f"{SERVING}.models[1].scaling"]


def _beside(pin: str, step: int) -> str:
    major, minor, _ = pin.removeprefix("v").split(".")
    return f"v{major}.{int(minor) + step}.0"


@pytest.mark.parametrize("step", [-1, 1], ids=["older", "newer"])
def test_extension_version_mismatch(step):
    """Issue 56: a release before the pin is refused as one after it is (the `!=` -> `>` survivor took older ones)."""
    release = _beside(versions.INFERENCE_EXTENSION, step)

    def change(c):
        c[SERVING]["gateway"] = {"inferenceExtension": release}
    assert _changed("inference-gke", change) == [(
        f"{SERVING}.gateway.inferenceExtension",
        f"gpufleet installs the Inference Extension {versions.INFERENCE_EXTENSION} (its InferencePool CRD, which the "
        "gateway and the endpoint picker are built against); another release needs the pin changed in "
        "gpufleet/base/versions.py")]


def test_scale_to_zero_needs_a_router_that_holds_requests():
    def envoy_zero(c):
        c[SERVING]["gateway"] = {"className": "envoy"}
    problems = _changed("inference-eks", envoy_zero)
    assert _paths(problems) == [f"{SERVING}.models[0].scaling.minReplicas"]
    assert "without an endpoint picker nothing holds a request" in problems[0][1]

    def no_flow_control(c):
        c[SERVING]["models"][0]["inferencePool"] = {"flowControl": False}
    problems = _changed("inference-gke", no_flow_control)
    assert _paths(problems) == [f"{SERVING}.models[0].scaling.minReplicas"]
    # agentgateway (issue 52) routes through the picker, whose flow control holds requests: EKS scales to zero.
    assert _changed("inference-eks", lambda c: None) == []
    assert load_config(example_config("inference-eks")).serving.models[0].scaling.min_replicas == 0
    problems = _changed("inference-eks", no_flow_control)
    assert _paths(problems) == [f"{SERVING}.models[0].scaling.minReplicas"]
    assert "the endpoint picker's flow control is off" in problems[0][1]


def test_model_on_a_missing_pool_and_dra_checks():
    def missing_pool(c):
        c[SERVING]["models"][0]["pool"] = "nope"
    assert _paths(_changed("inference-k3s", missing_pool)) == [f"{SERVING}.models[0].pool"]

    def wrong_domain(c):
        c[SERVING]["models"][1]["computeDomain"] = "other"
    assert _paths(_changed("inference-k3s", wrong_domain)) == [f"{SERVING}.models[1].computeDomain"]

    def no_claim_templates(c):
        c["gpufleet:dra"]["namespaces"] = ["default"]
        c["gpufleet:dra"]["computeDomains"][0]["namespace"] = "default"
    paths = _paths(_changed("inference-k3s", no_claim_templates))
    assert f"{SERVING}.models[1].namespace" in paths


def test_models_without_serving_enabled():
    def change(c):
        c[SERVING]["enabled"] = False
    assert _paths(_changed("inference-eks", change)) == [f"{SERVING}.models"]


def test_serving_path_lines_name_each_hop_and_the_idle_cost():
    from gpufleet.base.capacity import capacity

    spec = load_config(example_config("inference-gke"))
    lines = serving_path(spec, capacity(spec))
    assert lines[0] == ("serving: Gateway inference-gateway (class gke-l7-rilb, internal, HTTP 80; API key from Secret "
                        "vllm-api-key)")
    assert "gateway -> InferencePool qwen3-8b + endpoint picker -> LeaderWorkerSet qwen3-8b" in lines[1]
    assert "idle: 0 node(s), 0.00 USD/h + endpoint picker 8 CPU / 8Gi requested on system nodes; scales to zero" in lines[1]
    assert "(2 pod(s) x 8 GPU) -> pool h100" in lines[2] and "idle: 2 node(s)" in lines[2]
    # The scaling part, with KEDA and without (issue 56: `if m.scaling` -> `if not m.scaling` survived the checks above).
    assert "-> pool l4; KEDA on vllm:num_requests_waiting > 5 per replica, 0-4 replicas; idle: 0 node(s)" in lines[1]
    config = example_config("inference-gke")
    del config[SERVING]["models"][1]["scaling"]
    spec = load_config(config)
    assert "-> pool h100; fixed 1 replica; idle: 2 node(s), 176.98 USD/h" in serving_path(spec, capacity(spec))[2]


# Exposure (issue 48): internal unless the stack says external, with a reason and HTTPS.

EXTERNAL = {"exposure": "external", "externalReason": "public demo behind Cloud Armor",
            "tls": {"certificateSecret": "serving-tls"}}


def test_the_default_gateway_is_internal_on_every_platform_with_serving():
    from gpufleet.base.spec.features.serving import EXTERNAL_CLASSES, resolved_class

    for stack in ("inference-eks", "inference-gke", "inference-k3s"):
        spec = load_config(example_config(stack))
        assert spec.serving.gateway.exposure == "internal"
        assert resolved_class(spec) not in EXTERNAL_CLASSES, stack
    assert resolved_class(load_config(example_config("inference-gke"))) == "gke-l7-rilb"


def test_an_external_endpoint_needs_a_reason_and_https():
    def external_without_reason(c):
        c[SERVING]["gateway"] = {"exposure": "external", "tls": {"certificateSecret": "serving-tls"}}
    problems = _changed("inference-gke", external_without_reason)
    assert _paths(problems) == [f"{SERVING}.gateway.externalReason"]
    assert "recorded reason" in problems[0][1]

    def external_over_http(c):
        c[SERVING]["gateway"] = {"exposure": "external", "externalReason": "demo"}
    problems = _changed("inference-eks", external_over_http)
    assert _paths(problems) == [f"{SERVING}.gateway.tls"]

    def external(c):
        c[SERVING]["gateway"] = dict(EXTERNAL)
    assert _changed("inference-gke", external) == []
    config = copy.deepcopy(example_config("inference-gke"))
    external(config)
    from gpufleet.base.spec.features.serving import resolved_class
    assert resolved_class(load_config(config)) == "gke-l7-regional-external-managed"


def test_an_external_class_without_exposure_external_is_refused():
    def change(c):
        c[SERVING]["gateway"] = {"className": "gke-l7-regional-external-managed"}
    problems = _changed("inference-gke", change)
    assert _paths(problems) == [f"{SERVING}.gateway.className"]
    assert "external load balancer but exposure is internal" in problems[0][1]

    def stray_reason(c):
        c[SERVING]["gateway"] = {"externalReason": "why not"}
    assert _paths(_changed("inference-gke", stray_reason)) == [f"{SERVING}.gateway.externalReason"]


def test_a_reason_with_a_control_character_is_refused():
    def change(c):
        c[SERVING]["gateway"] = {**EXTERNAL, "externalReason": "demo\n::set-output name=x::y"}
    assert _paths(_changed("inference-gke", change)) == [f"{SERVING}.gateway.externalReason"]


def test_the_api_key_secret_is_named_by_key():
    def change(c):
        c[SERVING]["apiKey"] = {"secretName": "Bad_Name"}
    assert _paths(_changed("inference-k3s", change)) == [f"{SERVING}.apiKey.secretName"]
