"""Checks of DRA pools (`nodePools[*].allocation: dra`), multi-node NVLink pools and `gpufleet:dra`.

Facts (with sources) in gpufleet/base/catalog/dra.yaml: resource.k8s.io/v1 is served from Kubernetes 1.34; NVIDIA's DRA
driver for GPUs (the pinned release) needs driver >= 565 for GPUs and >= 570.158.01 for ComputeDomains; GB200 machines come in NVLink
domains (an EC2 UltraServer of 9 or 18 p6e-gb200.36xlarge, a GKE A4X sub-block of 18 a4x-highgpu-4g, an NVL72 rack of
18 compute trays).

What differs by platform is asked of its scheduling traits: the machine behind a pool's NVLink system
(`nvlink_machine`, `machine_key`), the keys that size a pool (`size_keys`), the driver its images ship
(`preinstalled_driver`) and the checks only it has (`dra_problems`: GKE's DRA pool settings and workload policy, EKS's
Arm AMIs)."""

from __future__ import annotations

from typing import Any, Optional

from gpufleet.base import catalog, platforms
from gpufleet.base.catalog import dra as dra_facts
from gpufleet.base.spec.errors import Problem
from gpufleet.base.spec.features.dra import channel_pools
from gpufleet.base.spec.shape import shaped

NS = "gpufleet"
DRA_SHARING = ("none", "mig")


def _minor(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split(".")[:2])


def _traits(platform: str):
    return platforms.get(platform).scheduling


def machine_of(pool: Any, platform: str) -> Optional[str]:
    """What decides a pool's NVLink system (the platform's `nvlink_machine`: an instance type, a machine type, the
    hosts' GPU model)."""
    return _traits(platform).nvlink_machine(pool)


def nvlink(pool: Any, platform: str) -> Optional[dra_facts.NvlinkSystem]:
    """The multi-node NVLink system of a pool's machines (None: NVLink stays inside one machine)."""
    return dra_facts.nvlink_system(platform, machine_of(pool, platform))


def known_driver(spec: Any, platform: str, pool: Any) -> Optional[str]:
    """The NVIDIA driver a pool's nodes run, where the stack or the catalog says (None: not known offline)."""
    op = spec.gpu_operator
    if op.driver.source == "operator" or op.driver.version:
        return op.driver_version()
    return _traits(platform).preinstalled_driver(spec, pool)


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
    problems += _driver_root_checks(stack, spec, bool(pools))
    problems += _compute_domain_checks(stack, spec)
    problems += _channel_pool_checks(stack, spec)
    problems += _queue_checks(stack, spec)
    problems += _sizing_checks(stack, spec, errors=True)
    problems += _placement_checks(stack, spec)
    problems += _unsourced_checks(stack, spec)
    problems += _traits(platform).dra_problems(stack, spec)
    return problems


# Where the driver container puts the driver's files on the host: "If the NVIDIA GPU driver is managed using the NVIDIA
# GPU Driver Container, this is typically /run/nvidia/driver. For driver installed directly on a host, a value of `/`
# is used" (the DRA driver chart's values.yaml `nvidiaDriverRoot`, ../shared/reference/dra-driver-nvidia-gpu/
# values-v0.4.1.yaml; the GPU Operator's own `driver.hostPaths.driverInstallDir` default, /run/nvidia/driver).
OPERATOR_DRIVER_ROOT = "/run/nvidia/driver"


def _driver_root_checks(stack: str, spec: Any, dra: bool) -> list[Problem]:
    """A stated `dra.driverRoot` where the driver is not: the kubelet plugin finds no libnvidia-ml and publishes no
    device. Without it gpufleet picks the root from who installs the driver (components/gpu_stack/dra_driver.py)."""
    root = spec.dra.driver_root
    if root is None or not (dra or spec.dra.compute_domains):
        return []
    op = spec.gpu_operator
    at = f"{NS}:dra.driverRoot"
    if platforms.of(spec).addons.platform_driver(spec):
        return []  # the platform installs the driver where its own fact says (GKE: /home/kubernetes/bin/nvidia)
    if op.enabled and op.driver.source == "operator" and root.rstrip("/") != OPERATOR_DRIVER_ROOT:
        return [Problem(stack, at, f"the GPU Operator installs the driver (gpuOperator.driver.source: operator), whose "
                        f"container puts it under {OPERATOR_DRIVER_ROOT} on the host (the DRA driver chart's "
                        f"nvidiaDriverRoot): use {OPERATOR_DRIVER_ROOT}, or leave driverRoot out", root)]
    if op.driver.source == "preinstalled" and root.rstrip("/") == OPERATOR_DRIVER_ROOT:
        return [Problem(stack, at, f"the driver is preinstalled on the hosts, and {OPERATOR_DRIVER_ROOT} exists only "
                        "where the GPU Operator's driver container runs: use the hosts' driver root (/ for a driver "
                        "installed on the host), or leave driverRoot out", root)]
    return []


def _placement_checks(stack: str, spec: Any) -> list[Problem]:
    """The reservation a cloud requires for one NVLink domain (catalog dra.yaml `placement`). EKS: UltraServers are
    sold only through EC2 Capacity Blocks for ML (eks_ultraserver, pcs_ultraserver), so the pool must be reserved on a
    Capacity Block. (GKE's workload policy: its `dra_problems`, gpufleet/base/platforms/gke/scheduling.py.)"""
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
    return problems


def _unsourced_checks(stack: str, spec: Any) -> list[Problem]:
    """Multi-node NVLink machines no source read sizes (catalog dra.yaml `unsourced`): refused with the reason, not
    sized by a guess."""
    platform = spec.cluster.platform
    key = _traits(platform).machine_key
    problems = []
    for i, pool in enumerate(spec.node_pools):
        machine = machine_of(pool, platform)
        why = dra_facts.unsourced(platform, machine)
        if why:
            problems.append(Problem(stack, f"{NS}:nodePools[{i}].{key}", f"gpufleet cannot size {machine}: {why}. "
                                    "Known multi-node NVLink machines are in gpufleet/base/catalog/dra.yaml", machine))
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


def _channel_pool_checks(stack: str, spec: Any) -> list[Problem]:
    """A ComputeDomain on a device-plugin pool is Google's A4X design (GPUs from the device plugin, IMEX channels from
    the DRA driver with its GPU allocation off: gpufleet/base/spec/features/dra.py channel_pools). The driver's chart
    runs one kubelet plugin for GPUs and channels, so a stack runs either that design or DRA pools, not both: with
    GPUs on, the plugin would publish the device-plugin pools' GPUs twice (the chart refuses GPU resources beside a
    device plugin, templates/validation.yaml at the pinned release)."""
    channels = channel_pools(spec)
    dra = [p.name for _, p in dra_pools(spec)]
    if not (channels and dra):
        return []
    j = next(j for j, cd in enumerate(spec.dra.compute_domains) if cd.pool in channels)
    return [Problem(stack, f"{NS}:dra.computeDomains[{j}].pool", f"pool '{spec.dra.compute_domains[j].pool}' uses the "
                    f"device plugin while the stack also has DRA pools ({', '.join(dra)}): NVIDIA's DRA driver then "
                    "allocates GPUs and would publish this pool's GPUs beside the device plugin. Put the ComputeDomain "
                    "on a DRA pool, or set allocation: device-plugin on every pool (GPU allocation off, channels only)",
                    spec.dra.compute_domains[j].pool)]


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
        fields = _traits(platform).size_keys(pool)
        if pool.reservation is not None and pool.reservation.instance_count:
            fields.append(("reservation.instanceCount", pool.reservation.instance_count))
        for field, n in fields:
            if n % system.unit:
                whole = (n // system.unit + 1) * system.unit
                problems.append(Problem(stack, f"{at}.{field}", f"{n} machines of {system.machine} is a partial NVLink domain "
                                        f"({system.describe()}): size the pool in whole domains, e.g. {whole}", n))
    return problems


def warnings(stack: str, spec: Any) -> list[Problem]:
    """Advisory: partial NVLink domains where they run, and NVLink pools left on the device plugin (no IMEX channels)."""
    platform = spec.cluster.platform
    out = _sizing_checks(stack, spec, errors=False)
    channels = channel_pools(spec)
    for i, pool in enumerate(spec.node_pools):
        if pool.allocation != "dra" and pool.name not in channels and nvlink(pool, platform) is not None:
            out.append(Problem(stack, f"{NS}:nodePools[{i}].allocation", "multi-node NVLink machines on the device plugin: "
                               "jobs get no IMEX channels across machines (add a ComputeDomain on the pool, "
                               "gpufleet:dra.computeDomains, or set allocation: dra)",
                               pool.allocation))
    return out
