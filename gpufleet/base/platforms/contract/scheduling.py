"""DRA, topology, serving gateways, AMD, sharing and admission: what a platform supports and how.

Shared code (gpufleet/base/spec/features/{dra_checks,topology,topology_checks,serving,amd_checks,sharing_checks,
sriov_checks}.py, gpufleet/base/spec/checks/{admission_checks,catalog_checks,compat_checks}.py, components/serving/)
asks `platforms.get(name).scheduling.<trait>`. Each attribute and method below is the default: what a platform that
declares nothing gets (no NVLink machines beyond what its pools' `gpu` names, no topology labels, no serving gateway,
no AMD pools, no RDMA NICs, no extra checks). A platform overrides only what it has.

Checks return `gpufleet.base.spec.errors.Problem`s; the type is not imported here (the contract stays below the spec).
"""

from __future__ import annotations

from typing import Any, Optional


class SchedulingTraits:
    """Defaults: a platform that declares nothing here."""

    # Multi-node NVLink and DRA (gpufleet/base/spec/features/dra_checks.py; facts in gpufleet/base/catalog/dra.yaml,
    # keyed by the platform's name and the machine `nvlink_machine` returns).

    machine_key: str = "gpu"
    """The pool key (`nodePools[i].<key>`) that names the machine `nvlink_machine` returns, for messages. Default:
    `gpu`, the GPU model the stack declares."""

    def nvlink_machine(self, pool: Any) -> Optional[str]:
        """What decides a pool's multi-node NVLink system in catalog dra.yaml (None: nothing to look up). Default: the
        GPU model the pool declares (`gpu`)."""
        return pool.gpu

    def size_keys(self, pool: Any) -> list[tuple[str, int]]:
        """The pool keys that size it and their values, judged in whole NVLink domains. Default: minNodes and
        maxNodes."""
        return [("minNodes", pool.min_nodes), ("maxNodes", pool.max_nodes)]

    def preinstalled_driver(self, spec: Any, pool: Any) -> Optional[str]:
        """The NVIDIA driver version a pool's nodes come with when the stack chooses none (gpufleet:gpuOperator.driver),
        where the catalog knows it. Default: None (not known offline)."""
        return None

    def dra_problems(self, stack: str, spec: Any) -> list:
        """DRA and multi-node NVLink checks only this platform has (its pool settings DRA refuses, its placement of an
        NVLink domain). Default: none."""
        return []

    # Kueue Topology Aware Scheduling (gpufleet/base/spec/features/topology.py, topology_checks.py; facts in
    # gpufleet/base/catalog/topology.yaml).

    def topology_levels(self, pool: Any) -> list[str]:
        """The topology node labels the platform gives a pool's machines, coarsest first. Default: none (the pool's
        Topology is then the hostname, and the NVLink domain where there is one)."""
        return []

    def nvlink_topology_levels(self, levels: list[str], clique: str) -> list[str]:
        """An NVLink pool's default topology levels above the hostname: where its NVLink domain (`clique`, the
        nvidia.com/gpu.clique label) sits among the platform's `levels` (coarsest first). Default: below all of them
        (they nest it: a k3s stack's declared rack is the NVL72 rack)."""
        return levels + [clique]

    def topology_domain_nodes(self, pool: Any, level: str, nvlink: Any) -> Optional[int]:
        """The most nodes one domain of a topology level can hold in this pool, where the platform says (`nvlink`: the
        pool's NVLink system, or None). Default: None (not known: the pool's size bounds it)."""
        return None

    def topology_problems(self, stack: str, at: str, pool: Any) -> list:
        """Why a pool listed in kueue.topology.pools without levels has no topology to schedule by (`at`: its key
        path). Default: none."""
        return []

    def topology_warnings(self, stack: str, at: str, pool: Any) -> list:
        """Advisory findings on a pool listed in kueue.topology.pools without levels. Default: none."""
        return []

    # Serving (gpufleet/base/spec/features/serving.py, components/serving/).

    gateway_classes: tuple[str, ...] = ()
    """The GatewayClasses that can carry the serving path here; the first that fits `serving.gateway.exposure` is what
    `className: auto` picks. Default: none (serving is refused; `auto` then names gpufleet's Envoy Gateway class)."""
    inference_extension_releases: tuple[str, ...] = ()
    """The Inference Extension releases the platform's controller of the classes that route to an InferencePool
    (serving.INFERENCE_POOL_CLASSES) routes for. Default: none."""
    inference_pool_provider: str = "none"
    """The endpoint picker chart's `provider.name` (its platform-specific objects) when a class routes to an
    InferencePool. Default: `none`."""
    inference_pool_monitoring: bool = False
    """Whether the endpoint picker chart's provider monitors the endpoint picker's metrics (the flow-control queue KEDA
    wakes a model at zero on) when a model server scales. Default: no."""

    def gateway_service(self, external: bool) -> dict:
        """The Service Envoy Gateway publishes the serving Gateway through (its EnvoyProxy's
        `provider.kubernetes.envoyService`: `type` and `annotations`), internal or `external`. Default: ClusterIP when
        internal (reachable inside the cluster only: no load balancer, no port on the nodes), LoadBalancer when
        external."""
        return {"type": "LoadBalancer"} if external else {"type": "ClusterIP"}

    def gateway_problems(self, stack: str, spec: Any, gateway_class: str) -> list:
        """What the platform refuses about the serving Gateway's class (its minimum Kubernetes version, say).
        Default: none."""
        return []

    serving_rdma_fabric: Optional[str] = None
    """How a model server's pods on an RDMA pool (`rdma: true`) get the pool's interfaces (components/serving/layer.py
    `rdma_pod`): `efa` (the node's EFA devices, NodeTraits.rdma_devices), `network-operator` (the Network Operator's
    RDMA device and the pool's secondary network), `infiniband` (the RDMA shared device plugin's InfiniBand resource,
    no secondary network), `own` (what `serving_rdma_pod` returns). Default: None, nothing (docs/inference.md)."""

    def serving_rdma_pod(self, spec: Any, pool: Any) -> Optional[dict]:
        """With `serving_rdma_fabric: own`: what a model server's pod on the RDMA pool carries (ModelServerArgs.rdma:
        annotations, env, mounts, volumes, sidecars, a command prefix). Default: None."""
        return None

    def serving_rdma_needs(self, pool: Any) -> tuple[tuple[str, ...], bool, str]:
        """(Linux capabilities, privileged, why) a model server's pod on the RDMA pool must be granted by the stack
        (`serving.models[i].rdma`, with a reason) for the pool's interfaces to work. Default: nothing needed."""
        return (), False, ""

    # GPU sharing, AMD pools, RDMA NICs and storage (gpufleet/base/spec/features/{sharing,amd,sriov}_checks.py).

    amd_gpus: bool = False
    """Whether AMD Instinct pools run here (the AMD GPU Operator, `gpufleet:amdGpuOperator`, ROCm versions).
    Default: no."""
    declared_gpus: bool = False
    """Whether a pool's GPU model is what the stack declares (`gpu`), so a pool without one has nothing to share.
    Default: no (the GPU comes from the pool's cloud shape; an unknown shape is reported where it is read)."""
    stack_sharing: bool = True
    """Whether pools share GPUs through the stack's `sharing` block (the GPU Operator's device plugin, whose limits
    are checked). Default: yes; no where the platform's own sharing settings are used instead."""
    nic_rdma: bool = False
    """Whether RDMA runs over NICs the NVIDIA Network Operator configures, set by a pool's `rdmaNetwork`. Default: no
    (cloud pools get their RDMA NICs from the instance type)."""
    sriov_rdma: bool = False
    """Whether SR-IOV RDMA pools (`rdmaNetwork.network: sriov`) are checked here. Default: no."""
    local_path_storage: bool = False
    """Whether the platform has a local-path provisioner `storage.localPath` configures. Default: no (cloud
    platforms bring their own block storage class)."""

    def local_path_problems(self, stack: str, spec: Any) -> list:
        """What the platform refuses about `storage.localPath` (asked only where `local_path_storage`). Default:
        none."""
        return []

    # Admission (gpufleet/base/spec/checks/admission_checks.py).

    def admission_problems(self, stack: str, spec: Any) -> list:
        """Rules the platform's own controllers enforce on the objects gpufleet emits beyond their schemas. Default:
        none."""
        return []

    # Catalog and compatibility (gpufleet/base/spec/checks/{catalog_checks,compat_checks}.py).

    def catalog_problems(self, stack: str, spec: Any, config: dict) -> list:
        """A pool's cloud shape against the catalog's offerings and sale options (`config`: the stack's raw config,
        for the provider's region). Default: none (nothing recorded to judge by)."""
        return []

    def catalog_drivers(self, spec: Any) -> Optional[list[tuple[str, str]]]:
        """(what, driver version) of the drivers the platform's images install on the stack's GPU nodes, where the
        catalog knows them. Default: None (the nodes run the GPU Operator's driver)."""
        return None

    def driver_warnings(self, stack: str, spec: Any) -> list:
        """Advisory: a platform-installed driver the catalog cannot judge. Default: none."""
        return []

    def capacity_warnings(self, stack: str, spec: Any) -> list:
        """Advisory: a pool's capacity the platform normally sells otherwise (through reservations, say). Default:
        none."""
        return []

    def driver_floor_problems(self, stack: str, spec: Any, i: int, pool: Any, floor: int) -> Optional[list]:
        """Pool `i`'s driver against its GPU's minimum driver branch `floor`, where the platform installs the driver.
        Default: None (the GPU Operator's driver is judged)."""
        return None

    def compat_problems(self, stack: str, spec: Any) -> list:
        """Machine compatibility checks only this platform has (the disks its machine series attach). Default:
        none."""
        return []

    def compat_warnings(self, stack: str, spec: Any) -> list:
        """Advisory machine compatibility findings only this platform has. Default: none."""
        return []
