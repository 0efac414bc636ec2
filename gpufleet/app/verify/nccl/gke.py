"""The NCCL all-reduce check on GKE GPUDirect pools: GPUDirect-TCPX (a3-highgpu-8g), GPUDirect-TCPXO
(a3-megagpu-8g) and GPUDirect-RDMA (gIB: a3-ultragpu-8g, a4-highgpu-8g).

Google's own NCCL test for these pools (GoogleCloudPlatform/container-engine-accelerators, gpudirect-tcpx/
nccl-test-latest.yaml @fee88336 and gpudirect-tcpxo/nccl-test-latest.yaml @bd4a7491, the commits whose NCCL plugin
installers gpufleet applies, gpufleet/base/versions.py GKE_GPUDIRECT_MANIFESTS) starts two pods that sleep, each with the
pool's extra NICs (`networking.gke.io/interfaces`), the receive-datapath manager (rxdm) next to the test container
with the GPU devices injected by the NRI device injector (`devices.gke.io/container.<name>`), and drives them with
`kubectl exec`: `init_ssh.sh HOST1 HOST2`, `gen_hostfiles.sh HOST1 HOST2` (in /scripts), then an nccl-tests binary
through mpirun. verify cannot exec, so rank 0 runs that same sequence itself as its command, for all_reduce_perf,
and rank 1 serves sshd until verify deletes it:
- TCPX: run-nccl.sh from the `nccl-configmap` ConfigMap gpufleet applies with the installer (gpudirect-tcpx/
  nccl-config.yaml @fee88336): `run-nccl.sh BENCHMARK LD_LIBRARY_PATH GPUS_PER_NODE IFNAMES -b -e NHOSTS` runs
  /third_party/nccl-tests-mpi/build/BENCHMARK, the nccl-tests build directory, where nccl-tests' Makefile builds
  all_reduce_perf beside the all_gather_perf Google's allgather.sh runs (NVIDIA/nccl-tests v2.19.6
  a0b82b22 src/Makefile line 37, BIN_FILES_LIST := all_reduce all_gather ...). -b and -e are the message size.
- TCPXO: the image's /scripts/demo-run-nccl-test-tcpxo-via-mpi.sh (Google's manifest runs it with
  BENCHMARK=all_gather_perf NHOSTS=2 NCCL_LIB_DIR LD_LIBRARY_PATH). The script's own header names all_reduce_perf as a
  BENCHMARK value and reads the message range from DATA_MIN/DATA_MAX and the GPUs from GPU_PER_NODE (the script's
  text as found in the public code index; its repository is not published beside the image, so this is the one
  fact here not read at a commit).
GPUDirect-RDMA needs no exec: cluster-toolkit's A3 Ultra example (GoogleCloudPlatform/cluster-toolkit @c5eb7824
examples/gke-a3-ultragpu/nccl-jobset-example.yaml, the gIB diagnostic image v1.0.6 that matches the pinned installer)
runs by itself: every worker starts sshd (`/scripts/container_entry.sh daemon`), waits for each peer by
`ssh -p 222`, writes `/tmp/hostfile`, and the head sources gIB's NCCL settings and runs
/third_party/nccl-tests/build/all_gather_perf through mpirun; rank 0 here runs all_reduce_perf from that directory
(nccl-tests builds both there), rank 1 serves sshd (`rdma_manifests`).
The rxdm runs as a native sidecar (an init container with restartPolicy Always, Kubernetes "Sidecar containers",
stable in 1.33 and on by default since 1.29: https://kubernetes.io/docs/concepts/workloads/pods/sidecar-containers/)
instead of Google's second regular container, so rank 0's pod completes when the test ends and verify reads its phase
and log (the log of the one regular container). The NRI device injector matches the annotation by the container's
name in CreateContainer (nri_device_injector/nri_device_injector.go @bd4a7491), which the runtime calls for init
containers too.
"""

from __future__ import annotations

import json
from typing import Optional

from gpufleet.base import labels, versions
# The kinds' pod facts live with GKE's traits, shared with the model servers (issue 52).
from gpufleet.base.platforms.gke.gpudirect_pods import (KINDS, NVIDIA_LIB, NVIDIA_LIB_HOST, TCPX, TCPXO, Kind, _host,  # noqa: F401
                                                        daemon_devices, interfaces, network_names, rdma_interfaces,
                                                        rdma_network_names)

# Readiness of each rank: its sshd runs. Google's test containers start it with `service ssh restart` (the images'
# SysV init script), whose `status` action exits 0 while the daemon runs.
SSHD_READY = {"exec": {"command": ["service", "ssh", "status"]}, "periodSeconds": 5}
DEFAULT_BYTES = 1 << 30  # the size gpufleet's own all-reduce measures without a figure (gpufleet/app/verify/nccl/allreduce.py SCRIPT)
SUPPORTED = ("TCPX", "TCPXO", "RDMA")


def _run_script(kind: str, hosts: list[str], gpus: int, networks: int) -> str:
    h = " ".join(hosts)
    size = f'SIZE="${{NCCL_TEST_BYTES:-{DEFAULT_BYTES}}}"'
    if kind == "TCPX":
        ifnames = ",".join(f"eth{i + 1}" for i in range(networks))
        setup = ("for script in /configs/*; do cp \"$script\" /scripts/; "
                 "chmod +x \"/scripts/$(basename \"$script\")\"; done")  # as allgather.sh in nccl-config.yaml
        run = f'/scripts/run-nccl.sh all_reduce_perf "${{LD_LIBRARY_PATH}}" {gpus} {ifnames} "$SIZE" "$SIZE" 2'
    else:
        setup = "chmod 755 /scripts/demo-run-nccl-test-tcpxo-via-mpi.sh"
        run = (f'DATA_MIN="$SIZE" DATA_MAX="$SIZE" GPU_PER_NODE={gpus} BENCHMARK=all_reduce_perf NHOSTS=2 '
               'NCCL_LIB_DIR="${LD_LIBRARY_PATH}" LD_LIBRARY_PATH="${LD_LIBRARY_PATH}" '
               '/scripts/demo-run-nccl-test-tcpxo-via-mpi.sh')
    return "\n".join([
        "set -e",
        setup,
        "service ssh restart",
        # Rank 1's name resolves once its sshd runs (the Service publishes Ready ranks only).
        f"until getent hosts {hosts[1]} >/dev/null; do sleep 5; done",
        f"/scripts/init_ssh.sh {h}",
        f"cd /scripts && /scripts/gen_hostfiles.sh {h} && cd /",
        size,
        run,
        "",
    ])


def manifests(name: str, kind: str, pool: str, gpus: int, networks: int, node_selector: dict[str, str],
              tolerations: list[dict], namespace: str = "default") -> list[dict]:
    """Headless Service and the two pods (rank 0 first) on two nodes of a GKE `kind` (TCPX | TCPXO) pool with
    `networks` extra NICs. The namespace must be where GkeGpuDirectWiring applied TCPX's nccl-configmap: the
    provider's default namespace, "default"."""
    k = KINDS[kind]
    images = versions.GKE_GPUDIRECT_TEST_IMAGES[kind]
    hosts = [f"{name}-{r}.{name}.{namespace}.svc.cluster.local" for r in (0, 1)]
    annotations = {
        labels.GKE_DEFAULT_INTERFACE_ANNOTATION: "eth0",
        labels.GKE_INTERFACES_ANNOTATION: json.dumps(interfaces(pool, networks)),
        labels.GKE_DEVICES_ANNOTATION_PREFIX + k.daemon: daemon_devices(k, gpus),
    }
    # Ready addresses only: a rank is published once its sshd runs (SSHD_READY), so rank 0 never reaches a peer that
    # cannot answer yet (its image may still be pulling while its pod already has an address).
    objs = [_service(name, namespace, publish_not_ready=False)]
    for rank in (0, 1):
        command = _run_script(kind, hosts, gpus, networks) if rank == 0 else "service ssh restart\nsleep infinity\n"
        daemon: dict = {
            "name": k.daemon, "image": images["rxdm"], "imagePullPolicy": "Always",
            "command": list(k.daemon_command),
            "env": [{"name": "LD_LIBRARY_PATH", "value": NVIDIA_LIB}],
            "securityContext": {"capabilities": {"add": list(k.daemon_caps)}},
            "volumeMounts": [{"name": v, "mountPath": p} for v, p in k.daemon_mounts],
            "restartPolicy": "Always",  # native sidecar: stops when the test container ends
        }
        if k.daemon_args:
            daemon["args"] = list(k.daemon_args)
        test: dict = {
            "name": "nccl-test", "image": images["nccl-test"], "imagePullPolicy": "Always",
            "command": ["/bin/sh", "-c", command],
            "env": [{"name": n, "value": v} for n, v in k.test_env],
            "resources": {"limits": {labels.GPU_RESOURCE: str(gpus)}, "requests": {labels.GPU_RESOURCE: str(gpus)}},
            "readinessProbe": json.loads(json.dumps(SSHD_READY)),
            "volumeMounts": [{"name": v, "mountPath": p} for v, p in k.test_mounts],
        }
        if k.test_caps:
            test["securityContext"] = {"capabilities": {"add": list(k.test_caps)}}
        objs.append(_pod(name, rank, namespace, annotations, node_selector, tolerations, [test], k.volumes, [daemon]))
    return objs


def _service(name: str, namespace: str, publish_not_ready: bool) -> dict:
    """The headless Service behind the ranks' DNS names (hostname.subdomain); no ports, as Google's Services."""
    spec: dict = {"clusterIP": "None", "selector": {"app.kubernetes.io/name": name}}
    if publish_not_ready:
        spec["publishNotReadyAddresses"] = True
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": name, "namespace": namespace, "labels": {"app.kubernetes.io/name": name}},
            "spec": spec}


def _pod(name: str, rank: int, namespace: str, annotations: dict[str, str], node_selector: dict[str, str],
         tolerations: list[dict], containers: list[dict], volumes, init_containers: Optional[list[dict]] = None) -> dict:
    """Rank `rank` on its own node of the pool, reachable as `<name>-<rank>.<name>`."""
    app = {"app.kubernetes.io/name": name}
    spec: dict = {
        "hostname": f"{name}-{rank}",
        "subdomain": name,
        # Rank 0 is the test: it fails once and is reported; rank 1 only serves sshd.
        "restartPolicy": "Never" if rank == 0 else "OnFailure",
        "nodeSelector": dict(node_selector),
        "tolerations": [dict(t) for t in tolerations],
        # One pod per node: the point is to cross the network.
        "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
            "labelSelector": {"matchLabels": app}, "topologyKey": "kubernetes.io/hostname",
        }]}},
    }
    if init_containers:
        spec["initContainers"] = init_containers
    spec["containers"] = containers
    spec["volumes"] = [json.loads(json.dumps(v)) for v in volumes]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"{name}-{rank}", "namespace": namespace, "labels": app,
                         "annotations": dict(annotations)},
            "spec": spec}


# gpudirect-rdma: cluster-toolkit @c5eb7824e5018db80dc8c835ea3fed719ed202be examples/gke-a3-ultragpu/
# nccl-jobset-example.yaml, container `nccl` (its command, env, privilege, and the volumes it mounts).
RDMA_VOLUMES = (
    _host("nvidia", "/home/kubernetes/bin/nvidia"), _host("gib", "/home/kubernetes/bin/gib"),
    {"name": "shared-memory", "emptyDir": {"medium": "Memory", "sizeLimit": "250Gi"}},
)
RDMA_MOUNTS = (("nvidia", "/usr/local/nvidia"), ("gib", "/usr/local/gib"), ("shared-memory", "/dev/shm"))
RDMA_ENV = (("OMPI_ALLOW_RUN_AS_ROOT", "1"), ("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"))
_SSHD = "/sbin/ldconfig\n/scripts/container_entry.sh daemon &\n"  # "Load all the cuda libs", "Start sshd"


def _rdma_script(hosts: list[str], gpus: int) -> str:
    wait = "".join(
        f"until ssh -p 222 -o StrictHostKeyChecking=no {h} hostname; do echo Waiting for {h}...; sleep 10; done\n"
        f"echo {h} port=222 slots={gpus} | tee -a /tmp/hostfile\n" for h in hosts)
    return (_SSHD + wait
            + 'export NCCL_TESTS_SPLIT_MASK="0x0"\n'  # world level
            + "export NCCL_NET=gIB\n"
            + "source /usr/local/gib/scripts/set_nccl_env.sh\n"
            + "ENV_VARS=$(echo ${!NCCL*} ${!OMPI*} LD_LIBRARY_PATH PATH | sed 's/ / -x /g')\n"
            + f'SIZE="${{NCCL_TEST_BYTES:-{DEFAULT_BYTES}}}"\n'
            + "mpirun --hostfile /tmp/hostfile -x $ENV_VARS -mca plm_rsh_no_tree_spawn 1 --mca orte_keep_fqdn_hostnames 1 "
              "--mca btl self,tcp --mca btl_tcp_if_include eth0 --bind-to none "
              '/third_party/nccl-tests/build/all_reduce_perf -b "$SIZE" -e "$SIZE" -f 2 -g 1 -w 5 --iters 100 -c 1\n')


def rdma_manifests(name: str, pool: str, gpus: int, rdma_subnets: int, node_selector: dict[str, str],
                   tolerations: list[dict], namespace: str = "default") -> list[dict]:
    """Headless Service and the two pods (rank 0 first) on two nodes of a GKE GPUDirect-RDMA pool with
    `rdma_subnets` RoCE NICs."""
    hosts = [f"{name}-{r}.{name}.{namespace}.svc.cluster.local" for r in (0, 1)]
    annotations = {
        labels.GKE_DEFAULT_INTERFACE_ANNOTATION: "eth0",
        labels.GKE_INTERFACES_ANNOTATION: json.dumps(rdma_interfaces(pool, rdma_subnets)),
    }
    # Rank 0 waits for rank 1 by ssh itself (as the source does), so both are published before they are Ready.
    objs = [_service(name, namespace, publish_not_ready=True)]
    for rank in (0, 1):
        container = {
            "name": "nccl", "image": versions.GKE_GPUDIRECT_TEST_IMAGES["RDMA"]["nccl-test"],
            # bash: the script reads ${!NCCL*}.
            "command": ["bash", "-c", _rdma_script(hosts, gpus) if rank == 0 else _SSHD + "sleep infinity\n"],
            "env": [{"name": n, "value": v} for n, v in RDMA_ENV],
            "securityContext": {"privileged": True},
            "resources": {"limits": {labels.GPU_RESOURCE: str(gpus)}, "requests": {labels.GPU_RESOURCE: str(gpus)}},
            "volumeMounts": [{"name": v, "mountPath": p} for v, p in RDMA_MOUNTS],
        }
        objs.append(_pod(name, rank, namespace, annotations, node_selector, tolerations, [container], RDMA_VOLUMES))
    return objs
