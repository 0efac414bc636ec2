"""Model servers as the serving projects define them (issue 52): image, engine arguments, requests, /dev/shm, a
Hugging Face token, tensor x pipeline x data parallelism; each check on a stack one change away from a passing
example, and the LeaderWorkerSet a wide expert-parallel server gets."""

from __future__ import annotations

import copy

from gpufleet.base.spec import SpecError
from gpufleet.base.spec.features.serving import ModelServerSpec
from gpufleet.components.serving.model_server import leader_worker_set
from tests.helpers import example_config, load_config

SERVING = "gpufleet:serving"


def _problems(stack: str, change) -> list[tuple[str, str]]:
    config = copy.deepcopy(example_config(stack))
    change(config[SERVING]["models"])
    try:
        load_config(config)
    except SpecError as exc:
        return [(p.path, p.message) for p in exc.problems]
    return []


def test_parallelism_must_use_exactly_the_replicas_gpus():
    def short(models):  # llama-70b: 2 pods x 8 GPUs, but 8 ranks
        models[1]["parallelism"] = {"tensor": 8}
    ((path, message),) = _problems("inference-eks", short)
    assert path == f"{SERVING}.models[1].parallelism"
    assert "tensor x pipeline x data = 8 x 1 x 1 = 8 GPU ranks, but a replica has gpusPerNode x nodesPerReplica = " \
           "8 x 2 = 16 GPUs" in message
    assert _problems("inference-eks", lambda m: m[1].update(parallelism={"tensor": 8, "pipeline": 2})) == []

    def dp_with_pp(models):
        models[1]["parallelism"] = {"tensor": 4, "pipeline": 2, "data": 2}
    ((path, message),) = _problems("inference-eks", dp_with_pp)
    assert path == f"{SERVING}.models[1].parallelism" and "needs pipeline 1" in message
    assert _problems("inference-eks", lambda m: m[1].update(parallelism={"tensor": 1, "data": 16, "expert": True})) == []


def test_tensor_parallelism_needs_shm():
    def unset(models):
        del models[1]["shm"]
    ((path, message),) = _problems("inference-k3s", unset)
    assert path == f"{SERVING}.models[1].shm"
    assert "tensor parallel 4 needs /dev/shm of at least 4Gi" in message
    ((path, _),) = _problems("inference-k3s", lambda m: m[1].update(shm="3584Mi"))
    assert path == f"{SERVING}.models[1].shm"
    assert _problems("inference-k3s", lambda m: m[1].update(shm="4Gi")) == []


def test_a_gated_model_needs_a_token():
    def no_token(models):
        del models[1]["hfToken"]
    ((path, message),) = _problems("inference-gke", no_token)
    assert path == f"{SERVING}.models[1].hfToken"
    assert "meta-llama/Llama-3.3-70B-Instruct is a gated Hugging Face model" in message
    assert _problems("inference-gke", lambda m: (no_token(m), m[1].update(gated=False))) == []
    ((path, _),) = _problems("inference-gke", lambda m: m[0].update(gated=True))  # Qwen, declared gated
    assert path == f"{SERVING}.models[0].hfToken"


def test_bad_values_are_refused_by_key():
    problems = _problems("inference-k3s", lambda m: m[0].update(shm="lots", image="Not An Image"))
    assert {p for p, _ in problems} == {f"{SERVING}.models[0].shm", f"{SERVING}.models[0].image"}
    problems = _problems("inference-k3s", lambda m: m[0].update(args=["--x\n--y"]))  # one line each: argv, no shell
    assert {p for p, _ in problems} == {f"{SERVING}.models[0].args[0]"}


def _model(**kw) -> ModelServerSpec:
    return ModelServerSpec(**{"name": "ds", "pool": "h100", "model": "deepseek-ai/DeepSeek-V3", **kw})


def test_image_args_and_requests_reach_every_pod():
    m = _model(image="registry.example/serving/vllm:custom", args=["--max-model-len", "32768"],
               resources={"cpu": "32", "memory": "512Gi", "ephemeralStorage": "800Gi"}, gpus_per_node=1)
    (container,) = leader_worker_set(m, image=m.image)["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"]
    assert container["image"] == "registry.example/serving/vllm:custom"
    assert container["command"][-2:] == ["--max-model-len", "32768"]
    assert container["resources"] == {"limits": {"nvidia.com/gpu": "1", "memory": "512Gi"},
                                      "requests": {"cpu": "32", "memory": "512Gi", "ephemeral-storage": "800Gi"}}


def test_wide_expert_parallel_runs_data_parallel_ranks_on_every_pod():
    """DeepSeek-style wide EP: 2 pods x 8 GPUs, DP 16 x TP 1 with expert parallelism. The leader is rank 0 and serves;
    each worker runs `vllm serve --headless` from rank LWS_WORKER_INDEX x 8 (computed by a fixed script, the stack's
    values passed as positional parameters), all pointed at the leader's address."""
    m = _model(nodes_per_replica=2, gpus_per_node=8, shm="32Gi",
               parallelism={"tensor": 1, "data": 16, "expert": True})
    template = leader_worker_set(m)["spec"]["leaderWorkerTemplate"]
    leader = template["leaderTemplate"]["spec"]["containers"][0]["command"]
    dp = ["--data-parallel-size", "16", "--data-parallel-size-local", "8", "--data-parallel-address",
          "$(LWS_LEADER_ADDRESS)", "--data-parallel-rpc-port", "5555"]
    assert leader == ["vllm", "serve", "deepseek-ai/DeepSeek-V3", "--port", "8000", "--tensor-parallel-size", "1", *dp,
                      "--data-parallel-start-rank", "0", "--enable-expert-parallel"]
    worker = template["workerTemplate"]["spec"]["containers"][0]["command"]
    assert worker[:4] == ["sh", "-c", 'exec vllm serve "$@" --data-parallel-start-rank $((LWS_WORKER_INDEX * 8))',
                          "vllm-worker"]
    assert worker[4:] == ["deepseek-ai/DeepSeek-V3", "--port", "8000", "--tensor-parallel-size", "1", *dp, "--headless",
                          "--enable-expert-parallel"]


def test_roles_need_the_pd_profile_and_the_profile_needs_roles():
    roles = {"prefill": {"replicas": 1}, "decode": {"replicas": 1}}  # the h100 pool's 2 nodes, one pod each

    def no_profile(models):  # llama-70b as one pod of 8 GPUs per role
        models[1].update(roles=roles, nodesPerReplica=1, shm="16Gi")
        del models[1]["scaling"]
    ((path, message),) = _problems("inference-gke", no_profile)
    assert path == f"{SERVING}.models[1].inferencePool.profile"
    assert "prefill/decode roles without the picker's pd profile" in message
    assert _problems("inference-gke", lambda m: (no_profile(m), m[1].update(inferencePool={"profile": "pd"}))) == []
    paths = [p for p, _ in _problems("inference-gke", lambda m: (no_profile(m), m[1].update(
        inferencePool={"profile": "pd"}, nodesPerReplica=2)))]
    # A multi-pod replica's decode sidecar is not built; and two roles of 2 pods each overflow the 2-node pool.
    assert paths == [f"{SERVING}.models[1].nodesPerReplica", f"{SERVING}.models[1].roles.decode.replicas"]
    ((path, _),) = _problems("inference-gke", lambda m: m[0].update(inferencePool={"profile": "pd"}))
    assert path == f"{SERVING}.models[0].inferencePool.profile"  # pd without roles

    def on_envoy_with_scaling(config_models):
        config_models[0].update(roles=roles, inferencePool={"profile": "pd"})
    config = copy.deepcopy(example_config("inference-k3s"))
    config[SERVING]["gateway"] = {"className": "envoy"}
    on_envoy_with_scaling(config[SERVING]["models"])
    config[SERVING]["models"][0]["scaling"]["minReplicas"] = 1
    try:
        load_config(config)
        paths = []
    except SpecError as exc:
        paths = [p.path for p in exc.problems]
    # (and the two roles' pods do not fit the one-host l4 pool: the roles' shape check names the role that overflows)
    assert paths == [f"{SERVING}.models[0].roles", f"{SERVING}.models[0].scaling",
                     f"{SERVING}.models[0].roles.decode.replicas"]


REASON = "NIXL registers KV-cache memory with the EFA devices"


def _eks_rdma(config):
    config["gpufleet:nodePools"][1]["rdma"] = True  # h100: p5.48xlarge with every EFA interface


def test_serving_pods_on_an_rdma_pool_get_its_interfaces_and_capabilities_only_with_a_reason():
    from gpufleet.components.serving.layer import rdma_pod

    config = copy.deepcopy(example_config("inference-eks"))
    _eks_rdma(config)
    config[SERVING]["models"][1]["rdma"] = {"capabilities": ["IPC_LOCK"], "reason": REASON}
    spec = load_config(config)
    rdma = rdma_pod(spec, spec.node_pools[1])
    assert rdma == {"resources": {"vpc.amazonaws.com/efa": 32}} and rdma_pod(spec, spec.node_pools[0]) is None
    # A pod of 2 of the node's 8 GPUs takes its share of the 32 EFA devices.
    assert rdma_pod(spec, spec.node_pools[1], 2) == {"resources": {"vpc.amazonaws.com/efa": 8}}
    template = leader_worker_set(spec.serving.models[1], rdma=rdma)["spec"]["leaderWorkerTemplate"]
    for role in ("leaderTemplate", "workerTemplate"):
        pod = template[role]
        (container,) = pod["spec"]["containers"]
        assert container["resources"]["limits"]["vpc.amazonaws.com/efa"] == "32"
        assert container["resources"]["requests"]["vpc.amazonaws.com/efa"] == "32"
        assert container["securityContext"] == {"capabilities": {"add": ["IPC_LOCK"]}}
        assert pod["metadata"]["annotations"] == {"gpufleet.io/rdma-capabilities-reason": REASON}
    # Network Operator pools (k3s lab): the RDMA device and the pool's Multus network.
    lab = load_config(example_config("lab"))
    (pool,) = [p for p in lab.node_pools if p.rdma]
    assert rdma_pod(lab, pool) == {"resources": {"rdma/rdma_a100_rdma": 1},
                                   "annotations": {"k8s.v1.cni.cncf.io/networks": "default/rdma-a100-rdma"}}


def test_rdma_capabilities_need_a_reason_and_an_rdma_pool():
    def no_reason(config):
        _eks_rdma(config)
        config[SERVING]["models"][1]["rdma"] = {"capabilities": ["IPC_LOCK"]}
    config = copy.deepcopy(example_config("inference-eks"))
    no_reason(config)
    try:
        load_config(config)
        paths = []
    except SpecError as exc:
        paths = [p.path for p in exc.problems]
    assert paths == [f"{SERVING}.models[1].rdma.reason"]
    ((path, message),) = _problems("inference-eks", lambda m: m[0].update(rdma={"capabilities": ["IPC_LOCK"],
                                                                                  "reason": REASON}))
    assert path == f"{SERVING}.models[0].rdma" and "pool l40s has no RDMA" in message
    ((path, _),) = _problems("inference-eks", lambda m: m[0].update(rdma={"capabilities": ["SYS_ADMIN"], "reason": "x"}))
    assert path.startswith(f"{SERVING}.models[0].rdma.capabilities")  # IPC_LOCK only; never privileged



def test_placement_needs_a_kueue_topology_level_a_replica_fits_and_a_team_queue():
    """Issue 52: a multi-node replica placed in one topology domain through Kueue TAS (examples/serving/
    Pulumi.wide-ep-gke.yaml places one in a GCE sub-block); each missing piece is an error naming its key."""
    import yaml
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "examples" / "serving" / "Pulumi.wide-ep-gke.yaml"
    base = yaml.safe_load(path.read_text())["config"]

    def problems(change):
        config = copy.deepcopy(base)
        change(config)
        try:
            load_config(config, "wide-ep-gke")
        except SpecError as exc:
            return [(p.path, p.message) for p in exc.problems]
        return []

    assert problems(lambda c: None) == []
    ((path_, message),) = problems(lambda c: c[SERVING]["models"][0]["placement"].update(level="kubernetes.io/hostname"))
    assert path_ == f"{SERVING}.models[0].placement.level"
    assert "one replica is 2 nodes but a kubernetes.io/hostname domain of pool h100 holds at most 1" in message
    ((path_, message),) = problems(lambda c: c[SERVING]["models"][0]["placement"].update(level="example.com/rack"))
    assert path_ == f"{SERVING}.models[0].placement.level" and "cloud.google.com/gce-topology-block" in message
    ((path_, _),) = problems(lambda c: c["gpufleet:addons"]["kueue"].update(topology={"pools": []}))
    assert path_ == f"{SERVING}.models[0].placement"
    ((path_, _),) = problems(lambda c: c["gpufleet:addons"]["kueue"]["teams"][0].update(namespace="research"))
    assert path_ == f"{SERVING}.models[0].namespace"


def _pd(prefill: dict, decode: dict):
    """inference-gke's llama-70b (pool h100: 2 nodes of 8 GPUs) as a prefill/decode server of one pod per replica."""
    def change(models):
        models[1].update(nodesPerReplica=1, inferencePool={"profile": "pd"},
                         roles={"prefill": prefill, "decode": decode})
        del models[1]["scaling"]
    return change


def test_each_role_scales_within_its_bounds_on_a_metric_vllm_exports():
    queue = {"signal": "queue", "target": 5, "minReplicas": 1, "maxReplicas": 1}
    assert _problems("inference-gke", _pd({"scaling": queue}, {"scaling": {**queue, "signal": "kvCache", "target": 0.8}})) == []
    ((path, message),) = _problems("inference-gke", _pd({"scaling": {**queue, "signal": "vllm:gpu_cache_usage_perc"}},
                                                        {"replicas": 1}))
    assert path == f"{SERVING}.models[1].roles.prefill.scaling.signal" and "vllm exports no such metric" in message
    ((path, message),) = _problems("inference-gke", _pd({"scaling": queue}, {"scaling": {**queue, "maxReplicas": 2}}))
    assert path == f"{SERVING}.models[1].roles.decode.scaling.maxReplicas"
    assert "the roles need 3 pods at most (prefill 1, decode 2 replica(s) of 1 pod(s) with 8 GPU(s) each); pool 'h100' " \
           "holds at most 2" in message
    ((path, _),) = _problems("inference-gke", _pd({"replicas": 2, "scaling": queue}, {"replicas": 1}))
    assert path == f"{SERVING}.models[1].roles.prefill.replicas"  # KEDA owns the count
    ((path, _),) = _problems("inference-gke", _pd({"replicas": 1}, {"scaling": {**queue, "minReplicas": 0}}))
    assert path == f"{SERVING}.models[1].roles.decode.scaling.minReplicas"
    ((path, _),) = _problems("inference-gke", _pd({"replicas": 2}, {"replicas": 1}))
    assert path == f"{SERVING}.models[1].roles.decode.replicas"  # fixed roles overflowing the pool

    def whole_model(models):
        _pd({"replicas": 1}, {"replicas": 1})(models)
        models[1]["scaling"] = queue
    ((path, message),) = _problems("inference-gke", whole_model)
    assert path == f"{SERVING}.models[1].scaling" and "roles.prefill.scaling" in message
