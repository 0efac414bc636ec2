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
from dataclasses import dataclass
from typing import Optional

from gpufleet.base import labels, versions

# Where Google's manifests mount the GKE-installed NVIDIA libraries, and the GPU device nodes they inject into rxdm.
NVIDIA_LIB_HOST = "/home/kubernetes/bin/nvidia/lib64"
NVIDIA_LIB = "/usr/local/nvidia/lib64"
# Readiness of each rank: its sshd runs. Google's test containers start it with `service ssh restart` (the images'
# SysV init script), whose `status` action exits 0 while the daemon runs.
SSHD_READY = {"exec": {"command": ["service", "ssh", "status"]}, "periodSeconds": 5}
DEFAULT_BYTES = 1 << 30  # the size gpufleet's own all-reduce measures without a figure (gpufleet/app/verify/nccl/allreduce.py SCRIPT)


@dataclass(frozen=True)
class Kind:
    """What one GPUDirect kind's pods carry, from Google's nccl-test-latest.yaml for that kind."""

    daemon: str  # rxdm container name (the NRI annotation names it)
    daemon_command: tuple[str, ...]
    daemon_args: tuple[str, ...]
    daemon_caps: tuple[str, ...]
    daemon_mounts: tuple[tuple[str, str], ...]  # (volume, mountPath)
    extra_devices: tuple[str, ...]  # device nodes after /dev/nvidia<i>, /dev/nvidiactl, /dev/nvidia-uvm
    test_env: tuple[tuple[str, str], ...]
    test_caps: tuple[str, ...]
    test_mounts: tuple[tuple[str, str], ...]
    volumes: tuple[dict, ...]


def _host(name: str, path: str) -> dict:
    return {"name": name, "hostPath": {"path": path}}


# gpudirect-tcpx/nccl-test-latest.yaml @fee883360a660f71ba07478db95d5c1325322f77 (pod nccl-test-host-1).
TCPX = Kind(
    daemon="tcpx-daemon",
    daemon_command=("/tcpgpudmarxd/build/app/tcpgpudmarxd", "--gpu_nic_preset", "a3vm", "--gpu_shmem_type", "fd",
                    "--uds_path", "/run/tcpx", "--setup_param", '\\"--verbose 128 2 0 \\"'),
    daemon_args=(),
    daemon_caps=("NET_ADMIN",),
    daemon_mounts=(("libraries", NVIDIA_LIB), ("tcpx-socket", "/run/tcpx"), ("sys", "/hostsysfs"),
                   ("proc", "/hostprocsysfs")),
    extra_devices=(),
    test_env=(("LD_LIBRARY_PATH", NVIDIA_LIB),),
    test_caps=("IPC_LOCK",),
    test_mounts=(("tcpx-socket", "/tmp"), ("libraries", NVIDIA_LIB), ("config-volume", "/configs")),
    volumes=(
        # gpudirect-tcpx/nccl-config.yaml: applied by GkeGpuDirectWiring (GKE_GPUDIRECT_MANIFESTS["TCPX"]).
        {"name": "config-volume", "configMap": {"name": "nccl-configmap", "defaultMode": 0o777}},
        _host("libraries", NVIDIA_LIB_HOST), _host("tcpx-socket", "/run/tcpx"), _host("sys", "/sys"),
        _host("proc", "/proc/sys"),
    ),
)
# gpudirect-tcpxo/nccl-test-latest.yaml @bd4a7491672b48dfec28f3679b679a614f6cbbc7 (pod nccl-test-host-1).
TCPXO = Kind(
    daemon="tcpxo-daemon",
    daemon_command=("/bin/sh", "-c"),
    daemon_args=("set -ex\nchmod 755 /fts/entrypoint_rxdm_container.sh\n"
                 "/fts/entrypoint_rxdm_container.sh --num_hops=2 --num_nics=8\n",),
    daemon_caps=("NET_ADMIN", "NET_BIND_SERVICE"),
    daemon_mounts=(("nvidia", NVIDIA_LIB), ("sys", "/hostsysfs"), ("proc-sys", "/hostprocsysfs")),
    extra_devices=("/dev/dmabuf_import_helper",),
    test_env=(("LD_LIBRARY_PATH", NVIDIA_LIB), ("NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY", "/dev/aperture_devices")),
    test_caps=(),
    test_mounts=(("nvidia", NVIDIA_LIB), ("shared-memory", "/dev/shm"), ("aperture-devices", "/dev/aperture_devices")),
    volumes=(
        _host("nvidia", NVIDIA_LIB_HOST),
        {"name": "shared-memory", "emptyDir": {"medium": "Memory", "sizeLimit": "1Gi"}},
        _host("sys", "/sys"), _host("proc-sys", "/proc/sys"), _host("aperture-devices", "/dev/aperture_devices"),
    ),
)
KINDS = {"TCPX": TCPX, "TCPXO": TCPXO}
SUPPORTED = ("TCPX", "TCPXO", "RDMA")


def network_names(pool: str, networks: int) -> list[str]:
    """The multi-networking Network objects of a TCPX/TCPXO pool, in NIC order: GkeGpuDirectNetwork names NIC i
    `vpc-<i>` and GkeGpuDirectWiring names its Network `<pool>-<nic>` (components/gke; tests/unit/test_nccl_gke.py
    checks the plan's objects carry exactly these names)."""
    return [f"{pool}-vpc-{i}" for i in range(networks)]


def rdma_network_names(pool: str, rdma_subnets: int) -> list[str]:
    """A GPUDirect-RDMA pool's RoCE Networks in NIC order: GkeGpuDirectNetwork names them `rdma-<i>` (after the
    second gVNIC, `gvnic`, which Google's test pods do not attach)."""
    return [f"{pool}-rdma-{i}" for i in range(rdma_subnets)]


def rdma_interfaces(pool: str, rdma_subnets: int) -> list[dict[str, str]]:
    """eth0 on the default network, eth2.. on the RoCE networks (cluster-toolkit @c5eb7824 and gpudirect-rdma/
    nccl-test.yaml @2c776f7e: rdma-0 on eth2 ... rdma-7 on eth9; eth1 is the node's second gVNIC)."""
    return [{"interfaceName": "eth0", "network": "default"},
            *[{"interfaceName": f"eth{i + 2}", "network": n} for i, n in enumerate(rdma_network_names(pool, rdma_subnets))]]


def interfaces(pool: str, networks: int) -> list[dict[str, str]]:
    """eth0 on the default network, then eth1.. on the pool's networks (Google's manifests: vpc1.. on eth1..)."""
    return [{"interfaceName": "eth0", "network": "default"},
            *[{"interfaceName": f"eth{i + 1}", "network": n} for i, n in enumerate(network_names(pool, networks))]]


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
    devices = [f"/dev/nvidia{i}" for i in range(gpus)] + ["/dev/nvidiactl", "/dev/nvidia-uvm", *k.extra_devices]
    annotations = {
        labels.GKE_DEFAULT_INTERFACE_ANNOTATION: "eth0",
        labels.GKE_INTERFACES_ANNOTATION: json.dumps(interfaces(pool, networks)),
        labels.GKE_DEVICES_ANNOTATION_PREFIX + k.daemon: "".join(f"- path: {d}\n" for d in devices),
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
