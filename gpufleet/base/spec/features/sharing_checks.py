"""Cross checks for GPU sharing, RDMA and storage: the ones that need the pool's GPU, platform or other blocks.

What differs by platform is asked of its scheduling traits: whether a pool's GPU is declared (`declared_gpus`), whether
RDMA runs over the Network Operator's NICs (`nic_rdma`), whether it has a local-path provisioner (`local_path_storage`).

Called from `_cross_checks` in gpufleet/base/spec/__init__.py once every block is valid on its own.
"""

from __future__ import annotations

import ipaddress
from typing import Any, Callable

from gpufleet.base import catalog, platforms, sharing
from gpufleet.base.spec.features.amd_operator import is_amd
from gpufleet.base.spec.errors import Problem
from gpufleet.base.spec.shape import shaped_pools

NS = "gpufleet"
_MIG_FIELDS = ("profile", "layout", "profiles", "strategy")


def platforms_where(has: Callable[[Any], bool]) -> list[str]:
    """The platforms whose scheduling traits have a feature (`has(traits.scheduling)`), for messages."""
    return [name for name in platforms.names() if has(platforms.get(name).scheduling)]


def check(stack: str, spec) -> list[Problem]:
    problems: list[Problem] = []
    traits = platforms.of(spec).scheduling
    pools = shaped_pools(spec)
    for i, pool in enumerate(pools):
        at = f"{NS}:nodePools[{i}]"
        problems += [Problem(stack, path, msg) for path, msg in _sharing(pool, at, traits.declared_gpus)]
        # RDMA over the Network Operator's NICs where the platform has them (`nic_rdma`: k3s, existing).
        problems += [Problem(stack, path, msg) for path, msg in _rdma(pool, at, traits.nic_rdma)]
    problems += [Problem(stack, path, msg) for path, msg in _mig_cluster(pools)]
    # AMD pools partition through the AMD GPU Operator (gpufleet/base/spec/features/amd_checks.py), not NVIDIA's.
    shared = [i for i, p in enumerate(spec.node_pools) if p.sharing.mode not in ("none", "partition")]
    if shared and not spec.gpu_operator.enabled:
        problems.append(Problem(stack, f"{NS}:nodePools[{shared[0]}].sharing.mode", (
            "GPU sharing is configured through the GPU Operator: set gpuOperator.enabled: true or sharing mode none"
        )))
    if traits.local_path_storage:
        problems += traits.local_path_problems(stack, spec)
    problems += [Problem(stack, path, msg) for path, msg in _storage(spec, traits.local_path_storage)]
    return problems


def _sharing(pool, at: str, declared_gpus: bool):
    s = pool.sharing
    mode = s.mode
    set_ = s.model_fields_set
    here = f"{at}.sharing"
    who = f"pool '{pool.name}'"
    if mode in ("time-slicing", "mps", "mig") and is_amd(pool.gpu):
        return  # an NVIDIA mode on an AMD pool: gpufleet/base/spec/features/amd_checks.py says so
    if mode != "none" and pool.gpu is None and declared_gpus:
        yield f"{here}.mode", f"{who} has no GPU model (`gpu`), so there is nothing to share with {mode}"
    if mode in ("time-slicing", "mps") and s.replicas is None:
        yield f"{here}.replicas", f"required for {mode} on {who}: pods that share one GPU (>= 2)"
    if mode == "mig" and "replicas" in set_:
        yield f"{here}.replicas", (
            f"not used with mig on {who}: MPS or time-slicing replicas cannot be combined with MIG on one pool"
        )
    elif mode in ("none", "partition") and "replicas" in set_:
        yield f"{here}.replicas", f"only used with time-slicing or mps ({who} has mode none)"
    if "rename_by_default" in set_ and mode not in ("time-slicing", "mps"):
        yield f"{here}.renameByDefault", f"only used with time-slicing or mps ({who} has mode {mode})"
    if "fail_requests_greater_than_one" in set_ and mode != "time-slicing":
        yield f"{here}.failRequestsGreaterThanOne", f"only used with time-slicing ({who} has mode {mode})"
    if mode != "mig":
        for field in _MIG_FIELDS:
            if field in set_:
                yield f"{here}.{field}", f"only used with mode mig ({who} has mode {mode})"
        return
    chosen = [f for f in ("profile", "layout", "profiles") if getattr(s, f)]
    if not chosen:
        yield here, f"mig on {who} needs one of profile (e.g. 1g.10gb), layout (e.g. all-balanced) or profiles"
        return
    if len(chosen) > 1:
        yield here, f"set only one of profile, layout or profiles on {who} (got {', '.join(chosen)})"
        return
    if pool.gpu is None:
        return
    gpu = catalog.gpu(pool.gpu)
    if not gpu.mig_capable:
        capable = [g.name for g in catalog.gpu_models().values() if g.mig_capable]
        slice_of = f", a vGPU slice of one {gpu.fraction_of}" if gpu.fraction_of else ""
        yield f"{here}.mode", f"GPU {gpu.name}{slice_of} of {who} has no MIG (MIG GPUs: {', '.join(capable)})"
        return
    layouts = sharing.named_layouts(gpu)
    if s.profile and s.profile not in gpu.mig.profiles:
        yield f"{here}.profile", (
            f"profile '{s.profile}' does not exist on {gpu.name} (allowed: {', '.join(gpu.mig.profiles)})"
        )
        return
    if s.layout and s.layout not in layouts:
        yield f"{here}.layout", (
            f"unknown layout '{s.layout}' for {gpu.name} (allowed: {', '.join(layouts)}; or use profiles)"
        )
        return
    if s.profiles:
        bad = sharing.layout_problems(s.profiles, gpu)
        for msg in bad:
            yield f"{here}.profiles", f"{who}: {msg}"
        if bad:
            return
    devices = sharing.mig_devices(s, gpu)
    if s.strategy == "single" and len(devices) > 1:
        yield f"{here}.strategy", (
            f"single needs one profile per GPU, but the layout of {who} has {len(devices)} "
            f"({', '.join(devices)}): use mixed"
        )


def _mig_cluster(pools):
    """The GPU Operator's mig.strategy and the custom mig-parted config are cluster-wide."""
    migs = [(i, p) for i, p in enumerate(pools) if p.sharing.mode == "mig" and p.gpu]
    if not migs:
        return
    first_i, first = migs[0]
    for i, pool in migs[1:]:
        if pool.sharing.strategy != first.sharing.strategy:
            yield f"{NS}:nodePools[{i}].sharing.strategy", (
                f"every MIG pool must use one strategy (the GPU Operator's mig.strategy is cluster-wide): "
                f"pool '{first.name}' uses {first.sharing.strategy}, pool '{pool.name}' uses {pool.sharing.strategy}"
            )
    if not sharing.needs_custom_mig_config(pools):
        return
    seen: dict[str, tuple[str, dict]] = {}
    for i, pool in migs:
        gpu = catalog.gpu(pool.gpu)
        if not gpu.mig_capable:
            continue
        try:
            devices = sharing.mig_devices(pool.sharing, gpu)
        except KeyError:
            continue
        name = sharing.layout_name(pool)
        if name in seen and seen[name][1] != devices:
            yield f"{NS}:nodePools[{i}].sharing", (
                f"layout '{name}' means {seen[name][1]} on pool '{seen[name][0]}' but {devices} on pool "
                f"'{pool.name}'; gpufleet writes one mig-parted config for the cluster: give one pool a profiles map"
            )
        seen.setdefault(name, (pool.name, devices))


def _rdma(pool, at: str, nic_rdma: bool):
    net = pool.rdma_network
    here = f"{at}.rdmaNetwork"
    if "rdma_network" in pool.model_fields_set and not pool.rdma:
        yield here, f"only used with rdma: true (pool '{pool.name}' has rdma: false)"
        return
    if not pool.rdma or not nic_rdma:
        if "rdma_network" in pool.model_fields_set and not nic_rdma:
            where = " and ".join(platforms_where(lambda t: t.nic_rdma))
            yield here, f"only used on {where} (cloud pools get their RDMA NICs from the instance type)"
        return
    if net.network == "macvlan" and not net.interfaces:
        yield f"{here}.interfaces", (
            f"macvlan on pool '{pool.name}' needs the RDMA interface as its master: set interfaces, e.g. [ens1f0np0]"
        )
    subnet = ipaddress.ip_network(net.ip_range)
    if net.gateway and ipaddress.ip_address(net.gateway) not in subnet:
        yield f"{here}.gateway", f"{net.gateway} is not inside ipRange {net.ip_range}"
    hosts = len(pool.hosts)
    if hosts and net.per_node_block_size * hosts > subnet.num_addresses - 2:
        yield f"{here}.perNodeBlockSize", (
            f"{hosts} nodes x {net.per_node_block_size} addresses do not fit in ipRange {net.ip_range} "
            f"({subnet.num_addresses - 2} usable): use a larger range or a smaller block"
        )


def _storage(spec, local_path: bool):
    """storage.localPath where the platform has no local-path provisioner (its own refusals: `local_path_problems`)."""
    st = spec.storage
    if not local_path and "local_path" in st.model_fields_set:
        where = " and ".join(platforms_where(lambda t: t.local_path_storage))
        yield f"{NS}:storage.localPath", f"only used on {where} (cloud platforms bring their own block storage class)"
    if st.local_path.path and not st.local_path.enabled:
        yield f"{NS}:storage.localPath.path", "not used when localPath.enabled is false"
    if st.checkpoints is not None and st.nfs is None:
        yield f"{NS}:storage.checkpoints", "needs storage.nfs: the checkpoint claim is ReadWriteMany on the NFS class"
