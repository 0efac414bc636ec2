"""The NCCL all-reduce check users apply after `pulumi up` to see RDMA bandwidth between two hosts of a pool.

A pod pair (no MPI operator needed): two pods on two nodes of an RDMA pool, each with every GPU of its node
and the pool's RDMA device, joined by a headless Service; torchrun runs an all-reduce and rank 0 prints the
bus bandwidth. `NCCL_DEBUG=INFO` shows whether NCCL picked the RDMA transport ("NET/IB"; on EFA "NET/OFI").
k3s RDMA pools (`manifests`: NGC PyTorch, the Network Operator's RDMA device and Multus network) and EKS EFA pools
(`efa_manifests`: the AWS Deep Learning Containers image with libfabric's EFA provider and aws-ofi-nccl, every EFA
interface); on GKE GPUDirect pools (TCPX, TCPXO, RDMA) Google's own NCCL test with rank 0 running nccl-tests
all_reduce_perf (gpufleet/app/verify/nccl/gke.py). `for_pool` picks one, `gpufleet verify --level full` runs it.

`python -m gpufleet.app.verify.nccl STACK > examples/nccl-allreduce-rdma.yaml` regenerates the shipped example
(a test checks the file matches the lab stack).
"""

from __future__ import annotations

import sys
from typing import Optional

import yaml

from gpufleet.base import labels, platforms, versions
from gpufleet.app.verify.nccl import gke as nccl_gke
from gpufleet.base.catalog import aws
from gpufleet.base.capacity import pool_capacity
from gpufleet.base.node_labels import node_tolerations
from gpufleet.base.spec.shape import shaped_pools

NAME = "nccl-allreduce"
PORT = 29500
SCRIPT = '''import os, time, torch, torch.distributed as dist
dist.init_process_group("nccl")
rank, world = dist.get_rank(), dist.get_world_size()
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
size = int(os.environ.get("NCCL_TEST_BYTES", str(1 << 30)))
x = torch.ones(size // 4, dtype=torch.float32, device="cuda")
for _ in range(5):
    dist.all_reduce(x)
torch.cuda.synchronize()
iters = 20
start = time.perf_counter()
for _ in range(iters):
    dist.all_reduce(x)
torch.cuda.synchronize()
seconds = (time.perf_counter() - start) / iters
algbw = size / seconds / 1e9
busbw = algbw * 2 * (world - 1) / world
if rank == 0:
    print(f"all_reduce {size} bytes over {world} GPUs: {seconds * 1e3:.2f} ms, "
          f"algbw {algbw:.1f} GB/s, busbw {busbw:.1f} GB/s")
dist.destroy_process_group()
'''


def manifests(pool: str, gpus: int, rdma_resource: str, network: str, namespace: str = "default") -> list[dict]:
    """ConfigMap (the script), headless Service, and the two pods (ranks 0 and 1) on two nodes of a k3s RDMA
    `pool` (NVIDIA Network Operator: the RDMA device plugin's resource and a Multus network)."""
    return _pair(
        pool, gpus, namespace, image=versions.nccl_test_image(),
        node_selector={labels.POOL_LABEL: pool},
        tolerations=[{"key": labels.GPU_TAINT_KEY, "operator": "Exists", "effect": labels.GPU_TAINT_EFFECT}],
        # Multus attaches the pool's RDMA network as a second interface (net1).
        annotations={labels.MULTUS_NETWORKS_ANNOTATION: network},
        env=[],
        limits={labels.GPU_RESOURCE: str(gpus), rdma_resource: "1"},
        requests={labels.GPU_RESOURCE: str(gpus), rdma_resource: "1"},
        # RDMA pins memory: the pod must be allowed to lock it.
        security_context={"capabilities": {"add": ["IPC_LOCK"]}},
    )


# EFA pod settings, from the AWS sources the catalog's busbw figures come from (aws-samples/awsome-distributed-training
# @27b7d49e, micro-benchmarks/nccl-tests: kubernetes/nccl-tests.yaml, the EKS MPIJob for p5.48xlarge, and
# slurm/nccl-tests.sbatch, which produced the p4de/p5 figures): every EFA interface of the node
# (vpc.amazonaws.com/efa, "set to the number of EFA adapters per node", README section 'Amazon EKS'), 5120Mi of
# 2 MiB hugepages and 8000Mi of memory, and the environment below. FI_EFA_USE_DEVICE_RDMA=1 only on the types the
# catalog marks `efa_device_rdma` (the ones AWS Deep Learning Containers' own EFA test sets it for): other types keep
# libfabric's default.
EFA_ENV = (
    ("FI_PROVIDER", "efa"),
    ("FI_EFA_FORK_SAFE", "1"),
    ("NCCL_BUFFSIZE", "8388608"),
    ("NCCL_P2P_NET_CHUNKSIZE", "524288"),
)
EFA_HUGEPAGES_2MI = "5120Mi"
EFA_MEMORY_REQUEST = "8000Mi"


def efa_manifests(pool: str, gpus: int, efa_interfaces: int, instance_type: Optional[str],
                  node_selector: dict[str, str], tolerations: list[dict], namespace: str = "default") -> list[dict]:
    """The same pod pair for an EKS EFA pool: the AWS Deep Learning Containers PyTorch image (libfabric's EFA
    provider and the aws-ofi-nccl plugin), every GPU and every EFA interface of the node, the pool's node selector
    and tolerations as its nodes carry them. No extra operator (MPI operator, JobSet) is needed: torchrun's static
    rendezvous through the headless Service joins the two pods, as on k3s."""
    env = [{"name": k, "value": v} for k, v in EFA_ENV]
    itype = aws.instance_types().get(instance_type or "")
    if itype is not None and itype.efa_device_rdma:
        env.append({"name": "FI_EFA_USE_DEVICE_RDMA", "value": "1"})
    efa = {labels.EFA_RESOURCE: str(efa_interfaces), "hugepages-2Mi": EFA_HUGEPAGES_2MI}
    return _pair(
        pool, gpus, namespace, image=versions.efa_nccl_test_image(),
        node_selector=dict(node_selector), tolerations=[dict(t) for t in tolerations], annotations={}, env=env,
        # No memory limit: the AWS sample's 8000Mi limit is sized for one all_reduce_perf process per GPU, while
        # torchrun starts one Python process with a CUDA context per GPU. Hugepages must be requested as limited.
        limits={labels.GPU_RESOURCE: str(gpus), **efa},
        requests={labels.GPU_RESOURCE: str(gpus), **efa, "memory": EFA_MEMORY_REQUEST},
        security_context=None,
    )


def _pair(pool: str, gpus: int, namespace: str, *, image: str, node_selector: dict[str, str], tolerations: list[dict],
          annotations: dict[str, str], env: list[dict], limits: dict[str, str], requests: dict[str, str],
          security_context: Optional[dict]) -> list[dict]:
    """ConfigMap (the script), headless Service, and the two pods (ranks 0 and 1) on two nodes of `pool`."""
    app = {"app.kubernetes.io/name": NAME}
    objs: list[dict] = [
        {
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": NAME, "namespace": namespace, "labels": app},
            "data": {"allreduce.py": SCRIPT},
        },
        {
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": NAME, "namespace": namespace, "labels": app},
            # Rank 1 must resolve rank 0's name while it starts, before either pod is Ready.
            "spec": {
                "clusterIP": "None", "publishNotReadyAddresses": True, "selector": app,
                "ports": [{"name": "rendezvous", "port": PORT}],
            },
        },
    ]
    for rank in (0, 1):
        command = (
            f"torchrun --nnodes=2 --nproc-per-node={gpus} --node-rank={rank} "
            f"--master-addr={NAME}-0.{NAME}.{namespace}.svc.cluster.local --master-port={PORT} /scripts/allreduce.py"
        )
        metadata: dict = {"name": f"{NAME}-{rank}", "namespace": namespace, "labels": app}
        if annotations:
            metadata["annotations"] = dict(annotations)
        container: dict = {
            "name": "nccl",
            "image": image,
            "command": ["sh", "-c", command],
            "env": [
                {"name": "NCCL_DEBUG", "value": "INFO"},
                {"name": "NCCL_DEBUG_SUBSYS", "value": "INIT,NET"},
                *[dict(e) for e in env],
            ],
            "ports": [{"containerPort": PORT, "name": "rendezvous"}],
            "resources": {"limits": dict(limits), "requests": dict(requests)},
        }
        if security_context:
            container["securityContext"] = security_context
        container["volumeMounts"] = [
            {"name": "scripts", "mountPath": "/scripts"},
            {"name": "shm", "mountPath": "/dev/shm"},
        ]
        objs.append({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": metadata,
            "spec": {
                "hostname": f"{NAME}-{rank}",
                "subdomain": NAME,
                # A rank that starts before its peer is reachable exits and is restarted.
                "restartPolicy": "OnFailure",
                "nodeSelector": dict(node_selector),
                "tolerations": [dict(t) for t in tolerations],
                # One pod per node: the point is to cross the network.
                "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
                    "labelSelector": {"matchLabels": app}, "topologyKey": "kubernetes.io/hostname",
                }]}},
                "containers": [container],
                "volumes": [
                    {"name": "scripts", "configMap": {"name": NAME}},
                    {"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "16Gi"}},
                ],
            },
        })
    return objs


def for_pool(spec, pool) -> tuple[list[dict], str]:
    """The check for one RDMA pool of a stack spec, or why there is none, by the fabric of the platform's RDMA pools
    (AddonTraits.rdma_fabric): k3s RDMA pools (Network Operator), EKS EFA pools, GKE GPUDirect-TCPX/TCPXO/RDMA pools
    (gpufleet/app/verify/nccl/gke.py)."""
    if not pool.rdma:
        return [], "not an RDMA pool"
    platform = spec.cluster.platform
    check = FABRIC_CHECKS.get(platforms.of(spec).addons.rdma_fabric)
    if check is None:
        return [], f"no NCCL check for RDMA pools on {platform}"
    return check(spec, pool, pool.gpus_per_node or 1)


def _network_operator_pool(spec, pool, gpus: int) -> tuple[list[dict], str]:
    """A pool on the Network Operator's RDMA shared device plugin and secondary network."""
    from gpufleet.components.gpu_stack.network_operator import network_name, pod_resource

    return manifests(pool.name, gpus, pod_resource(pool), network_name(pool), pool.rdma_network.namespace), ""


def _efa_pool(spec, pool, gpus: int) -> tuple[list[dict], str]:
    """A pool with every EFA interface its instance type has."""
    platform = spec.cluster.platform
    # The plan's EFA count per node (gpufleet.base.capacity: the catalog's EFA interfaces of the pool's type).
    efa = pool_capacity(pool, platform).advertised.get(labels.EFA_RESOURCE, 0)
    if not efa:
        return [], "the pool's nodes advertise no vpc.amazonaws.com/efa in the plan"
    tolerations = node_tolerations(pool, platform)
    itype = pool.instance_type or (list(pool.instance_types or []) or [None])[0]
    return efa_manifests(pool.name, gpus, efa, itype, {labels.POOL_LABEL: pool.name}, tolerations), ""


def _gpudirect_pool(spec, pool, gpus: int) -> tuple[list[dict], str]:
    """A pool on GCE's GPUDirect networking of its machine type."""
    from gpufleet.base.catalog import gcp as gcp_catalog

    platform = spec.cluster.platform
    direct = gcp_catalog.machine(pool.machine_type).gpudirect if pool.machine_type else None
    if direct is None:
        return [], f"{pool.machine_type} has no GPUDirect networking in the catalog"
    if direct.kind not in nccl_gke.SUPPORTED:
        return [], (f"no NCCL check for GPUDirect-{direct.kind} pools on {platform} (gpufleet/app/verify/nccl/gke.py "
                    f"covers GPUDirect-{', -'.join(nccl_gke.SUPPORTED)} pools)")
    selector, tolerations = {labels.POOL_LABEL: pool.name}, node_tolerations(pool, platform)
    if direct.kind == "RDMA":
        return nccl_gke.rdma_manifests(NAME, pool.name, gpus, direct.rdma_subnets, selector, tolerations), ""
    return nccl_gke.manifests(NAME, direct.kind, pool.name, gpus, direct.networks, selector, tolerations), ""


# The check of each RDMA fabric a platform's pools may use (AddonTraits.rdma_fabric).
FABRIC_CHECKS = {
    "network-operator": _network_operator_pool,
    "efa": _efa_pool,
    "gpudirect": _gpudirect_pool,
}


def for_stack(spec) -> list[dict]:
    """The check for the first RDMA pool of a stack spec (shaped: GPUs per node filled in from the catalog)."""
    pool = next((p for p in shaped_pools(spec) if p.rdma), None)
    objs, why = for_pool(spec, pool) if pool else ([], "the stack has no RDMA pool")
    if not objs:
        raise ValueError(why)
    return objs


def render(objs: list[dict], stack: str = "lab") -> str:
    file = "examples/nccl-allreduce-rdma.yaml" if stack == "lab" else "<this file>"
    header = (
        f"# NCCL all-reduce across two hosts of an RDMA pool. Generated by `python -m gpufleet.app.verify.nccl {stack}`.\n"
        f"# kubectl apply -f {file} && kubectl logs -f nccl-allreduce-0\n"
        f"# See docs/rdma.md for what to look for. kubectl delete -f {file} cleans up.\n"
    )
    return header + yaml.dump_all(objs, Dumper=_Dumper, sort_keys=False, default_flow_style=False)


class _Dumper(yaml.SafeDumper):
    """No YAML anchors (kubectl users read the file) and the script as a literal block."""

    def ignore_aliases(self, data) -> bool:
        return True


_Dumper.add_representer(
    str,
    lambda d, s: d.represent_scalar("tag:yaml.org,2002:str", s, style="|" if "\n" in s else None),
)


def main(argv: list[str]) -> int:
    from gpufleet.app.plan.stackfile import read_stack_file, stack_path
    from gpufleet.base.spec import load_spec
    from pathlib import Path

    stack = argv[0] if argv else "lab"
    root = Path(__file__).resolve().parents[4]  # gpufleet/app/verify/nccl/allreduce.py -> the checkout
    sf = read_stack_file(stack, stack_path(root, stack))
    spec = load_spec(sf.stack, sf.config, sf.secret_keys)
    try:
        objs = for_stack(spec)
    except ValueError as exc:
        sys.stderr.write(f"gpufleet.app.verify.nccl: stack '{stack}': {exc}\n")
        return 2
    sys.stdout.write(render(objs, stack))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
