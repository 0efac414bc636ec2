"""Model servers as the serving projects define them (issue 52): their parallelism against the GPUs of one replica,
/dev/shm for tensor parallelism, a gated model's token. Each problem names its key (docs/inference.md, "Model
servers").

Not here (issue 49's checks of serving shapes against their pool): a replica wider than the pool, GPUs per pod beyond
the instance, autoscaling past the pool, a CUDA server on AMD or MIG-only pools.

Facts, with their sources:
- One replica's GPUs are gpusPerNode x nodesPerReplica (a LeaderWorkerSet group, one pod per node); vLLM runs
  tensor x pipeline x data ranks of one GPU each (vLLM's parallelism guide: world size = TP x PP, times DP engine
  ranks), so the product must equal them. Data parallel across pods puts data / nodesPerReplica ranks on each pod
  (`--data-parallel-size-local`), so it must divide; gpufleet's launcher does not combine it with pipeline stages
  (multi-node pipeline parallelism runs over Ray, data parallelism over vLLM's own RPC).
- /dev/shm: vLLM's tensor-parallel workers exchange data through shared memory (NCCL's shared-memory transport inside
  a node); a container runtime's default /dev/shm is 64Mi (containerd's CRI `defaultShmSize`), which a tensor-parallel
  server outgrows. gpufleet asks for at least SHM_PER_TP_GPU per tensor-parallel GPU: LeaderWorkerSet's vLLM example
  (kubernetes-sigs/lws docs/examples/vllm/GPU/lws.yaml at versions.LWS) gives 15Gi to tensor parallel 8, about 1.9Gi
  a GPU; 1Gi a GPU is the floor chosen below it, so that example passes and the runtime default never does.
- A gated model (serving.GATED_PREFIXES, or `gated: true`) downloads only with a Hugging Face token.
- RDMA capabilities (IPC_LOCK) and privilege are asked for explicitly, with a reason, and only on an RDMA pool; what
  the pool's fabric needs (GKE's GPUDirect manifests: the TCPX/TCPXO rxdm sidecar's NET_ADMIN, TCPX's IPC_LOCK, A3
  Ultra's privileged workload; gpufleet/base/platforms/gke/gpudirect_pods.py) must be granted, and nothing more.
- Placement (Kueue TAS for LeaderWorkerSets: kueue site/content/en/docs/tasks/run/leaderworkerset.md at versions.KUEUE,
  "Configure Topology Aware Scheduling": podset-required-topology and one podset-group-name on the leader and worker
  templates, the LeaderWorkerSet labelled with its queue): the pool must have a Kueue Topology, the level must be one of
  its levels, the model's namespace a team's with a queue on the pool, and one replica must fit one domain of the
  level (topology.domains: its nodes per domain, where the platform knows them).
- Prefill/decode roles are routed by the picker's pd profile (its prefill and decode scheduling profiles filter the
  pods by role, llm-d-router deploy/config/pd-epp-config.yaml at versions.ENDPOINT_PICKER); without it the picker
  sends whole requests to prefill pods. Both need an InferencePool (a gateway class with a picker). Each role scales
  on its own (roles.<role>.scaling: a ScaledObject per role's LeaderWorkerSet), never the model as a whole; the decode
  sidecar is written for one pod per replica, so nodesPerReplica > 1 is refused until built.
"""

from __future__ import annotations

import re

from gpufleet.base import platforms
from gpufleet.base.spec.errors import Problem
from gpufleet.base.spec.features.serving import routes_to_inference_pool

AT = "gpufleet:serving"
SHM_PER_TP_GPU_GI = 1
_UNITS = {"": 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "m": 1e-3}


def _bytes(quantity: str) -> float:
    number, unit = re.fullmatch(r"([0-9.]+)([A-Za-z]*)", quantity).groups()
    return float(number) * _UNITS[unit]


def check(stack: str, spec) -> list[Problem]:
    serving = spec.serving
    if not serving.enabled:
        return []
    problems: list[Problem] = []
    for i, m in enumerate(serving.models):
        at = f"{AT}.models[{i}]"
        p = m.parallel()
        gpus = m.gpus_per_node * m.nodes_per_replica
        ranks = p.tensor * p.pipeline * p.data
        if ranks != gpus:
            problems.append(Problem(stack, f"{at}.parallelism", f"tensor x pipeline x data = {p.tensor} x {p.pipeline} x "
                                    f"{p.data} = {ranks} GPU ranks, but a replica has gpusPerNode x nodesPerReplica = "
                                    f"{m.gpus_per_node} x {m.nodes_per_replica} = {gpus} GPUs: make them equal",
                                    f"{p.tensor}x{p.pipeline}x{p.data}"))
        elif p.data > 1 and m.nodes_per_replica > 1 and (p.pipeline > 1 or p.data % m.nodes_per_replica):
            problems.append(Problem(stack, f"{at}.parallelism", f"data parallel across {m.nodes_per_replica} pods needs "
                                    "pipeline 1 and data a multiple of nodesPerReplica (each pod runs data / "
                                    "nodesPerReplica ranks of tensor GPUs)", f"{p.tensor}x{p.pipeline}x{p.data}"))
        if p.tensor > 1:
            floor = SHM_PER_TP_GPU_GI * p.tensor
            if m.shm is None or _bytes(m.shm) < floor * 2**30:
                problems.append(Problem(stack, f"{at}.shm", f"tensor parallel {p.tensor} needs /dev/shm of at least "
                                        f"{floor}Gi ({SHM_PER_TP_GPU_GI}Gi a GPU; the runtime's default is 64Mi): set "
                                        f"shm, e.g. {floor * 2}Gi", m.shm or "unset"))
        problems += _roles(stack, at, m, routes_to_inference_pool(spec))
        problems += _rdma(stack, at, m, {pool.name: pool for pool in spec.node_pools}.get(m.pool),
                          platforms.get(spec.cluster.platform).scheduling)
        problems += _placement(stack, at, m, spec)
        if m.needs_token() and m.hf_token is None:
            problems.append(Problem(stack, f"{at}.hfToken", f"{m.model} is a gated Hugging Face model: its weights "
                                    "download only with a token; set hfToken.secretName (a Secret in namespace "
                                    f"{m.namespace} with key HF_TOKEN), or gated: false if your copy is not gated",
                                    m.model))
    return problems


def _roles(stack: str, at: str, m, pooled: bool) -> list[Problem]:
    profile = m.inference_pool.profile
    if m.roles is None:
        if profile == "pd":
            return [Problem(stack, f"{at}.inferencePool.profile", "the pd profile routes prefill and decode pods: set "
                            "roles (prefill and decode replicas), or profile: default", profile)]
        return []
    out = []
    if profile != "pd":
        out.append(Problem(stack, f"{at}.inferencePool.profile", "prefill/decode roles without the picker's pd profile: "
                           "the picker would send whole requests to prefill pods; set inferencePool.profile: pd", profile))
    if not pooled:
        out.append(Problem(stack, f"{at}.roles", "prefill/decode roles are routed by the endpoint picker: use a gateway "
                           "class with an InferencePool (className auto)", "roles"))
    if m.scaling is not None:
        out.append(Problem(stack, f"{at}.scaling", "a prefill/decode server scales per role (each role's own "
                           "LeaderWorkerSet and ScaledObject): move it to roles.prefill.scaling and roles.decode.scaling",
                           "scaling"))
    if m.nodes_per_replica > 1:
        out.append(Problem(stack, f"{at}.nodesPerReplica", "prefill/decode roles run one pod per replica in gpufleet "
                           "(the decode sidecar of a multi-pod replica is not built)", m.nodes_per_replica))
    return out


def _rdma(stack: str, at: str, m, pool, traits) -> list[Problem]:
    """Capabilities and privilege for RDMA only on an RDMA pool, only with a reason, and exactly what the pool's fabric
    needs beyond IPC_LOCK (the platform's `serving_rdma_needs`: GKE's GPUDirect manifests for the machine type)."""
    needed, privileged, why = traits.serving_rdma_needs(pool) if pool is not None and pool.rdma else ((), False, "")
    granted = set(m.rdma.capabilities) if m.rdma is not None else set()
    out = []
    missing = [c for c in needed if c not in granted]
    if missing:
        out.append(Problem(stack, f"{at}.rdma.capabilities", f"pool {m.pool}'s RDMA interfaces need {', '.join(missing)} "
                           f"({why}): grant them here with a reason, or serve from a pool without rdma",
                           ", ".join(sorted(granted)) or "none"))
    if privileged and (m.rdma is None or not m.rdma.privileged):
        out.append(Problem(stack, f"{at}.rdma.privileged", f"pool {m.pool}'s RDMA interfaces need a privileged server "
                           f"container ({why}): set rdma.privileged: true with a reason, or serve from a pool without "
                           "rdma", False))
    if m.rdma is None:
        return out
    if pool is not None and not pool.rdma:
        out.append(Problem(stack, f"{at}.rdma", f"pool {m.pool} has no RDMA (nodePools[].rdma: false): its pods get no "
                           "RDMA interfaces to ask capabilities for", "rdma"))
        return out
    extra = [c for c in m.rdma.capabilities if c != "IPC_LOCK" and c not in needed]
    if pool is not None and extra:
        out.append(Problem(stack, f"{at}.rdma.capabilities", f"pool {m.pool}'s RDMA interfaces need no "
                           f"{', '.join(extra)} (only a GKE GPUDirect-TCPX/TCPXO pool's rxdm sidecar does)",
                           ", ".join(extra)))
    if pool is not None and m.rdma.privileged and not privileged:
        out.append(Problem(stack, f"{at}.rdma.privileged", f"pool {m.pool}'s RDMA interfaces do not need a privileged "
                           "container: never privileged without that need", True))
    if (m.rdma.capabilities or m.rdma.privileged) and not m.rdma.reason:
        asked = ", ".join([*m.rdma.capabilities, *(["privileged"] if m.rdma.privileged else [])])
        out.append(Problem(stack, f"{at}.rdma.reason", f"{asked} are granted only with a recorded reason (written on "
                           "the pods): say why the server needs them"))
    return out


def _placement(stack: str, at: str, m, spec) -> list[Problem]:
    from gpufleet.base.spec.features import topology

    if m.placement is None:
        return []
    pools = {p.name: p for p in spec.node_pools}
    pool = pools.get(m.pool)
    tpool = topology.topology_pools(spec).get(m.pool)
    if pool is None:
        return []
    if tpool is None:
        return [Problem(stack, f"{at}.placement", f"placing a replica by topology needs Kueue Topology Aware Scheduling "
                        f"on pool {m.pool}: add it to gpufleet:addons.kueue.topology.pools (and kueue.enabled)",
                        m.placement.level)]
    out = []
    platform = spec.cluster.platform
    found = {d.level: d for d in topology.domains(tpool, pool, platform)}
    if m.placement.level not in found:
        out.append(Problem(stack, f"{at}.placement.level", f"not a level of pool {m.pool}'s Topology (allowed: "
                           f"{', '.join(found)})", m.placement.level))
    else:
        domain = found[m.placement.level]
        if domain.known and m.nodes_per_replica > domain.nodes:
            out.append(Problem(stack, f"{at}.placement.level", f"one replica is {m.nodes_per_replica} nodes but a "
                               f"{m.placement.level} domain of pool {m.pool} holds at most {domain.nodes}: use a wider "
                               "level or fewer nodes per replica", m.placement.level))
    teams = [t for t in spec.addons.kueue.teams
             if t.namespace_name == m.namespace and any(q.pool == m.pool for q in t.queues)]
    if not teams:
        out.append(Problem(stack, f"{at}.namespace", f"Kueue admits the replica through the LocalQueue {m.pool} of a "
                           f"team's namespace: give a team with namespace {m.namespace} a queue on pool {m.pool} "
                           "(gpufleet:addons.kueue.teams)", m.namespace))
    return out
