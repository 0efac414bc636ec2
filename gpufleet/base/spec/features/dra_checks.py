"""Checks of DRA pools (`nodePools[*].allocation: dra`), multi-node NVLink pools and `gpufleet:dra`.

Facts (with sources) in gpufleet/base/catalog/dra.yaml: resource.k8s.io/v1 is served from Kubernetes 1.34; NVIDIA's DRA
driver for GPUs (the pinned release) needs driver >= 565 for GPUs and >= 570.158.01 for ComputeDomains; GB200 machines come in NVLink
domains (an EC2 UltraServer of 9 or 18 p6e-gb200.36xlarge, a GKE A4X sub-block of 18 a4x-highgpu-4g, an NVL72 rack of
18 compute trays)."""

from __future__ import annotations

from typing import Any, Optional

from gpufleet.base import catalog
from gpufleet.base.catalog import dra as dra_facts
from gpufleet.base.spec.errors import Problem
from gpufleet.base.spec.shape import shaped

NS = "gpufleet"
DRA_SHARING = ("none", "mig")


def _minor(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split(".")[:2])


def machine_of(pool: Any, platform: str) -> Optional[str]:
    """What decides a pool's NVLink system: the EC2 instance type, the GCE machine type, the k3s hosts' GPU model."""
    if platform == "eks":
        types = list(pool.instance_types) or ([pool.instance_type] if pool.instance_type else [])
        return types[0] if types else None
    if platform == "gke":
        return pool.machine_type
    return pool.gpu


def nvlink(pool: Any, platform: str) -> Optional[dra_facts.NvlinkSystem]:
    """The multi-node NVLink system of a pool's machines (None: NVLink stays inside one machine)."""
    return dra_facts.nvlink_system(platform, machine_of(pool, platform))


def pool_size(pool: Any, platform: str) -> tuple[int, int]:
    """(minimum, maximum) nodes: a k3s pool is its hosts."""
    if platform == "k3s":
        return len(pool.hosts), len(pool.hosts)
    return pool.min_nodes, pool.max_nodes


def known_driver(spec: Any, platform: str, pool: Any) -> Optional[str]:
    """The NVIDIA driver a pool's nodes run, where the stack or the catalog says (None: not known offline)."""
    op = spec.gpu_operator
    if op.driver.source == "operator" or op.driver.version:
        return op.driver_version()
    if platform == "eks":
        from gpufleet.base.catalog import aws

        ami = aws.amis().get(pool.ami)
        return ami.driver_version if ami else None
    return None


def dra_pools(spec: Any) -> list[tuple[int, Any]]:
    return [(i, p) for i, p in enumerate(spec.node_pools) if p.allocation == "dra"]


def check(stack: str, spec: Any) -> list[Problem]:
    platform = spec.cluster.platform
    problems: list[Problem] = []
    pools = dra_pools(spec)
    if pools or spec.dra.compute_domains:
        minimum = dra_facts.kubernetes_min()
        version = spec.cluster.kubernetes_version
        if _minor(version) < _minor(minimum):
            problems.append(Problem(
                stack, f"{NS}:cluster.kubernetesVersion",
                f"DRA pools ({', '.join(p.name for _, p in pools) or 'gpufleet:dra'}) need resource.k8s.io/v1, served from "
                f"Kubernetes {minimum} (NVIDIA's DRA driver for GPUs {dra_facts_driver_release()} needs "
                f"{dra_facts.kubernetes_min_patch()} or later); allowed: {minimum} or newer", version))
    for i, pool in pools:
        at = f"{NS}:nodePools[{i}]"
        shape = shaped(pool, platform)
        model = catalog.gpu_models().get(shape.gpu or "")
        if model is not None and model.amd:
            problems.append(Problem(stack, f"{at}.allocation", "NVIDIA's DRA driver serves NVIDIA GPUs only; AMD pools keep "
                                    "allocation: device-plugin", pool.allocation))
        if pool.sharing.mode not in DRA_SHARING:
            problems.append(Problem(stack, f"{at}.sharing.mode", "DRA pools share GPUs through MIG or not at all: time-slicing "
                                    "and MPS are alpha feature gates of the DRA driver, off by default (allowed: "
                                    f"{', '.join(DRA_SHARING)})", pool.sharing.mode))
        driver = known_driver(spec, platform, pool)
        floor = dra_facts.driver_min("gpus")
        if driver and catalog.parse_version(driver) < catalog.parse_version(floor):
            problems.append(Problem(stack, f"{at}.allocation", f"the nodes' NVIDIA driver {driver} is older than {floor}, "
                                    "the DRA driver for GPUs' minimum; pick a newer driver (gpufleet:gpuOperator.driver)", "dra"))
    problems += _compute_domain_checks(stack, spec)
    problems += _gke_checks(stack, spec)
    problems += _queue_checks(stack, spec)
    problems += _sizing_checks(stack, spec, errors=True)
    problems += _placement_checks(stack, spec)
    problems += _unsourced_checks(stack, spec)
    problems += _arch_checks(stack, spec)
    return problems


def _placement_checks(stack: str, spec: Any) -> list[Problem]:
    """The placement each cloud requires for one NVLink domain (catalog dra.yaml `placement`). EKS: UltraServers are
    sold only through EC2 Capacity Blocks for ML (eks_ultraserver, pcs_ultraserver), so the pool must be reserved on a
    Capacity Block. GKE: A4X and A4X Max node pools need a workload policy (HIGH_THROUGHPUT, acceleratorTopology 1x72:
    gce_workload_policy), named by the pool's COMPACT placement policy, which takes one zone and no blue-green upgrade
    or queued provisioning (cluster_toolkit_a4x: gke-node-pool main.tf lines 384-393)."""
    platform = spec.cluster.platform
    problems = []
    for i, pool in enumerate(spec.node_pools):
        system = nvlink(pool, platform)
        if system is None:
            continue
        at = f"{NS}:nodePools[{i}]"
        if system.reservation == "capacity-block":
            kind = pool.reservation.type if pool.capacity == "reserved" and pool.reservation is not None else None
            if kind != "capacity-block":
                problems.append(Problem(stack, f"{at}.reservation.type" if kind else f"{at}.capacity",
                                        f"{system.machine} is sold only inside UltraServers through EC2 Capacity Blocks "
                                        "for ML: set capacity: reserved with reservation {type: capacity-block, id: cr-..., "
                                        "instanceCount: a whole UltraServer}", kind or pool.capacity))
        wp = system.workload_policy
        if wp and platform == "gke":
            from gpufleet.base.spec.platforms.gke import GkePoolSpec, pool_zones

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


def _unsourced_checks(stack: str, spec: Any) -> list[Problem]:
    """Multi-node NVLink machines no source read sizes (catalog dra.yaml `unsourced`): refused with the reason, not
    sized by a guess. A4X Max DRA pools on GKE's own GPU stack: no pinned Google driver installer selects them."""
    from gpufleet.base import versions

    platform = spec.cluster.platform
    problems = []
    for i, pool in enumerate(spec.node_pools):
        machine = machine_of(pool, platform)
        why = dra_facts.unsourced(platform, machine)
        if why:
            key = "instanceType" if platform == "eks" else ("machineType" if platform == "gke" else "gpu")
            problems.append(Problem(stack, f"{NS}:nodePools[{i}].{key}", f"gpufleet cannot size {machine}: {why}. "
                                    "Known multi-node NVLink machines are in gpufleet/base/catalog/dra.yaml", machine))
        system = nvlink(pool, platform)
        if (platform == "gke" and pool.allocation == "dra" and spec.cluster.gke.gpu_stack == "gke" and system is not None
                and system.gpu == "GB300"):
            problems.append(Problem(stack, f"{NS}:nodePools[{i}].machineType", f"no pinned Google driver installer "
                                    f"selects {machine}: the A4X one's nodeAffinity lists {', '.join(versions.GKE_A4X_DRIVER_INSTALLER_MACHINES)} "
                                    "only, and no source read says the default one supports GB300; use cluster.gke.gpuStack: "
                                    "operator", machine))
    return problems


# GKE "Prepare GKE infrastructure for DRA workloads" (cloud.google.com/kubernetes-engine/docs/how-to/set-up-dra),
# Limitations: automatic GPU driver installation, time-sharing GPUs, multi-instance GPUs and MPS are not supported with DRA.
_GKE_DRA_REFUSED = {
    "gpu_driver_version": ("gpuDriverVersion", "GKE's driver installation is disabled on DRA pools (GKE set-up-dra: "
                           "'Automatic GPU driver installation isn't supported with DRA'); the driver comes from COS's "
                           "driver-installer DaemonSet (or the GPU Operator with cluster.gke.gpuStack: operator). Allowed: unset"),
    "gpu_sharing": ("gpuSharing", "GKE's GPU time-sharing and MPS are not supported with DRA (GKE set-up-dra). Allowed: unset"),
    "gpu_partition_size": ("gpuPartitionSize", "GKE's multi-instance GPUs are not supported with DRA (GKE set-up-dra). "
                           "Allowed: unset"),
}


def _gke_checks(stack: str, spec: Any) -> list[Problem]:
    """GKE DRA pools: no GKE driver, sharing or MIG settings; one COS driver installer for all of them."""
    if spec.cluster.platform != "gke":
        return []
    from gpufleet.base import versions

    problems = []
    kinds: dict[bool, list[tuple[int, Any]]] = {}
    for i, pool in dra_pools(spec):
        if pool.gke is not None:
            for field, (key, why) in _GKE_DRA_REFUSED.items():
                if field in pool.gke.model_fields_set and getattr(pool.gke, field) is not None:
                    value = getattr(pool.gke, field)
                    problems.append(Problem(stack, f"{NS}:nodePools[{i}].gke.{key}", why,
                                            value if isinstance(value, str) else value.strategy))
        kinds.setdefault(pool.machine_type in versions.GKE_A4X_DRIVER_INSTALLER_MACHINES, []).append((i, pool))
    if spec.cluster.gke.gpu_stack == "gke" and len(kinds) == 2:
        i, pool = kinds[True][0]
        others = ", ".join(p.name for _, p in kinds[False])
        problems.append(Problem(stack, f"{NS}:nodePools[{i}].machineType", "A4X DRA pools need Google's A4X driver installer, "
                                f"the other DRA pools ({others}) the default one, and both are the DaemonSet "
                                "kube-system/nvidia-driver-installer: put them in separate clusters, or use "
                                "cluster.gke.gpuStack: operator", pool.machine_type))
    return problems


def _queue_checks(stack: str, spec: Any) -> list[Problem]:
    """A Kueue team queueing on a DRA pool claims its GPUs through ResourceClaimTemplates in the team's namespace."""
    kueue = spec.addons.kueue
    if not kueue.enabled:
        return []
    dra = {p.name for _, p in dra_pools(spec)}
    problems = []
    for j, team in enumerate(kueue.teams):
        for k, queue in enumerate(team.queues):
            if queue.pool in dra and team.namespace_name not in spec.dra.namespaces:
                problems.append(Problem(stack, f"{NS}:addons.kueue.teams[{j}].queues[{k}].pool", f"'{queue.pool}' is a DRA "
                                        f"pool, but the team's namespace {team.namespace_name} gets no ResourceClaimTemplates "
                                        f"to claim its GPUs with: add {team.namespace_name} to gpufleet:dra.namespaces "
                                        f"(now: {', '.join(spec.dra.namespaces)})", queue.pool))
    return problems


def dra_facts_driver_release() -> str:
    from gpufleet.base import versions

    return versions.DRA_DRIVER_NVIDIA_GPU.version


def _compute_domain_checks(stack: str, spec: Any) -> list[Problem]:
    platform = spec.cluster.platform
    problems = []
    pools = {p.name: p for p in spec.node_pools}
    seen: set[tuple[str, str]] = set()
    for j, cd in enumerate(spec.dra.compute_domains):
        at = f"{NS}:dra.computeDomains[{j}]"
        if (cd.namespace, cd.name) in seen:
            problems.append(Problem(stack, f"{at}.name", f"duplicate ComputeDomain in namespace {cd.namespace}", cd.name))
        seen.add((cd.namespace, cd.name))
        pool = pools.get(cd.pool)
        if pool is None:
            problems.append(Problem(stack, f"{at}.pool", f"no such pool (allowed: the DRA pools: "
                                    f"{', '.join(p.name for _, p in dra_pools(spec)) or 'none'})", cd.pool))
            continue
        if pool.allocation != "dra":
            problems.append(Problem(stack, f"{at}.pool", f"pool '{cd.pool}' uses the device plugin: ComputeDomains need "
                                    "`allocation: dra` on it", cd.pool))
        system = nvlink(pool, platform)
        if system is None:
            problems.append(Problem(stack, f"{at}.pool", f"pool '{cd.pool}' has no multi-node NVLink (IMEX channels join the "
                                    "GPUs of several machines of one NVLink domain, such as GB200 NVL72): known systems are in "
                                    "gpufleet/base/catalog/dra.yaml", cd.pool))
        elif cd.num_nodes > system.largest:
            problems.append(Problem(stack, f"{at}.numNodes", f"more nodes than one NVLink domain of {system.machine} holds "
                                    f"({system.largest})", cd.num_nodes))
        driver = known_driver(spec, platform, pool)
        floor = dra_facts.driver_min("compute_domains")
        if driver and catalog.parse_version(driver) < catalog.parse_version(floor):
            problems.append(Problem(stack, f"{at}.pool", f"the nodes of '{cd.pool}' run NVIDIA driver {driver}; ComputeDomains "
                                    f"need {floor} or later (IMEXDaemonsWithDNSNames); pick a newer driver "
                                    "(gpufleet:gpuOperator.driver)", cd.pool))
    return problems


def _sizing_checks(stack: str, spec: Any, errors: bool) -> list[Problem]:
    """A pool of multi-node NVLink machines is sized in whole NVLink domains: errors where the vendor sells only whole
    domains (`rule: error`), warnings where a partial domain runs (`rule: warning`)."""
    platform = spec.cluster.platform
    problems = []
    for i, pool in enumerate(spec.node_pools):
        system = nvlink(pool, platform)
        if system is None or (system.rule == "error") != errors:
            continue
        at = f"{NS}:nodePools[{i}]"
        lo, hi = pool_size(pool, platform)
        fields = [("hosts", hi)] if platform == "k3s" else [("minNodes", lo), ("maxNodes", hi)]
        if pool.reservation is not None and pool.reservation.instance_count:
            fields.append(("reservation.instanceCount", pool.reservation.instance_count))
        for field, n in fields:
            if n % system.unit:
                whole = (n // system.unit + 1) * system.unit
                problems.append(Problem(stack, f"{at}.{field}", f"{n} machines of {system.machine} is a partial NVLink domain "
                                        f"({system.describe()}): size the pool in whole domains, e.g. {whole}", n))
    return problems


def _arch_checks(stack: str, spec: Any) -> list[Problem]:
    if spec.cluster.platform != "eks":
        return []
    from gpufleet.base import versions
    from gpufleet.base.catalog import aws

    problems = []
    for i, pool in enumerate(spec.node_pools):
        types = [t for t in (list(pool.instance_types) or [pool.instance_type]) if t in aws.instance_types()]
        if any(aws.instance_type(t).arch == "arm64" for t in types) and pool.ami not in versions.EKS_ARM_AMIS:
            problems.append(Problem(stack, f"{NS}:nodePools[{i}].ami", f"{', '.join(types)} run on Arm: gpufleet knows the "
                                    f"arm64 variant of {', '.join(versions.EKS_ARM_AMIS)} only", pool.ami))
    return problems


def warnings(stack: str, spec: Any) -> list[Problem]:
    """Advisory: partial NVLink domains where they run, and NVLink pools left on the device plugin (no IMEX channels)."""
    platform = spec.cluster.platform
    out = _sizing_checks(stack, spec, errors=False)
    for i, pool in enumerate(spec.node_pools):
        if pool.allocation != "dra" and nvlink(pool, platform) is not None:
            out.append(Problem(stack, f"{NS}:nodePools[{i}].allocation", "multi-node NVLink machines on the device plugin: "
                               "jobs get no IMEX channels across machines (set allocation: dra and a ComputeDomain)",
                               pool.allocation))
    return out
