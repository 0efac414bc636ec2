"""What a pod on a GKE GPUDirect pool carries to use the pool's extra NICs (TCPX on a3-highgpu-8g, TCPXO on
a3-megagpu-8g, RDMA on a3-ultragpu-8g, a4-highgpu-8g and A4X), shared by `gpufleet verify`'s NCCL check
(gpufleet/app/verify/nccl/gke.py) and the model servers (components/serving/, issue 52). Sources:

- TCPX and TCPXO: Google's workload manifests for them (GoogleCloudPlatform/container-engine-accelerators,
  gpudirect-tcpx/nccl-test-latest.yaml @fee88336 and gpudirect-tcpxo/nccl-test-latest.yaml @bd4a7491, the commits whose
  NCCL plugin installers gpufleet applies, versions.GKE_GPUDIRECT_MANIFESTS), which GKE's "Maximize GPU network
  bandwidth in Standard mode clusters" (cloud.google.com/kubernetes-engine/docs/how-to/gpu-bandwidth-gpudirect-tcpx,
  "Add GPUDirect to your manifests") applies: the pool's NICs in `networking.gke.io/interfaces`, the receive-datapath
  manager (rxdm, the `tcpx-daemon` / `tcpxo-daemon`) beside the workload with the GPU devices injected by the NRI
  device injector (`devices.gke.io/container.<daemon>`), the host's NVIDIA libraries (where the installer puts the NCCL
  plugin) on LD_LIBRARY_PATH.
- RDMA: "Run NCCL on custom GKE clusters that use A4 or A3 Ultra" (docs.cloud.google.com/ai-hypercomputer/docs/nccl/
  test-gke-custom, last updated 2026-04-06): eth0 on the default network and eth2.. on the RoCE networks, the host's
  /home/kubernetes/bin/gib at /usr/local/gib and /home/kubernetes/bin/nvidia at /usr/local/nvidia, LD_LIBRARY_PATH
  /usr/local/nvidia/lib64, NCCL_NET=gIB and `source /usr/local/gib/scripts/set_nccl_env.sh`; "Run NCCL on Compute
  Engine instances" (docs.cloud.google.com/ai-hypercomputer/docs/nccl/test-vms, "Enable NCCL/gIB"): the script
  "includes all the necessary environment variables for NCCL/gIB" and /usr/local/gib/lib64 must be on
  LD_LIBRARY_PATH. The two tabs of the first page differ: the A3 Ultra manifest runs its container `privileged: true`,
  the A4 one does not; gpufleet follows each machine type's own tab (PRIVILEGED_MACHINES).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Optional

from gpufleet.base import labels, versions

# Where Google's manifests mount the GKE-installed NVIDIA libraries, and the GPU device nodes they inject into rxdm.
NVIDIA_LIB_HOST = "/home/kubernetes/bin/nvidia/lib64"
NVIDIA_LIB = "/usr/local/nvidia/lib64"


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


def daemon_devices(kind: Kind, gpus: int) -> str:
    """The NRI device injector's annotation value for the rxdm: every GPU of the node, nvidiactl, nvidia-uvm and the
    kind's extra devices (Google's manifests list /dev/nvidia0..7)."""
    devices = [f"/dev/nvidia{i}" for i in range(gpus)] + ["/dev/nvidiactl", "/dev/nvidia-uvm", *kind.extra_devices]
    return "".join(f"- path: {d}\n" for d in devices)


# --- serving pods (issue 52) ---

# The machine types whose RDMA workload manifest runs privileged (test-gke-custom, the A3 Ultra tab; the A4 tab does
# not). A4X: its page (test-gke-custom-a4x) was not read with a securityContext; gpufleet asks nothing there.
PRIVILEGED_MACHINES = ("a3-ultragpu-8g",)
# gIB's NCCL settings, sourced before the server starts (test-vms "Enable NCCL/gIB"): a fixed script, the server's
# argv passed on as "$@", so no stack value is parsed by the shell.
GIB_ENV_SCRIPT = "/usr/local/gib/scripts/set_nccl_env.sh"
GIB_PREFIX = ("sh", "-c", f'. {GIB_ENV_SCRIPT} && exec "$@"', "gib-env")


@dataclass(frozen=True)
class Needs:
    """What a serving pod on a GPUDirect pool must be granted (the stack's `serving.models[i].rdma`)."""

    capabilities: tuple[str, ...] = ()
    """Linux capabilities, on the server container or its rxdm sidecar."""
    privileged: bool = False
    why: str = ""


def needs(kind: str, machine: str) -> Needs:
    """What the pool's kind asks of a pod, from the manifests above."""
    k = KINDS.get(kind)
    if k is not None:
        return Needs(tuple(sorted({*k.daemon_caps, *k.test_caps})), False,
                     f"GKE's GPUDirect-{kind} manifest runs the rxdm sidecar `{k.daemon}` with "
                     f"{', '.join(k.daemon_caps)}" + (f" and the workload with {', '.join(k.test_caps)}"
                                                      if k.test_caps else ""))
    if machine in PRIVILEGED_MACHINES:
        return Needs((), True, f"GKE's GPUDirect-RDMA manifest for {machine} (A3 Ultra) runs the workload privileged")
    return Needs()


def serving_pod(pool: str, kind: str, networks: int, rdma_subnets: int, node_gpus: int) -> dict:
    """What a model server's pod on a GPUDirect pool carries, as ModelServerArgs.rdma takes it: `annotations`, `env`,
    `mounts`, `volumes`, `sidecars` (native sidecars: init containers with restartPolicy Always, which stop with the
    pod, as gpufleet/app/verify/nccl/gke.py runs the rxdm), `sidecar_capabilities`, `command_prefix`."""
    out: dict = {"annotations": {labels.GKE_DEFAULT_INTERFACE_ANNOTATION: "eth0"}}
    k = KINDS.get(kind)
    if k is None:  # RDMA (gIB)
        out["annotations"][labels.GKE_INTERFACES_ANNOTATION] = json.dumps(rdma_interfaces(pool, rdma_subnets))
        out["env"] = [("LD_LIBRARY_PATH", f"/usr/local/gib/lib64:{NVIDIA_LIB}"), ("NCCL_NET", "gIB")]
        out["mounts"] = [("gpudirect-nvidia", "/usr/local/nvidia"), ("gpudirect-gib", "/usr/local/gib")]
        out["volumes"] = [_host("gpudirect-nvidia", "/home/kubernetes/bin/nvidia"),
                          _host("gpudirect-gib", "/home/kubernetes/bin/gib")]
        out["command_prefix"] = list(GIB_PREFIX)
        return out
    out["annotations"][labels.GKE_INTERFACES_ANNOTATION] = json.dumps(interfaces(pool, networks))
    out["annotations"][labels.GKE_DEVICES_ANNOTATION_PREFIX + k.daemon] = daemon_devices(k, node_gpus)
    # The workload's mounts and volumes without /dev/shm (the model's own `shm`) and TCPX's nccl-configmap (the NCCL
    # test's scripts, no part of a server).
    skip = {"shared-memory", "config-volume"}
    prefix = "gpudirect-"
    out["env"] = list(k.test_env)
    out["mounts"] = [(prefix + v, p) for v, p in k.test_mounts if v not in skip]
    out["volumes"] = [{**v, "name": prefix + v["name"]} for v in k.volumes if v["name"] not in skip]
    daemon: dict = {
        "name": k.daemon, "image": versions.GKE_GPUDIRECT_TEST_IMAGES[kind]["rxdm"],
        "command": list(k.daemon_command), "env": [{"name": "LD_LIBRARY_PATH", "value": NVIDIA_LIB}],
        "securityContext": {"capabilities": {"add": list(k.daemon_caps)}},
        "volumeMounts": [{"name": prefix + v, "mountPath": p} for v, p in k.daemon_mounts],
        "restartPolicy": "Always",
    }
    if k.daemon_args:
        daemon["args"] = list(k.daemon_args)
    out["sidecars"] = [daemon]
    out["sidecar_capabilities"] = list(k.daemon_caps)
    return out
