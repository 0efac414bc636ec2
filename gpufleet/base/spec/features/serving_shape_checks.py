"""Serving shapes against their pool (issue 49): a model server that asks its pool for what no node of it offers
plans clean and then never leaves Pending, or crashes at the first CUDA call. Each rule with its source:

- A LeaderWorkerSet replica is `nodesPerReplica` pods that each ask for `gpusPerNode` GPUs
  (components/serving/model_server.py: `limits: {nvidia.com/gpu: gpusPerNode}` on a device-plugin pool, one
  ResourceClaim per pod on a DRA pool). A pod fits a node only when the node advertises that many of the resource
  (the scheduler's NodeResourcesFit filter, kubernetes.io/docs/concepts/scheduling-eviction/resource-bin-packing), so
  a pool holds at most `maxNodes x floor(advertised / gpusPerNode)` such pods, and `maxReplicas` replicas need
  `maxReplicas x nodesPerReplica` of them (what KEDA scales to must be schedulable; the rest stays Pending).
- A replica whose pods claim a ComputeDomain spans one NVLink domain (IMEX channels exist only inside it: NVIDIA DRA
  driver docs, ComputeDomains; gpufleet/base/catalog/dra.yaml gives each system's largest domain), so it is at most
  that many nodes wide.
- The model server is vLLM's CUDA build (versions.VLLM_IMAGE, docker.io/vllm/vllm-openai): it asks for
  nvidia.com/gpu, which an AMD pool does not advertise (the AMD GPU Operator's device plugin advertises amd.com/gpu),
  and a MIG pool advertises per-profile resources (strategy mixed) or MIG devices as nvidia.com/gpu (strategy
  single). On MIG devices, "CUDA ... only supports enumeration of a single MIG instance" per process (NVIDIA MIG User
  Guide, "CUDA Device Enumeration", docs.nvidia.com/datacenter/tesla/mig-user-guide), so tensor parallelism across
  several MIG devices of one pod cannot start.
"""

from __future__ import annotations

from typing import Any

from gpufleet.base import catalog, labels
from gpufleet.base.spec.errors import Problem
from gpufleet.base.spec.features.dra_checks import nvlink
from gpufleet.base.spec.shape import advertised, most_nodes, shaped

NS = "gpufleet"


def check(stack: str, spec: Any) -> list[Problem]:
    serving = spec.serving
    if not serving.enabled:
        return []
    platform = spec.cluster.platform
    pools = {p.name: p for p in spec.node_pools}
    problems: list[Problem] = []
    for i, m in enumerate(serving.models):
        pool = pools.get(m.pool)
        if pool is None:
            continue  # serving.check names the unknown pool
        problems += _model(stack, f"{NS}:serving.models[{i}]", m, pool, platform)
    return problems


def _model(stack: str, at: str, m: Any, pool: Any, platform: str) -> list[Problem]:
    shape = shaped(pool, platform)
    model = catalog.gpu_models().get(shape.gpu or "")
    if model is not None and model.amd:
        return [Problem(stack, f"{at}.pool", f"pool '{pool.name}' has AMD {model.name} GPUs: the model server is vLLM's "
                        "CUDA image and asks for nvidia.com/gpu, which AMD nodes do not advertise (they offer "
                        "amd.com/gpu); serve it from an NVIDIA pool", m.pool)]
    per_node = shape.gpus_per_node
    if per_node is None or model is None or (pool.sharing.mode == "mig" and model.mig is None):
        return []  # an unknown shape, or MIG on a GPU without it: the catalog and sharing checks report those
    if pool.sharing.mode in ("time-slicing", "mps") and not pool.sharing.replicas:
        return []  # shared GPUs without a replica count: the sharing check names it
    dra = getattr(pool, "allocation", "device-plugin") == "dra"
    if dra:
        offered = per_node
    else:
        offered = advertised(pool, platform).get(labels.GPU_RESOURCE, 0)
        if pool.sharing.mode == "mig":
            if pool.sharing.strategy != "single" or offered == 0:
                return [Problem(stack, f"{at}.pool", f"pool '{pool.name}' is a MIG pool with strategy "
                                f"{pool.sharing.strategy}: its nodes advertise nvidia.com/mig-<profile>, no whole "
                                "nvidia.com/gpu, so the model server's pods never schedule; serve from a pool without "
                                "MIG", m.pool)]
            if m.gpus_per_node > 1:
                return [Problem(stack, f"{at}.gpusPerNode", f"pool '{pool.name}' advertises MIG devices as nvidia.com/gpu "
                                "(strategy single), and a CUDA process enumerates only one MIG instance (NVIDIA MIG User "
                                "Guide, CUDA Device Enumeration): tensor parallelism over several MIG devices cannot "
                                "start; use 1, or a pool without MIG", m.gpus_per_node)]
    problems = []
    if m.gpus_per_node > offered:
        problems.append(Problem(stack, f"{at}.gpusPerNode", f"more GPUs per pod than a node of pool '{pool.name}' offers "
                                f"({offered} nvidia.com/gpu per node): the pods never schedule; at most {offered}",
                                m.gpus_per_node))
        return problems
    nodes = most_nodes(pool, platform)
    if m.nodes_per_replica > nodes:
        problems.append(Problem(stack, f"{at}.nodesPerReplica", f"a replica is wider than pool '{pool.name}' "
                                f"(at most {nodes} node(s)): its pods never all schedule; at most {nodes}",
                                m.nodes_per_replica))
        return problems
    system = nvlink(pool, platform) if dra and m.compute_domain else None
    if system is not None and m.nodes_per_replica > system.largest:
        problems.append(Problem(stack, f"{at}.nodesPerReplica", f"a replica claims ComputeDomain {m.compute_domain}, "
                                f"whose IMEX channels span one NVLink domain of {system.machine} (at most "
                                f"{system.largest} nodes); at most {system.largest}", m.nodes_per_replica))
        return problems
    pods_per_node = offered // m.gpus_per_node
    room = nodes * pods_per_node
    if m.roles is not None:
        return _roles(stack, at, m, pool, nodes, pods_per_node)
    top = m.scaling.max_replicas if m.scaling else 1
    key = "scaling.maxReplicas" if m.scaling else "nodesPerReplica"
    if top * m.nodes_per_replica > room:
        fits = room // m.nodes_per_replica
        problems.append(Problem(stack, f"{at}.{key}", f"{top} replica(s) of {m.nodes_per_replica} pod(s) with "
                                f"{m.gpus_per_node} GPU(s) each need {top * m.nodes_per_replica} pods; pool "
                                f"'{pool.name}' holds at most {room} ({nodes} node(s) x {pods_per_node}): the rest stay "
                                f"Pending; at most {fits} replica(s), or raise the pool's maxNodes",
                                top if m.scaling else m.nodes_per_replica))
    return problems


def _roles(stack: str, at: str, m: Any, pool: Any, nodes: int, pods_per_node: int) -> list[Problem]:
    """A prefill/decode server's roles share the pool: prefill's most replicas plus decode's, each of nodesPerReplica
    pods, must fit it at maxNodes. The role whose bound crosses the pool is named (prefill counted first), with the
    key that sets its bound (`roles.<role>.scaling.maxReplicas`, or `roles.<role>.replicas` for a fixed role)."""
    room = nodes * pods_per_node
    used = 0
    needs = []
    for role in ("prefill", "decode"):
        r = getattr(m.roles, role)
        top = r.bounds()[1]
        needs.append(f"{role} {top}")
        used += top * m.nodes_per_replica
        if used > room:
            key = f"roles.{role}.scaling.maxReplicas" if r.scaling else f"roles.{role}.replicas"
            return [Problem(stack, f"{at}.{key}", f"the roles need {used} pods at most ({', '.join(needs)} "
                            f"replica(s) of {m.nodes_per_replica} pod(s) with {m.gpus_per_node} GPU(s) each); pool "
                            f"'{pool.name}' holds at most {room} ({nodes} node(s) x {pods_per_node}): the rest stay "
                            f"Pending; lower it, or raise the pool's maxNodes", top)]
    return []
