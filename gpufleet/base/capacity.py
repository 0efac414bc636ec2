"""GPU capacity and hourly cost per pool, at minimum and maximum size, and the quota warnings that need them.

Base layer: the spec, the catalog and the sharing rules in, plain figures out. The plan, the review, the
workload components (Kueue quotas) and the spec's own warnings all read capacity from here."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Optional

from gpufleet.base import labels, platforms
from gpufleet.base import sharing as gpu_sharing
from gpufleet.base.spec import NodePoolSpec, Problem, StackSpec
from gpufleet.base.spec.features.addons import NAMESPACE
from gpufleet.base.spec.features import cold_start as cold_start_paths
from gpufleet.base.spec.checks import compat_checks
from gpufleet.base.spec.features import dra_checks
from gpufleet.base.spec.features import topology_checks
from gpufleet.base.spec.features import topology as tas
from gpufleet.base.spec import shape as pool_shape
# billed_as lives beside the capacity kinds it reads (reservation.py); imported here too for its 0.3 callers.
from gpufleet.base.spec.features.reservation import billed_as, capacity_source, committed_nodes  # noqa: F401
from gpufleet.base.catalog.prices import PriceFact

CURRENCY = "USD"


@dataclass(frozen=True)
class PoolCapacity:
    pool: str
    gpu: Optional[str]
    gpus_per_node: int
    min_nodes: int
    max_nodes: int
    capacity_type: str
    advertised: dict[str, int]  # extended resource -> count per node
    price_per_node_hour: Optional[float]
    sharing: str = ""  # how `advertised` comes about (sharing mode, replicas, MIG layout)
    shared: bool = False  # GPUs are time-sliced, MPS-shared or MIG-partitioned
    capacity_source: str = ""  # where the nodes come from (gpufleet/base/spec/features/reservation.py capacity_source)
    reserved_nodes: int = 0  # nodes a reservation holds: committed spend whatever the pool's size
    reservation: Optional[dict] = None  # the reservation (type, id/name, zone, instance type, count), for reviews
    exemptions: Optional[dict] = None  # policy -> the stack's full reason (a GKE node label carries a label-safe form)
    price_fact: Optional[PriceFact] = None  # the catalog price's source, date and region (None: declared or unpriced)
    allocation: str = "device-plugin"  # device-plugin | dra (nodePools[*].allocation)
    nvlink: Optional[dict] = None  # multi-node NVLink domain facts (system, machinesPerDomain, gpusPerDomain, domains)
    cold_start: tuple[str, ...] = ()  # the cold-start paths in place (gpufleet/base/spec/features/cold_start.py; only with coldStart)
    topology: Optional[list] = None  # Kueue TAS levels, coarsest first: {level, nodes, gpus, known} of the largest domain

    @property
    def min_gpus(self) -> int:
        return self.min_nodes * self.gpus_per_node

    @property
    def max_gpus(self) -> int:
        return self.max_nodes * self.gpus_per_node

    @property
    def hourly_min(self) -> float:
        """The pool's nodes at its minimum; a reservation it draws on is paid in full whether nodes use it or not
        (the cost breakdown's committed item), so never less than the reserved nodes."""
        return (self.price_per_node_hour or 0.0) * max(self.min_nodes, self.reserved_nodes)

    @property
    def hourly_max(self) -> float:
        return (self.price_per_node_hour or 0.0) * max(self.max_nodes, self.reserved_nodes)

    def to_json(self) -> dict:
        return {
            "pool": self.pool,
            "gpu": self.gpu,
            "gpusPerNode": self.gpus_per_node,
            "minNodes": self.min_nodes,
            "maxNodes": self.max_nodes,
            "minGpus": self.min_gpus,
            "maxGpus": self.max_gpus,
            "capacityType": self.capacity_type,
            "advertisedPerNode": self.advertised,
            "pricePerNodeHour": self.price_per_node_hour,
            "sharing": self.sharing,
            "capacitySource": self.capacity_source or self.capacity_type,
            "reservedNodes": self.reserved_nodes,
            "reservation": self.reservation,
            **({"exemptions": dict(self.exemptions)} if self.exemptions else {}),
            **({"allocation": self.allocation} if self.allocation != "device-plugin" else {}),
            **({"nvlinkDomains": dict(self.nvlink)} if self.nvlink else {}),
            **({"coldStart": list(self.cold_start)} if self.cold_start else {}),
            **({"topology": [dict(d) for d in self.topology]} if self.topology else {}),
        }


def pool_capacity(pool: NodePoolSpec, platform: str, region: Optional[str] = None) -> PoolCapacity:
    """A pool's GPUs, nodes and price on its platform: its GPU shape (NodeTraits.gpu_shape), what a node advertises
    (the platform's own device plugin, else the pool's sharing; plus an RDMA pool's devices), how many nodes it has
    and what one costs (PricingTraits: a declared pricePerNodeHour, else the platform's own price). `region`: where the
    cluster runs (PricingTraits.region), for regional catalog prices; None reads the catalog's default figures."""
    traits = platforms.get(platform)
    shaped = pool_shape.shaped(pool, platform)
    gpus = shaped.gpus_per_node or 0
    own = traits.nodes.advertised(pool)
    advertised = own if own is not None else gpu_sharing.advertised(shaped)
    if pool.rdma:
        advertised = {**advertised, **traits.nodes.rdma_devices(pool)}
    lo, hi = traits.pricing.node_count(pool)
    price, fact = pool.price_per_node_hour, None
    if price is None:
        price, fact = traits.pricing.node_price(pool, gpus, region)
    cap = PoolCapacity(
        pool=pool.name, gpu=shaped.gpu, gpus_per_node=gpus, min_nodes=lo, max_nodes=hi, capacity_type=pool.capacity,
        advertised=advertised, price_per_node_hour=price, price_fact=fact,
        # How the GPU Operator's device plugin shares the GPUs; nothing to say where the platform's own plugin counts.
        sharing=gpu_sharing.explain(shaped) if own is None else "",
        shared=gpu_sharing.shares(shaped) if own is None else False,
    )
    return with_source(pool, cap, platform)


def capacity(spec: StackSpec, region: Optional[str] = None) -> list[PoolCapacity]:
    tas_pools = tas.topology_pools(spec)
    out = []
    for p in spec.node_pools:
        cap = dataclasses.replace(pool_capacity(p, spec.cluster.platform, region),
                                  cold_start=tuple(cold_start_paths.paths(spec, p)))
        if p.name in tas_pools:
            doms = tas.domains(tas_pools[p.name], p, spec.cluster.platform, tas.clique_labelled(spec))
            cap = dataclasses.replace(cap, topology=[
                {"level": d.level, "nodes": d.nodes, "gpus": d.gpus, "known": d.known} for d in doms])
        out.append(cap)
    return out


def cold_start_notes(pools: list[PoolCapacity]) -> list[str]:
    """One line per pool with a coldStart block: which cold-start paths are in place, and which the platform lacks."""
    return [f"{p.pool} cold start: {'; '.join(p.cold_start)}" for p in pools if p.cold_start]


def with_source(pool: NodePoolSpec, cap: PoolCapacity, platform: str) -> PoolCapacity:
    """The pool's capacity source and reservation size (what a reviewer and a cost calculator need)."""
    r = pool.reservation if pool.capacity == "reserved" else None
    facts = None if r is None else {k: v for k, v in r.model_dump(by_alias=True).items() if v is not None}
    return dataclasses.replace(cap, capacity_source=capacity_source(pool), reserved_nodes=committed_nodes(pool), reservation=facts,
                               exemptions=dict(sorted(pool.exemptions.items())) or None, allocation=pool.allocation,
                               nvlink=_nvlink(pool, cap, platform))


def _nvlink(pool: NodePoolSpec, cap: PoolCapacity, platform: str) -> Optional[dict]:
    """The pool's NVLink domains (racks x GPUs) when its machines are a multi-node NVLink system (GB200 NVL72)."""
    system = dra_checks.nvlink(pool, platform)
    if system is None:
        return None
    unit = system.unit
    return {"system": ", ".join(system.domains), "machinesPerDomain": unit, "gpusPerDomain": unit * system.gpus_per_machine,
            "domainsMin": cap.min_nodes / unit, "domainsMax": cap.max_nodes / unit}


AUTOSCALER_NOTE = (
    "autoscalers count whole nodes: a pending pod asking for a shared GPU or a MIG slice adds a whole node "
    "of the pool, and a node is removed only when no pod uses any of its GPUs"
)


def capacity_notes(pools: list[PoolCapacity]) -> list[str]:
    """One line per shared pool saying what it advertises, then the autoscaler note."""
    shared = [p for p in pools if p.shared]
    out = [_dra_note(p) for p in pools if p.allocation == "dra" or p.nvlink]
    out += [_topology_note(p) for p in pools if p.topology]
    if not shared:
        return out
    return [f"{p.pool}: {p.sharing}" for p in shared] + [AUTOSCALER_NOTE] + out


def _topology_note(p: PoolCapacity) -> str:
    """A topology-aware pool's Kueue Topology: its levels, and the GPUs the largest domain of each holds."""
    parts = [f"{d['level']} {d['gpus']} GPUs" + ("" if d["known"] else " (at most: the pool)") for d in p.topology]
    return f"{p.pool}: Kueue topology {p.pool}, largest domain per level: " + " > ".join(parts)


def _dra_note(p: PoolCapacity) -> str:
    """What a DRA or multi-node NVLink pool offers: how GPUs are claimed, and its NVLink domains (racks x GPUs)."""
    parts = []
    mig = {r.removeprefix(labels.MIG_RESOURCE_PREFIX): n for r, n in p.advertised.items() if r.startswith(labels.MIG_RESOURCE_PREFIX)}
    if p.allocation == "dra" and mig:
        # Per profile: the MIG devices one node offers, each claimed through its own template and DeviceClass.
        devices = ", ".join(f"{n} x {profile} (claim template {p.pool}-mig-{labels.dra_mig_suffix(profile)}, "
                            f"device class {labels.dra_mig_class(profile)})" for profile, n in sorted(mig.items()))
        parts.append(f"DRA (NVIDIA's DRA driver for GPUs); MIG devices per node: {devices}")
    elif p.allocation == "dra":
        parts.append(f"DRA (NVIDIA's DRA driver for GPUs; claim template {p.pool}-gpu, device class gpu.nvidia.com)")
    else:
        parts.append("device plugin (no IMEX channels across machines)")
    if p.nvlink:
        n = p.nvlink
        lo, hi = (f"{v:g}" for v in (n["domainsMin"], n["domainsMax"]))
        parts.append(f"NVLink domains {lo if lo == hi else f'{lo}-{hi}'} x {n['gpusPerDomain']} GPUs "
                     f"({n['machinesPerDomain']} machines each; {n['system']})")
    return f"{p.pool}: " + "; ".join(parts)


def cost(pools: list[PoolCapacity]) -> dict:
    """The GPU pools' part of the hourly cost at minimum and maximum size; unpriced pools are named. The whole
    cluster's cost (control plane, system nodes, NAT, storage, ...) is gpufleet.app.plan.cost, built from what a plan
    registers."""
    return {
        "hourlyMin": round(sum(p.hourly_min for p in pools), 4),
        "hourlyMax": round(sum(p.hourly_max for p in pools), 4),
        "currency": CURRENCY,
        "unpricedPools": [p.pool for p in pools if p.price_per_node_hour is None],
    }


ADDONS_KEY = f"{NAMESPACE}:addons"


def addons_warnings(stack: str, spec: StackSpec) -> list[Problem]:
    """Findings that do not stop a plan: quotas that can never be met or that contradict each other, and GKE pools
    that cannot attach the default StorageClass's disks."""
    out = _unmeetable_quota_warnings(stack, spec) if spec.addons.kueue.enabled else []
    if spec.addons.kueue.enabled:
        out += quota_coherence_warnings(stack, spec)
    return out + compat_checks.warnings(stack, spec) + topology_checks.warnings(stack, spec)


def _unmeetable_quota_warnings(stack: str, spec: StackSpec) -> list[Problem]:
    """Quotas that can never be met: the sum of nominal quotas on a pool above what it advertises at max size."""
    if not spec.addons.kueue.enabled:
        return []
    pools = {p.name: p for p in spec.node_pools}
    totals: dict[str, list[tuple[str, int]]] = {}
    for i, team in enumerate(spec.addons.kueue.teams):
        for j, queue in enumerate(team.queues):
            if queue.pool in pools and queue.nominal_quota is not None:
                totals.setdefault(queue.pool, []).append((f"{ADDONS_KEY}.kueue.teams[{i}].queues[{j}].nominalQuota", queue.nominal_quota))
    out: list[Problem] = []
    for pool, quotas in totals.items():
        cap = pool_capacity(pools[pool], spec.cluster.platform)
        for resource, per_node in cap.advertised.items():
            most = per_node * cap.max_nodes
            total = sum(q for _, q in quotas)
            if total > most:
                paths = ", ".join(p for p, _ in quotas)
                out.append(Problem(
                    stack, quotas[-1][0],
                    f"nominal quotas on pool '{pool}' add up to {total} {resource}, more than the pool can ever "
                    f"provide ({most} = {per_node} per node x {cap.max_nodes} nodes at max size); queues: {paths}",
                    total,
                ))
    return out


def quota_coherence_warnings(stack: str, spec: StackSpec) -> list[Problem]:
    """A team's namespace GPU quota below its queues' nominal quotas: Kueue admits a workload within the queue's
    nominal quota, then the namespace's ResourceQuota refuses its pods, which stay pending while counted as admitted
    (Kueue docs, "Setup a ResourceQuota": keep quotas consistent; Kubernetes ResourceQuota rejects pods at creation).
    The ResourceQuota caps every GPU resource the team's pools advertise at gpuQuota (`requests.nvidia.com/gpu`,
    `requests.amd.com/gpu`, one per MIG slice resource: components/workloads/kueue.py team_quota), so the nominal
    quotas are added up per resource, in the units each pool advertises."""
    pools = {p.name: p for p in spec.node_pools}
    out: list[Problem] = []
    for i, team in enumerate(spec.addons.kueue.teams):
        if team.gpu_quota is None:
            continue
        nominal: dict[str, int] = {}
        for queue in team.queues:
            if queue.pool not in pools:
                continue
            cap = pool_capacity(pools[queue.pool], spec.cluster.platform)
            for resource, per_node in cap.advertised.items():
                if labels.is_gpu_resource(resource):
                    own = queue.nominal_quota if queue.nominal_quota is not None else per_node * cap.max_nodes
                    nominal[resource] = nominal.get(resource, 0) + own
        for resource, admitted in sorted(nominal.items()):
            if admitted > team.gpu_quota:
                out.append(Problem(
                    stack, f"{ADDONS_KEY}.kueue.teams[{i}].gpuQuota",
                    f"team '{team.name}' may be admitted {admitted} {resource} by its queues' nominal quotas, but its "
                    f"namespace quota allows {team.gpu_quota}: Kueue would admit workloads whose pods the ResourceQuota "
                    f"then refuses; raise gpuQuota to at least {admitted} (or leave it unset to follow the queues)",
                    team.gpu_quota,
                ))
    return out
