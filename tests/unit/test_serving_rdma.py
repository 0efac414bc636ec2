"""Model servers on RDMA pools (issue 52): the pods get the pool's interfaces on every platform's fabric (GKE's
GPUDirect-TCPX/TCPXO/RDMA multi-networking as GKE's manifests for the machine type give them, AKS's InfiniBand ports,
an existing cluster's Network Operator network), a capability or privileged mode only when the stack asks for it
with a reason, and exactly what the pool's fabric needs (each refusal names its key). The pods validate strictly
against the Kubernetes OpenAPI schema of the stack's version."""

from __future__ import annotations

import copy
import json

from gpufleet.base import labels
from gpufleet.base.spec import SpecError
from gpufleet.components.serving.layer import rdma_pod
from gpufleet.components.serving.model_server import leader_worker_set
from tests.helpers import example_config, load_config
from tests.k8s_validate import validate_strict

SERVING = "gpufleet:serving"
REASON = "GKE's GPUDirect manifest for the machine type"


def _gke(machine: str, rdma: dict | None):
    """inference-gke with its h100 pool (llama-70b: 2 pods x 8 GPUs) on `machine` with GPUDirect, the model's grant
    `rdma`."""
    config = copy.deepcopy(example_config("inference-gke"))
    pool = config["gpufleet:nodePools"][1]
    pool.update(machineType=machine, rdma=True)
    pool["gke"]["zones"] = ["us-central1-b"]  # offers A3 High, Mega and Ultra (catalog gcp_zones.yaml)
    if rdma is not None:
        config[SERVING]["models"][1]["rdma"] = rdma
    return config


def _problems(config) -> list[tuple[str, str]]:
    try:
        load_config(config)
    except SpecError as exc:
        return [(p.path, p.message) for p in exc.problems]
    return []


def _pods(config, model: int = 1) -> list[dict]:
    spec = load_config(config)
    m = spec.serving.models[model]
    pool = {p.name: p for p in spec.node_pools}[m.pool]
    template = leader_worker_set(m, rdma=rdma_pod(spec, pool, m.gpus_per_node))["spec"]["leaderWorkerTemplate"]
    pods = [template[k] for k in ("leaderTemplate", "workerTemplate") if k in template]
    for pod in pods:  # the template as a Pod, strictly against the stack's Kubernetes version
        validate_strict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", **pod["metadata"]},
                         "spec": pod["spec"]}, spec.cluster.kubernetes_version)
    return pods


def test_tcpxo_pods_get_the_pools_nics_and_the_rxdm_sidecar_granted_by_the_stack():
    config = _gke("a3-megagpu-8g", {"capabilities": ["NET_ADMIN", "NET_BIND_SERVICE"], "reason": REASON})
    for pod in _pods(config):
        notes = pod["metadata"]["annotations"]
        assert notes[labels.GKE_DEFAULT_INTERFACE_ANNOTATION] == "eth0"
        assert json.loads(notes[labels.GKE_INTERFACES_ANNOTATION]) == [
            {"interfaceName": "eth0", "network": "default"},
            *[{"interfaceName": f"eth{i + 1}", "network": f"h100-vpc-{i}"} for i in range(8)]]
        assert notes["devices.gke.io/container.tcpxo-daemon"].splitlines()[-1] == "- path: /dev/dmabuf_import_helper"
        assert notes[labels.RDMA_CAPABILITIES_REASON] == REASON
        (daemon,) = pod["spec"]["initContainers"]
        assert (daemon["name"], daemon["restartPolicy"]) == ("tcpxo-daemon", "Always")
        assert daemon["securityContext"] == {"capabilities": {"add": ["NET_ADMIN", "NET_BIND_SERVICE"]}}
        (vllm,) = pod["spec"]["containers"]
        assert "securityContext" not in vllm  # the sidecar's capabilities stay on the sidecar
        assert {e["name"]: e.get("value") for e in vllm["env"] if "value" in e} == {
            "LD_LIBRARY_PATH": "/usr/local/nvidia/lib64", "NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY": "/dev/aperture_devices"}
        assert [m["mountPath"] for m in vllm["volumeMounts"]] == ["/dev/shm", "/usr/local/nvidia/lib64",
                                                                   "/dev/aperture_devices"]
        names = [v["name"] for v in pod["spec"]["volumes"]]
        assert names == ["dshm", "gpudirect-nvidia", "gpudirect-sys", "gpudirect-proc-sys", "gpudirect-aperture-devices"]


def test_gpudirect_rdma_pods_source_gib_and_only_a3_ultra_runs_privileged():
    ultra = _gke("a3-ultragpu-8g", {"privileged": True, "reason": REASON})
    config = copy.deepcopy(ultra)
    config["gpufleet:nodePools"][1]["maxNodes"] = 2
    (leader, worker) = _pods(config)
    for pod in (leader, worker):
        (vllm,) = pod["spec"]["containers"]
        assert vllm["securityContext"] == {"privileged": True}
        assert vllm["command"][:4] == ["sh", "-c", '. /usr/local/gib/scripts/set_nccl_env.sh && exec "$@"', "gib-env"]
        assert {e["name"]: e["value"] for e in vllm["env"] if "value" in e} == {
            "LD_LIBRARY_PATH": "/usr/local/gib/lib64:/usr/local/nvidia/lib64", "NCCL_NET": "gIB"}
        nics = json.loads(pod["metadata"]["annotations"][labels.GKE_INTERFACES_ANNOTATION])
        assert nics[1:] == [{"interfaceName": f"eth{i + 2}", "network": f"h100-rdma-{i}"} for i in range(8)]
        assert "initContainers" not in pod["spec"]
    # The leader's own command follows the prefix unchanged (Ray head, then vllm serve with its argv).
    assert leader["spec"]["containers"][0]["command"][4:6] == ["sh", "-c"]
    # Not granted: refused naming the key; granted where not needed (A4): refused too.
    assert [p for p, _ in _problems(_gke("a3-ultragpu-8g", None))] == [f"{SERVING}.models[1].rdma.privileged"]
    ((path, message),) = _problems(_gke("a4-highgpu-8g", {"privileged": True, "reason": REASON}))
    assert path == f"{SERVING}.models[1].rdma.privileged" and "do not need a privileged" in message
    assert _problems(_gke("a4-highgpu-8g", None)) == []


def test_a_pool_whose_interfaces_need_capabilities_refuses_a_server_without_them():
    ((path, message),) = _problems(_gke("a3-megagpu-8g", None))
    assert path == f"{SERVING}.models[1].rdma.capabilities"
    assert "need NET_ADMIN, NET_BIND_SERVICE (GKE's GPUDirect-TCPXO manifest runs the rxdm sidecar" in message
    ((path, message),) = _problems(_gke("a3-highgpu-8g", {"capabilities": ["NET_ADMIN"], "reason": REASON}))
    assert (path, message.split(" (")[0]) == (f"{SERVING}.models[1].rdma.capabilities",
                                            "pool h100's RDMA interfaces need IPC_LOCK")
    ((path, _),) = _problems(_gke("a3-megagpu-8g", {"capabilities": ["NET_ADMIN", "NET_BIND_SERVICE"]}))
    assert path == f"{SERVING}.models[1].rdma.reason"
    # NET_ADMIN where no sidecar needs it (an EFA pool): refused, IPC_LOCK stays allowed.
    config = copy.deepcopy(example_config("inference-eks"))
    config["gpufleet:nodePools"][1]["rdma"] = True
    config[SERVING]["models"][1]["rdma"] = {"capabilities": ["IPC_LOCK", "NET_ADMIN"], "reason": REASON}
    ((path, message),) = _problems(config)
    assert path == f"{SERVING}.models[1].rdma.capabilities" and "need no NET_ADMIN" in message


def test_network_operator_pools_of_an_existing_cluster_give_the_device_and_network():
    config = copy.deepcopy(example_config("existing-coreweave"))
    config["gpufleet:nodePools"][0]["rdma"] = True  # h100-train, InfiniBand HCAs under a macvlan network
    config["gpufleet:nodePools"][0]["rdmaNetwork"] = {"interfaces": ["ibp0"]}
    config[SERVING]["models"][0].update(pool="h100-train", gpusPerNode=8, shm="16Gi")
    (pod,) = _pods(config, model=0)
    (vllm,) = pod["spec"]["containers"]
    assert vllm["resources"]["limits"]["rdma/rdma_h100_train"] == "1"
    assert vllm["resources"]["requests"]["rdma/rdma_h100_train"] == "1"
    assert pod["metadata"]["annotations"] == {labels.MULTUS_NETWORKS_ANNOTATION: "default/rdma-h100-train"}


def test_aks_infiniband_pools_give_the_ib_resource_and_no_network():
    import yaml
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "examples" / "serving" / "Pulumi.inference-aks.yaml"
    config = yaml.safe_load(path.read_text())["config"]
    config["gpufleet:nodePools"][0].update(vmSize="Standard_ND96isr_H100_v5", rdma=True, capacity="on-demand",
                                           aks={"zones": ["1"]})
    spec = load_config(config, "inference-aks")
    assert rdma_pod(spec, spec.node_pools[0]) == {"resources": {"rdma/rdma_a100spot": 1}}


def test_every_granted_pod_carries_the_reason_secure_defaults_reads():
    """gpufleet's own pods on every fabric that grants something (TCPX: IPC_LOCK on vLLM, NET_ADMIN on the rxdm
    sidecar; TCPXO: the sidecar's NET_ADMIN, NET_BIND_SERVICE; A3 Ultra: a privileged vLLM; an existing cluster's
    Network Operator pool: IPC_LOCK) pass secure-defaults by the reason on each pod template, and only by it."""
    from gpufleet.policies.rules import secure_defaults

    existing = copy.deepcopy(example_config("existing-coreweave"))
    existing["gpufleet:nodePools"][0].update(rdma=True, rdmaNetwork={"interfaces": ["ibp0"]})
    existing[SERVING]["models"][0].update(pool="h100-train", gpusPerNode=8, shm="16Gi",
                                          rdma={"capabilities": ["IPC_LOCK"], "reason": REASON})
    cases = [(_gke("a3-highgpu-8g", {"capabilities": ["IPC_LOCK", "NET_ADMIN"], "reason": REASON}), 1, 2),
             (_gke("a3-megagpu-8g", {"capabilities": ["NET_ADMIN", "NET_BIND_SERVICE"], "reason": REASON}), 1, 1),
             (_gke("a3-ultragpu-8g", {"privileged": True, "reason": REASON}), 1, 1), (existing, 0, 1)]
    for config, model, granted in cases:
        spec = load_config(config)
        m = spec.serving.models[model]
        pool = {p.name: p for p in spec.node_pools}[m.pool]
        lws = leader_worker_set(m, rdma=rdma_pod(spec, pool, m.gpus_per_node))
        assert secure_defaults.check(secure_defaults.LEADER_WORKER_SET, lws) == []
        for pod in lws["spec"]["leaderWorkerTemplate"].values():
            if isinstance(pod, dict):
                assert pod["metadata"]["annotations"].pop(labels.RDMA_CAPABILITIES_REASON) == REASON
        found = secure_defaults.check(secure_defaults.LEADER_WORKER_SET, lws)
        assert len(found) == granted * len([k for k in ("leaderTemplate", "workerTemplate")
                                            if k in lws["spec"]["leaderWorkerTemplate"]]), (m.pool, found)
