"""gke: scheduling traits (gpufleet/base/platforms/contract/scheduling.py says what each one means).

GKE names a pool's machine by its machine type, labels A3/A4-class nodes with gce-topology levels, brings its own
Gateway controller for serving, shares GPUs with its own settings (`gke.gpuSharing`) and, with `cluster.gke.gpuStack:
gke`, installs the NVIDIA driver itself (the branch it picks is in gpufleet/base/catalog/gcp_machines.yaml).
"""

from __future__ import annotations

from typing import Any, Optional

from gpufleet.base import versions
from gpufleet.base.catalog import dra as dra_facts
from gpufleet.base.catalog import gcp, gcp_families, offerings
from gpufleet.base.catalog import topology as topology_facts
from gpufleet.base.platforms.contract.scheduling import SchedulingTraits
from gpufleet.base.platforms.gke import gpudirect_pods
from gpufleet.base.spec.errors import Problem
from gpufleet.base.spec.features.serving import GKE_INFERENCE_POOL_CLASSES
from gpufleet.base.spec.platforms.gke import GkePoolSpec, driver_branch_for, pool_zones

NS = "gpufleet"

# The node label of GKE's finest topology level, one machine: an NVLink domain (an A4X sub-block) spans several
# machines, so the clique sits above it (gpufleet/base/catalog/topology.yaml).
HOST_LABEL = "cloud.google.com/gce-topology-host"
SUBBLOCK_LABEL = "cloud.google.com/gce-topology-subblock"

# GKE's Inference Gateway classes (serving.GKE_INFERENCE_POOL_CLASSES; gpufleet/base/spec/features/serving.py has the
# sources). GKE installs the GA Gateway API and Inference Extension CRDs itself from 1.34.0-gke.1626000 ("Deploy GKE
# Inference Gateway", cloud.google.com/kubernetes-engine/docs/how-to/deploy-gke-inference-gateway): gpufleet refuses
# GKE minors below 1.34 rather than apply CRDs GKE then owns.
INFERENCE_MIN_MINOR = (1, 34)
# Which Inference Extension releases GKE's managed controller routes for: InferencePool v1 (GA in the extension's
# v1.0.0) from GKE 1.34.0-gke.1626000, which installs those CRDs (docs/inference.md, "Version alignment").
INFERENCE_EXTENSION_RELEASES = ("v1.0.0", "v1.1.0", "v1.2.0", "v1.3.0", "v1.4.0", versions.INFERENCE_EXTENSION)

# GKE "Prepare GKE infrastructure for DRA workloads" (cloud.google.com/kubernetes-engine/docs/how-to/set-up-dra),
# Limitations: automatic GPU driver installation, time-sharing GPUs, multi-instance GPUs and MPS are not supported with DRA.
DRA_REFUSED = {
    "gpu_driver_version": ("gpuDriverVersion", "GKE's driver installation is disabled on DRA pools (GKE set-up-dra: "
                           "'Automatic GPU driver installation isn't supported with DRA'); the driver comes from COS's "
                           "driver-installer DaemonSet (or the GPU Operator with cluster.gke.gpuStack: operator). Allowed: unset"),
    "gpu_sharing": ("gpuSharing", "GKE's GPU time-sharing and MPS are not supported with DRA (GKE set-up-dra). Allowed: unset"),
    "gpu_partition_size": ("gpuPartitionSize", "GKE's multi-instance GPUs are not supported with DRA (GKE set-up-dra). "
                           "Allowed: unset"),
}


def installs_driver(spec: Any) -> bool:
    """Whether GKE installs the NVIDIA driver (cluster.gke.gpuStack: gke) rather than the GPU Operator."""
    return spec.cluster.gke is not None and spec.cluster.gke.gpu_stack == "gke"


def _minor(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.removeprefix("v").split(".")[:2])


class GkeScheduling(SchedulingTraits):
    machine_key = "machineType"
    stack_sharing = False  # GKE shares GPUs with gke.gpuSharing (at most 48 MPS clients there too); `sharing` is refused
    gateway_classes = GKE_INFERENCE_POOL_CLASSES  # auto: gke-l7-rilb (internal), external-managed with exposure: external
    inference_extension_releases = INFERENCE_EXTENSION_RELEASES
    inference_pool_provider = "gke"
    # The endpoint picker chart's GKE monitoring: a metrics-reader token and a PodMonitoring for the picker's metrics
    # (the router library's templates/_gke.yaml at versions.ENDPOINT_PICKER: provider gke maps to monitoring provider
    # gmp), read by Managed Service for Prometheus.
    inference_pool_monitoring = True
    # A model server on a GPUDirect pool gets the pool's NICs as GKE's manifests for the machine type give them
    # (gpufleet/base/platforms/gke/gpudirect_pods.py, with the sources).
    serving_rdma_fabric = "own"

    def serving_rdma_pod(self, spec: Any, pool: Any) -> Optional[dict]:
        machine = gcp.machines().get(pool.machine_type or "")
        direct = machine.gpudirect if machine else None
        if direct is None:
            return None
        return gpudirect_pods.serving_pod(pool.name, direct.kind, direct.networks, direct.rdma_subnets,
                                          machine.fixed_count or 8)

    def serving_rdma_needs(self, pool: Any) -> tuple[tuple[str, ...], bool, str]:
        machine = gcp.machines().get(pool.machine_type or "")
        if machine is None or machine.gpudirect is None:
            return (), False, ""
        needs = gpudirect_pods.needs(machine.gpudirect.kind, machine.name)
        return needs.capabilities, needs.privileged, needs.why

    def nvlink_machine(self, pool: Any) -> Optional[str]:
        return pool.machine_type

    # DRA and NVLink

    def dra_problems(self, stack: str, spec: Any) -> list:
        return _dra_refused(stack, spec) + _workload_policy(stack, spec) + _no_driver_installer(stack, spec)

    # Topology

    def topology_levels(self, pool: Any) -> list[str]:
        labelled = pool.machine_type and topology_facts.gke_labelled(pool.machine_type)
        return topology_facts.gke_levels() if labelled else []

    def nvlink_topology_levels(self, levels: list[str], clique: str) -> list[str]:
        """The clique spans machines: above GKE's per-host level, below block and sub-block (a GKE A4X sub-block is
        one NVLink domain)."""
        return [lv for lv in levels if lv != HOST_LABEL] + [clique] + [lv for lv in levels if lv == HOST_LABEL]

    def topology_domain_nodes(self, pool: Any, level: str, nvlink: Any) -> Optional[int]:
        if level == SUBBLOCK_LABEL and nvlink is not None:
            return nvlink.largest  # an A4X sub-block is one NVLink domain (catalog dra.yaml gcp_subblock)
        return None

    def topology_warnings(self, stack: str, at: str, pool: Any) -> list:
        """Machine families Google does not document the labels for, and TAS pools outside a reservation (Google: TAS
        works best on reserved capacity)."""
        if not (pool.machine_type and topology_facts.gke_labelled(pool.machine_type)):
            return [Problem(stack, at, f"Google documents the gce-topology-block/-subblock/-host labels on "
                            f"{', '.join(topology_facts.gke_families())} nodes, not on {pool.machine_type}: the topology "
                            "is then the hostname only; name levels your nodes carry (levels)", pool.name)]
        if pool.capacity != "reserved":
            return [Problem(stack, at, f"a {pool.capacity} pool: Google says TAS works best on reserved capacity "
                            "(Spot and flex-start VMs are less likely to sit close together); use capacity: reserved",
                            pool.name)]
        return []

    # Serving

    def gateway_problems(self, stack: str, spec: Any, gateway_class: str) -> list:
        if gateway_class in GKE_INFERENCE_POOL_CLASSES and _minor(spec.cluster.kubernetes_version) < INFERENCE_MIN_MINOR:
            return [Problem(stack, f"{NS}:cluster.kubernetesVersion", f"GKE routes to an InferencePool with "
                            f"{gateway_class} from 1.34.0-gke.1626000 (GKE installs its CRDs there): use 1.34 or later",
                            spec.cluster.kubernetes_version)]
        return []

    # Catalog and compatibility

    def catalog_problems(self, stack: str, spec: Any, config: dict) -> list:
        return _offering_problems(stack, spec)

    def catalog_drivers(self, spec: Any) -> Optional[list[tuple[str, str]]]:
        if not installs_driver(spec):
            return None
        found = []
        for pool in spec.node_pools:
            branch = driver_branch_for(spec, pool)
            if branch is not None:
                version = gcp.gke_driver_floor(branch)
                found.append((f"pool '{pool.name}': GKE's driver {version} (branch {branch})", version))
        return found

    def driver_warnings(self, stack: str, spec: Any) -> list:
        """GKE's driver on a GKE version whose DEFAULT/LATEST branch the catalog does not record: neither CUDA
        alignment nor the driver branch's support calendar can be judged (said, not guessed)."""
        if not installs_driver(spec):
            return []
        out = []
        version = spec.cluster.kubernetes_version
        for i, pool in enumerate(spec.node_pools):
            if driver_branch_for(spec, pool) is None:
                choice = pool.gke.gpu_driver_version if pool.gke else "DEFAULT"
                out.append(Problem(
                    stack, f"{NS}:nodePools[{i}].gke.gpuDriverVersion",
                    f"the catalog does not record which driver branch GKE {version} installs for {choice} "
                    "(gcp_machines.yaml gke_driver_branches), so neither workloads.cudaVersions nor the branch's support "
                    "calendar is checked against it",
                    choice,
                ))
        return out

    def capacity_warnings(self, stack: str, spec: Any) -> list:
        """A3 Ultra / A4 on-demand without a specific reservation."""
        out = []
        for i, pool in enumerate(spec.node_pools):
            machine = gcp.machines().get(pool.machine_type or "")
            if not machine or pool.capacity != "on-demand" or not machine.on_demand_needs_reservation:
                continue
            reservation = pool.gke.reservation if pool.gke else None
            if reservation is None or reservation.type != "specific":
                out.append(Problem(
                    stack, f"{NS}:nodePools[{i}].capacity",
                    f"{machine.name} is normally sold through reservations, flex-start or spot "
                    f"({', '.join(machine.sale_options)}), not plain on-demand: name a specific reservation "
                    "(gke.reservation) or use capacity: spot",
                    pool.capacity,
                ))
        return out

    def driver_floor_problems(self, stack: str, spec: Any, i: int, pool: Any, floor: int) -> Optional[list]:
        """With GKE's own installation (gpuStack gke): the branch GKE installs for the pool's gpuDriverVersion
        (DEFAULT or LATEST) on the cluster's minor for that GPU (gcp_machines.yaml gke_driver_branches and
        gke_driver_branches_per_gpu: GKE installs R570 for B200 and R550 for H200 by default on every minor gpufleet
        plans for). A minor whose branch the catalog does not record is not judged (`driver_warnings` says so)."""
        if not installs_driver(spec):
            return None
        version = spec.cluster.kubernetes_version
        choice = pool.gke.gpu_driver_version if pool.gke is not None else "DEFAULT"
        branch = gcp.gke_gpu_driver_branch(version, choice, pool.gpu)
        if branch is None or branch >= floor:
            return []
        ok = [c for c in ("DEFAULT", "LATEST") if (gcp.gke_gpu_driver_branch(version, c, pool.gpu) or 0) >= floor]
        allowed = (f"{' or '.join(ok)}, or " if ok else "") + f"cluster.gke.gpuStack: operator with a driver of branch {floor} or newer"
        return [Problem(stack, f"{NS}:nodePools[{i}].gke.gpuDriverVersion",
                        f"GKE {version} installs driver branch {branch} for {choice} on {pool.gpu} nodes, but {pool.gpu} needs "
                        f"branch {floor} or newer (allowed for pool '{pool.name}': {allowed})", choice)]

    def compat_problems(self, stack: str, spec: Any) -> list:
        """The `gpufleet-rwo` default StorageClass provisions `cluster.gke.storage.defaultDiskType` volumes, which must
        attach to the system pool's nodes, where add-ons with volumes run (gpufleet/base/catalog/gcp_families.yaml:
        E2, N1, G2 and A2 cannot attach Hyperdisk; A3 Ultra and A4 attach Hyperdisk only)."""
        gke = spec.cluster.gke
        if gke is None:
            return []
        disk = gke.storage.default_disk_type
        system = gcp_families.series(gke.system_pool.machine_type)
        if system is not None and disk not in system.disks:
            return [Problem(stack, f"{NS}:cluster.gke.storage.defaultDiskType",
                            f"the system pool's {gke.system_pool.machine_type} ({system.name} series) cannot attach "
                            f"{disk} volumes, so add-ons' volumes on the default StorageClass never attach; use "
                            f"{' or '.join(system.disks)}, or a system pool machine type that attaches {disk} "
                            "(e.g. c3-standard-4, which attaches both)", disk)]
        return []

    def compat_warnings(self, stack: str, spec: Any) -> list:
        """GPU pools that cannot attach the default StorageClass's disk type. A warning, not an error: a cluster may mix
        Hyperdisk-only pools (A3 Ultra, A4) with Persistent-Disk-only ones (N1, G2, A2), and no one disk type serves
        both; pods there need a StorageClass of their own (printed by the plan, JSON key "warnings")."""
        if spec.cluster.gke is None:
            return []
        disk = spec.cluster.gke.storage.default_disk_type
        out = []
        for i, pool in enumerate(spec.node_pools):
            series = gcp_families.series(pool.machine_type or "")
            if series is not None and disk not in series.disks:
                out.append(Problem(stack, f"{NS}:nodePools[{i}].machineType", f"{series.name} nodes cannot attach {disk} "
                                   f"volumes (they attach {', '.join(series.disks)}), the disk type of the default "
                                   "StorageClass (cluster.gke.storage.defaultDiskType): pods on this pool need a "
                                   "StorageClass of that type of their own", pool.machine_type))
        return out


def _dra_pools(spec: Any) -> list[tuple[int, Any]]:
    return [(i, p) for i, p in enumerate(spec.node_pools) if p.allocation == "dra"]


def _nvlink(pool: Any) -> Optional[dra_facts.NvlinkSystem]:
    return dra_facts.nvlink_system("gke", pool.machine_type)


def _dra_refused(stack: str, spec: Any) -> list[Problem]:
    """GKE DRA pools: no GKE driver, sharing or MIG settings; one COS driver installer for all of them."""
    problems = []
    kinds: dict[bool, list[tuple[int, Any]]] = {}
    for i, pool in _dra_pools(spec):
        if pool.gke is not None:
            for field, (key, why) in DRA_REFUSED.items():
                if field in pool.gke.model_fields_set and getattr(pool.gke, field) is not None:
                    value = getattr(pool.gke, field)
                    problems.append(Problem(stack, f"{NS}:nodePools[{i}].gke.{key}", why,
                                            value if isinstance(value, str) else value.strategy))
        kinds.setdefault(pool.machine_type in versions.GKE_A4X_DRIVER_INSTALLER_MACHINES, []).append((i, pool))
    if installs_driver(spec) and len(kinds) == 2:
        i, pool = kinds[True][0]
        others = ", ".join(p.name for _, p in kinds[False])
        problems.append(Problem(stack, f"{NS}:nodePools[{i}].machineType", "A4X DRA pools need Google's A4X driver installer, "
                                f"the other DRA pools ({others}) the default one, and both are the DaemonSet "
                                "kube-system/nvidia-driver-installer: put them in separate clusters, or use "
                                "cluster.gke.gpuStack: operator", pool.machine_type))
    return problems


def _workload_policy(stack: str, spec: Any) -> list[Problem]:
    """A4X and A4X Max node pools need a workload policy (HIGH_THROUGHPUT, acceleratorTopology 1x72:
    gce_workload_policy in catalog dra.yaml `placement`), named by the pool's COMPACT placement policy, which takes one
    zone and no blue-green upgrade or queued provisioning (cluster_toolkit_a4x: gke-node-pool main.tf lines 384-393)."""
    problems = []
    for i, pool in enumerate(spec.node_pools):
        system = _nvlink(pool)
        wp = system.workload_policy if system is not None else None
        if not wp:
            continue
        at = f"{NS}:nodePools[{i}]"
        opts = pool.gke or GkePoolSpec()
        zones = pool_zones(pool, spec.cluster.gke)
        if pool.capacity == "reserved" and pool.reservation is not None and pool.reservation.zone and not zones:
            zones = [pool.reservation.zone]
        topology = wp["accelerator_topology"]
        if len(zones) != 1:
            problems.append(Problem(stack, f"{at}.gke.zones", f"{system.machine} pools are placed by a workload policy "
                                    f"(acceleratorTopology {topology}) through a COMPACT placement policy, which takes "
                                    "exactly one zone: name the zone of the reservation", zones))
        if opts.upgrade.strategy == "blue-green":
            problems.append(Problem(stack, f"{at}.gke.upgrade.strategy", f"{system.machine} pools use a COMPACT "
                                    "placement policy (workload policy), which GKE does not combine with blue-green "
                                    "upgrades; allowed: surge", "blue-green"))
        if pool.capacity == "queued":
            problems.append(Problem(stack, f"{at}.capacity", f"{system.machine} pools use a COMPACT placement policy "
                                    "(workload policy), which does not work with queued provisioning; use capacity: "
                                    "reserved", "queued"))
    return problems


def _no_driver_installer(stack: str, spec: Any) -> list[Problem]:
    """A4X Max DRA pools on GKE's own GPU stack: no pinned Google driver installer selects them."""
    if not installs_driver(spec):
        return []
    problems = []
    for i, pool in _dra_pools(spec):
        system = _nvlink(pool)
        if system is not None and system.gpu == "GB300":
            problems.append(Problem(stack, f"{NS}:nodePools[{i}].machineType", f"no pinned Google driver installer "
                                    f"selects {pool.machine_type}: the A4X one's nodeAffinity lists "
                                    f"{', '.join(versions.GKE_A4X_DRIVER_INSTALLER_MACHINES)} only, and no source read "
                                    "says the default one supports GB300; use cluster.gke.gpuStack: operator",
                                    pool.machine_type))
    return problems


def _offering_problems(stack: str, spec: Any) -> list[Problem]:
    """A pool of a machine type Compute Engine does not sell on-demand, with `capacity: on-demand` (a3-highgpu-1g/2g/4g:
    spot or flex-start only), and a pool in a zone whose recorded offerings do not include its type (only recorded
    zones are judged: gpufleet/base/catalog/offerings.py). Each error names the options that exist."""
    out: list[Problem] = []
    gke = spec.cluster.gke
    for i, pool in enumerate(spec.node_pools):
        machine = gcp.machines().get(pool.machine_type or "")
        at = f"{NS}:nodePools[{i}]"
        if machine and pool.capacity == "on-demand" and not machine.sold_on_demand and not machine.on_demand_needs_reservation:
            out.append(Problem(
                stack, f"{at}.capacity",
                f"{machine.name} is not sold on-demand (Compute Engine sells it as: {', '.join(machine.sale_options)}); "
                f"use capacity: spot" + (", or flex-start provisioning" if "flex-start" in machine.sale_options else ""),
                pool.capacity,
            ))
        if not pool.machine_type:
            continue
        accelerator = machine.accelerator if machine else None
        zones = list((pool.gke.zones if pool.gke else None) or gke.node_zones or ([gke.zone] if gke.zone else []))
        for zone in zones:
            if offerings.gcp_offered_in_zone(pool.machine_type, zone, accelerator) is False:
                where = offerings.gcp_zones_offering(pool.machine_type, accelerator)
                near = [z for z in where if z.startswith(gke.region + "-")]
                listed = ", ".join(near or where) or "none recorded"
                scope = f"zones in {gke.region} that offer it" if near else "zones that offer it"
                out.append(Problem(
                    stack, f"{at}.gke.zones" if pool.gke and pool.gke.zones else f"{NS}:cluster.gke.nodeZones",
                    f"{pool.machine_type}{' with ' + accelerator if accelerator else ''} is not offered in {zone} "
                    f"({offerings.provenance('gcp', zone)}; {scope}: {listed})",
                    zone,
                ))
    return out
