"""The serving examples of issue 52 (examples/serving/): prefill/decode disaggregation and wide expert parallelism on
GKE, and serving on AKS. Each plans clean (no policy violation), its custom resources validate against the CRDs of
the pinned charts, and the charts it passes values to render with the real helm and validate (the picker with its pd
profile, agentgateway on AKS). Kept out of stacks/ so the suite-wide stack sweeps do not plan them again."""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path

import pytest
import yaml

from gpufleet.app.plan.crd_sources import Crd, NotValidated, lookup
from gpufleet.app.plan.custom_resources import validate
from gpufleet.base import versions
from tests.helpers import CHARTS, plan_config
from tests.upstream.test_chart_renders import render_and_check

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "serving"


@functools.lru_cache(maxsize=None)
def _plan(stack: str):
    config = yaml.safe_load((EXAMPLES / f"Pulumi.{stack}.yaml").read_text())["config"]
    return plan_config(config, stack)


def _objects(stack: str, kind: str) -> dict[str, dict]:
    return {r.name: r.revealed for r in _plan(stack).resources if r.type.rsplit(":", 1)[-1] == kind}


@pytest.mark.parametrize("stack", ["pd-gke", "wide-ep-gke", "inference-aks"])
def test_the_example_plans_clean_and_its_custom_resources_validate(stack):
    plan = _plan(stack)
    assert [(v.policy, v.message) for v in plan.violations if v.level == "mandatory"] == []
    checked = 0
    for r in plan.resources:
        if not r.type.startswith("kubernetes:") or not {"apiVersion", "kind", "spec"} <= set(r.revealed):
            continue
        body = {k: r.revealed[k] for k in ("apiVersion", "kind", "metadata", "spec")}
        found = lookup(body["apiVersion"], body["kind"], CHARTS)
        if found is None or (isinstance(found, NotValidated) and body["apiVersion"].startswith(
                ("monitoring.googleapis.com", "networking.gke.io"))):
            continue  # a built-in kind; GKE's own PodMonitoring and multi-networking CRDs (no pinned chart ships them:
            # crd_sources.PLATFORM_KINDS)
        assert isinstance(found, Crd), (r.name, found)
        assert [f"{f.path}: {f.message}" for f in validate(body, found.schema)] == [], r.name
        checked += 1
    assert checked >= 4


def test_prefill_and_decode_run_as_two_leader_worker_sets_the_pd_picker_routes():
    lws = _objects("pd-gke", "LeaderWorkerSet")
    prefill = lws["pd-gke-model-serving-llama-70b-pd-lws-prefill"]
    decode = lws["pd-gke-model-serving-llama-70b-pd-lws-decode"]
    assert (prefill["metadata"]["name"], prefill["spec"]["replicas"]) == ("llama-70b-pd-prefill", 1)  # its minReplicas
    assert (decode["metadata"]["name"], decode["spec"]["replicas"]) == ("llama-70b-pd-decode", 1)
    kv = ["--kv-transfer-config", json.dumps({"kv_connector": "NixlConnector", "kv_role": "kv_both"}, separators=(",", ":"))]
    for role, obj in (("prefill", prefill), ("decode", decode)):
        pod = obj["spec"]["leaderWorkerTemplate"]["workerTemplate"]
        assert pod["metadata"]["labels"] == {"app": "llama-70b-pd", "llm-d.ai/role": role}
        (vllm,) = pod["spec"]["containers"]
        assert vllm["command"][-2:] == kv
        assert vllm["resources"]["requests"] == {"cpu": "32", "memory": "512Gi"}
    prefill_pod = prefill["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]
    decode_pod = decode["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]
    assert "initContainers" not in prefill_pod
    assert prefill_pod["containers"][0]["command"][3:5] == ["--port", "8000"]
    # Decode: vLLM behind llm-d's routing sidecar, a native sidecar on the serving port.
    assert decode_pod["containers"][0]["command"][3:5] == ["--port", "8200"]
    assert decode_pod["containers"][0]["readinessProbe"]["httpGet"]["port"] == 8200
    (sidecar,) = decode_pod["initContainers"]
    assert sidecar == {"name": "routing-sidecar", "image": versions.DISAGG_SIDECAR_IMAGE, "restartPolicy": "Always",
                       "args": ["--port=8000", "--vllm-port=8200", "--secure-proxy=false", "--kv-connector=nixlv2"],
                       "ports": [{"name": "sidecar-http", "containerPort": 8000}]}
    values = _objects("pd-gke", "Release")["pd-gke-model-serving-llama-70b-pd-pool-release"]["values"]["router"]
    assert values["epp"]["pluginsConfigFile"] == "pd.yaml"
    config = yaml.safe_load(values["epp"]["pluginsCustomConfig"]["pd.yaml"])
    assert [p["name"] for p in config["schedulingProfiles"]] == ["prefill", "decode"]
    assert config["featureGates"] == ["flowControl"]


def test_the_picker_renders_its_pd_profile_and_agentgateway_renders_on_aks():
    found = render_and_check(_plan("pd-gke"), only=versions.ENDPOINT_PICKER.name)
    assert found == {f"{versions.ENDPOINT_PICKER.name}@{versions.ENDPOINT_PICKER.version}": []}
    found = render_and_check(_plan("inference-aks"), only=versions.AGENTGATEWAY.name)
    assert found == {f"{versions.AGENTGATEWAY.name}@{versions.AGENTGATEWAY.version}": []}



def test_the_picker_runs_the_image_its_chart_pins():
    """The endpoint picker's image is what llm-d-router-gateway v0.10.0 pins and nothing else (issue 52, item 3): the
    chart's own values.yaml `router.epp.image` (ghcr.io/llm-d / llm-d-router-endpoint-picker / v0.10.0 / IfNotPresent,
    hack/push-chart.sh's release edit; the routerlib subchart's default, `main` with pullPolicy Always, is what it
    overrides), as the real helm renders the release and as gpufleet's image table lists it. digests.yaml records no
    digest for any ghcr.io/llm-d image, so gpufleet pins none (images.pinDigests leaves it by tag); should one appear,
    its tag must be this one."""
    import tarfile

    from gpufleet.base.catalog import images
    from tests.helpers import REFERENCE
    from tests.upstream.test_chart_renders import _rendered, archive, releases

    pin = versions.ENDPOINT_PICKER
    chart = archive(pin.name, pin.version)
    with tarfile.open(chart) as tar:
        top = yaml.safe_load(tar.extractfile(f"{pin.name}/values.yaml"))["router"]["epp"]["image"]
        lib = yaml.safe_load(tar.extractfile(f"{pin.name}/charts/router/values.yaml"))["epp"]["image"]
    assert top == {"registry": "ghcr.io/llm-d", "repository": "llm-d-router-endpoint-picker", "tag": pin.version,
                   "pullPolicy": "IfNotPresent"}
    assert (lib["tag"], lib["pullPolicy"]) == ("main", "Always")  # the library default the release values override
    image = f"{top['registry']}/{top['repository']}:{top['tag']}"
    assert [e.image for e in images.mirror_slots(pin.name, pin.version)] == [image]  # `gpufleet images`, mirrors
    plan = _plan("pd-gke")
    ((name, version, release, namespace, values),) = [r for r in releases(plan) if r[0] == pin.name]
    deployments = [o for o in _rendered(chart, json.dumps(values, sort_keys=True), namespace, release,
                                        plan.spec.cluster.kubernetes_version) if o["kind"] == "Deployment"]
    (epp,) = [c for d in deployments for c in d["spec"]["template"]["spec"]["containers"]]
    assert (epp["image"], epp["imagePullPolicy"]) == (image, "IfNotPresent")
    digests = yaml.safe_load((REFERENCE / "digests.yaml").read_text())["images"]
    assert all(d["tag"] == pin.version for d in digests if str(d["repo"]).startswith("ghcr.io/llm-d/"))
    # The decode pods' routing sidecar comes from the same llm-d-router release (not from the chart).
    assert versions.DISAGG_SIDECAR_IMAGE == f"ghcr.io/llm-d/llm-d-router-disagg-sidecar:{pin.version}"


def test_each_role_scales_on_its_own_pods_metric_within_its_own_bounds():
    """Per-role scaling (issue 52): a ScaledObject per role's LeaderWorkerSet, named after it, reading the metric vLLM
    0.33.0 exports (serving.EXPORTED_METRICS) from that role's leader pods only; none for the model as a whole. Both
    validate against the pinned KEDA chart's CRD (test_the_example_plans_clean_and_its_custom_resources_validate)."""
    from gpufleet.base.spec.features.serving import EXPORTED_METRICS

    scalers = {o["metadata"]["name"]: o["spec"] for o in _objects("pd-gke", "ScaledObject").values()}
    assert sorted(scalers) == ["llama-70b-pd-decode", "llama-70b-pd-prefill"]
    for role, metric, bounds, threshold in (("prefill", "vllm:num_requests_waiting", (1, 2), "5.0"),
                                            ("decode", "vllm:kv_cache_usage_perc", (1, 1), "0.8")):
        spec = scalers[f"llama-70b-pd-{role}"]
        assert spec["scaleTargetRef"] == {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
                                          "name": f"llama-70b-pd-{role}"}
        assert (spec["minReplicaCount"], spec["maxReplicaCount"]) == bounds
        (trigger,) = spec["triggers"]  # no wake-up trigger: a role does not scale to zero
        assert trigger["metadata"]["query"] == (f'sum(avg_over_time({metric}{{namespace="serving",'
                                                f'pod=~"llama-70b-pd-{role}-[0-9]+"}}[1m]))')
        assert trigger["metadata"]["threshold"] == threshold and metric in EXPORTED_METRICS["vllm"]
    names = {r.name for r in _plan("pd-gke").resources if r.type.endswith(":ScaledObject")}
    assert names == {"pd-gke-model-serving-llama-70b-pd-scaler-prefill", "pd-gke-model-serving-llama-70b-pd-scaler-decode"}


def test_wide_ep_leader_and_worker_share_one_data_parallel_group():
    (lws,) = _objects("wide-ep-gke", "LeaderWorkerSet").values()
    template = lws["spec"]["leaderWorkerTemplate"]
    assert template["size"] == 2
    leader = template["leaderTemplate"]["spec"]["containers"][0]["command"]
    worker = template["workerTemplate"]["spec"]["containers"][0]["command"]
    assert "--enable-expert-parallel" in leader and "--enable-expert-parallel" in worker
    assert leader[leader.index("--data-parallel-size") + 1] == "16" and "--headless" in worker
    assert 'exec vllm serve "$@" --data-parallel-start-rank $((LWS_WORKER_INDEX * 8))' in worker
    # The model's namespace is the Kueue team's, made once (by the team's component, not again by serving).
    names = [r.name for r in _plan("wide-ep-gke").resources if r.type == "kubernetes:core/v1:Namespace"
             and (r.revealed.get("metadata") or {}).get("name") == "serving"]
    assert names == ["wide-ep-gke-kueue-team-serving-ns"]
    # Kueue TAS: queued to the team's LocalQueue of the pool, leader and worker one PodSet group in one sub-block.
    assert lws["metadata"]["labels"] == {"kueue.x-k8s.io/queue-name": "h100"}
    for role in ("leaderTemplate", "workerTemplate"):
        notes = template[role]["metadata"]["annotations"]
        assert {k: v for k, v in notes.items() if k.startswith("kueue.")} == {
            "kueue.x-k8s.io/podset-required-topology": "cloud.google.com/gce-topology-subblock",
            "kueue.x-k8s.io/podset-group-name": "replica"}, role
        # GPUDirect-RDMA (the pool's rdma: true): eth0 and the eight RoCE NICs of the Networks the plan creates, gIB's
        # settings sourced before the server, privileged only as the stack asks, with its reason on the pod.
        nics = [n["network"] for n in json.loads(notes["networking.gke.io/interfaces"])]
        assert nics == ["default", *[f"h100-rdma-{i}" for i in range(8)]]
        networks = {r.revealed["metadata"]["name"] for r in _plan("wide-ep-gke").resources
                    if r.type == "kubernetes:networking.gke.io/v1:Network"}
        assert set(nics[1:]) <= networks
        (vllm,) = template[role]["spec"]["containers"]
        assert vllm["securityContext"] == {"privileged": True}
        assert notes["gpufleet.io/rdma-capabilities-reason"].startswith("GKE's A3 Ultra")
        assert vllm["command"][:4] == ["sh", "-c", '. /usr/local/gib/scripts/set_nccl_env.sh && exec "$@"', "gib-env"]
    # That reason is what passes secure-defaults: without it both privileged pods are findings.
    from gpufleet.policies.rules import secure_defaults

    unexplained = copy.deepcopy(lws)
    for role in ("leaderTemplate", "workerTemplate"):
        del unexplained["spec"]["leaderWorkerTemplate"][role]["metadata"]["annotations"]["gpufleet.io/rdma-capabilities-reason"]
    assert [m.split(":")[0] for m in secure_defaults.check(secure_defaults.LEADER_WORKER_SET, unexplained)] == [
        "spec.leaderWorkerTemplate.leaderTemplate container vllm", "spec.leaderWorkerTemplate.workerTemplate container vllm"]
    assert secure_defaults.check(secure_defaults.LEADER_WORKER_SET, lws) == []



def test_serving_on_aks_routes_through_the_picker():
    """AKS's inference stack (issue 52's "done when", with the stacks of tests/upstream/test_serving_upstream.py)."""
    from tests.upstream.test_serving_upstream import picker_routes

    assert picker_routes(_plan("inference-aks")) == {"qwen3-8b": "qwen3-8b"}
