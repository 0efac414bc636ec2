"""Mistakes that plan clean and fail at `pulumi up` or deploy something that never works (issue 33): GKE maintenance
exclusions past GKE's limits, deletion protection off without a recorded reason, EC2 Capacity Blocks on families
that are not sold as Capacity Blocks, RDMA address ranges two pools would share, and a persistent volume on a k3s
cluster without a default StorageClass.
"""

from __future__ import annotations

import ipaddress
from datetime import datetime, timedelta
from typing import Any

from gpufleet.base import catalog
from gpufleet.base.cidrs import RFC1918
from gpufleet.base.catalog import aws as aws_catalog
from gpufleet.base.sharing import is_amd
from gpufleet.base.spec.errors import Problem
from gpufleet.base.spec.shape import shaped_pools
from gpufleet.base.spec.stack import StackSpec

NS = "gpufleet"
# GKE: "A no upgrades exclusion can't be longer than 30 days" (cloud.google.com/kubernetes-engine/docs/concepts/
# maintenance-windows-and-exclusions, "Limitations for maintenance exclusions", read 2026-12-04).
NO_UPGRADES_MAX = timedelta(days=30)
# EC2 Capacity Blocks for ML are sold for accelerated P instances and Trainium (EC2 User Guide, capacity-blocks.html,
# "Supported instance types": p4d, p4de, p5, p5e, p5en, p6-b200, p6-b300, p6e-gb200, trn1, trn2, read 2026-12-04; the
# SageMaker ReservedCapacityInstanceType enum lists the same families). The rule is by family prefix, so a new size of
# those families is not refused before the catalog knows it.
CAPACITY_BLOCK_FAMILIES = ("p", "trn")


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _exclusions(stack: str, spec: StackSpec) -> list[Problem]:
    gke = spec.cluster.gke
    if spec.cluster.platform != "gke" or gke is None:
        return []
    problems = []
    for i, x in enumerate(gke.maintenance_exclusions):
        at = f"{NS}:cluster.gke.maintenanceExclusions[{i}]"
        if x.end_time is None:
            continue
        start, end = _time(x.start_time), _time(x.end_time)
        if end <= start:
            problems.append(Problem(stack, f"{at}.endTime", f"ends before it starts ({x.start_time}): GKE refuses it",
                                    x.end_time))
            continue
        if x.scope == "NO_UPGRADES" and end - start > NO_UPGRADES_MAX:
            problems.append(Problem(stack, f"{at}.endTime", f"a NO_UPGRADES exclusion lasts at most 30 days (GKE); this one "
                                    f"lasts {(end - start).days} days from {x.start_time}: shorten it, or use scope "
                                    "NO_MINOR_UPGRADES or NO_MINOR_OR_NODE_UPGRADES", x.end_time))
            continue
    seen: dict[str, int] = {}
    for i, x in enumerate(gke.maintenance_exclusions):
        if x.name in seen:
            problems.append(Problem(stack, f"{NS}:cluster.gke.maintenanceExclusions[{i}].name", "duplicate exclusion name "
                                    f"(also maintenanceExclusions[{seen[x.name]}]): GKE keys exclusions by name", x.name))
        seen.setdefault(x.name, i)
    return problems


def _deletion_protection(stack: str, spec: StackSpec) -> list[Problem]:
    gke = spec.cluster.gke
    if spec.cluster.platform != "gke" or gke is None or gke.deletion_protection is not False:
        return []
    if spec.cluster.protection.enabled:
        return [Problem(stack, f"{NS}:cluster.gke.deletionProtection", "turning GKE's deletion protection off needs a "
                        f"recorded reason: set {NS}:cluster.protection to {{enabled: false, reason: ...}} (then "
                        "deletionProtection follows it), or remove deletionProtection", False)]
    return []


def _capacity_blocks(stack: str, spec: StackSpec) -> list[Problem]:
    if spec.cluster.platform != "eks":
        return []
    problems = []
    for i, pool in enumerate(spec.node_pools):
        r = pool.reservation
        if pool.capacity != "reserved" or r is None or r.type != "capacity-block":
            continue
        types = [r.instance_type] if r.instance_type else (
            [pool.instance_type] if pool.instance_type else list(pool.instance_types))
        for t in types:
            family = t.split(".", 1)[0]
            if not any(family.startswith(prefix) and family[len(prefix):][:1].isdigit()
                       for prefix in CAPACITY_BLOCK_FAMILIES):
                key = "reservation.instanceType" if r.instance_type else (
                    "instanceType" if pool.instance_type else "instanceTypes")
                problems.append(Problem(stack, f"{NS}:nodePools[{i}].{key}", "EC2 sells Capacity Blocks for ML only for "
                                        "P instances and Trainium (p4d, p4de, p5, p5e, p5en, p6, p6e, trn1, trn2): use "
                                        "type odcr for an On-Demand Capacity Reservation of this type", t))
    return problems


def _rdma_ranges(stack: str, spec: StackSpec) -> list[Problem]:
    """gpufleet makes one NV-IPAM IPPool per RDMA pool (components/gpu_stack/network_operator.py), and each IPPool
    allocates on its own: two pools on overlapping subnets can give two pods the same address."""
    if spec.cluster.platform != "k3s":  # EKS (EFA) and GKE (GPUDirect) pools take the cloud's addresses
        return []
    problems = []
    seen: list[tuple[int, Any]] = []
    for i, pool in enumerate(spec.node_pools):
        if not pool.rdma or pool.rdma_network is None:
            continue
        mine = ipaddress.ip_network(pool.rdma_network.ip_range)
        for j, other in seen:
            if mine.version == other.version and mine.overlaps(other):
                problems.append(Problem(stack, f"{NS}:nodePools[{i}].rdmaNetwork.ipRange", f"overlaps "
                                        f"{NS}:nodePools[{j}].rdmaNetwork.ipRange ({other}): each pool's RDMA network "
                                        "needs a range of its own", str(mine)))
                break
        seen.append((i, mine))
    return problems


def _default_storage_class(stack: str, spec: StackSpec) -> list[Problem]:
    """kube-prometheus-stack's Prometheus claims its volume on the default StorageClass (components/observability/
    stack.py storageSpec, no storageClassName). On k3s the default class is k3s's local-path
    (storage.localPath.enabled); gpufleet's NFS class is not default. Without it the claim stays Pending and
    Prometheus never starts (Kubernetes docs, "Default StorageClass": a claim without storageClassName waits for one)."""
    if spec.cluster.platform != "k3s" or spec.storage.local_path.enabled:
        return []
    if spec.observability.backend("k3s") != "kube-prometheus-stack":
        return []
    return [Problem(stack, f"{NS}:observability.metrics.backend", "Prometheus keeps its samples on a volume of the "
                    f"default StorageClass, and this k3s cluster has none ({NS}:storage.localPath.enabled is false): "
                    "turn localPath on, or choose backend none", "kube-prometheus-stack")]


def _gpu_advertising(stack: str, spec: StackSpec) -> list[Problem]:
    """An NVIDIA pool's GPUs reach the scheduler only through a device plugin. With the GPU Operator off, one is there
    only on GKE (its own, gpuStack gke) and on EKS Bottlerocket NVIDIA AMIs: "When using the EKS-optimized AL2023
    AMIs with NVIDIA GPUs, you must install the NVIDIA Kubernetes device plugin ... When using the EKS-optimized
    Bottlerocket AMIs with NVIDIA GPUs, you do not need to install [it], as it is already included"
    (docs.aws.amazon.com/eks/latest/userguide/ml-eks-k8s-device-plugin.html, Considerations, read 2026-12-04). k3s
    hosts have none. The pods asking for nvidia.com/gpu would stay Pending on nodes that have GPUs."""
    platform = spec.cluster.platform
    if spec.gpu_operator.enabled or platform == "gke":
        return []
    problems = []
    for i, pool in enumerate(shaped_pools(spec)):
        if platform == "k3s" and (pool.gpu is None or is_amd(pool)):
            continue  # AMD pools advertise amd.com/gpu through the AMD GPU Operator
        if platform == "eks" and pool.ami == "bottlerocket-nvidia":
            continue
        where = "k3s hosts have no device plugin of their own" if platform == "k3s" else (
            "EKS AL2023 NVIDIA AMIs ship no device plugin (Bottlerocket NVIDIA AMIs do: ami bottlerocket-nvidia)")
        problems.append(Problem(stack, f"{NS}:nodePools[{i}]", f"nothing would advertise pool '{pool.name}''s "
                                f"nvidia.com/gpu: {NS}:gpuOperator.enabled is false and {where}; turn the operator on"))
    return problems


# Amazon VPC User Guide, vpc-cidr-blocks.html, "IPv4 CIDR block association restrictions" (read 2026-12-04): with a
# primary block in one RFC 1918 range, blocks from the other RFC 1918 ranges and 198.19.0.0/16 cannot be associated;
# with a publicly routable or 100.64.0.0/10 primary, no RFC 1918 block nor 198.19.0.0/16; and no block may overlap one
# the VPC already has.
AWS_RESERVED_BENCHMARK = ipaddress.ip_network("198.19.0.0/16")


def _range_of(net: Any) -> Any:
    return next((r for r in RFC1918 if net.subnet_of(r)), None)


def _secondary_cidrs(stack: str, spec: StackSpec) -> list[Problem]:
    eks = spec.cluster.eks
    if spec.cluster.platform != "eks" or eks is None or not eks.network.secondary_cidrs:
        return []
    problems = []
    primary = ipaddress.ip_network(eks.network.vpc_cidr)
    primary_range = _range_of(primary)
    seen = [("vpcCidr", primary)]
    for i, text in enumerate(eks.network.secondary_cidrs):
        at = f"{NS}:cluster.eks.network.secondaryCidrs[{i}]"
        net = ipaddress.ip_network(text)
        clash = next((key for key, other in seen if other.overlaps(net)), None)
        own = _range_of(net)
        if clash:
            why = f"overlaps {clash} ({dict(seen)[clash]}): a VPC's CIDR blocks must not overlap"
        elif net.overlaps(AWS_RESERVED_BENCHMARK):
            why = "AWS does not associate 198.19.0.0/16 with a VPC as a secondary block"
        elif own is not None and own != primary_range:
            where = f"the RFC 1918 range {primary_range}" if primary_range else "a publicly routable or 100.64.0.0/10 range"
            why = (f"the VPC's primary block {primary} is in {where}, so AWS refuses a secondary block from {own}; use "
                   "100.64.0.0/10 (RFC 6598) or a block of the primary's own range")
        else:
            seen.append((f"secondaryCidrs[{i}]", net))
            continue
        problems.append(Problem(stack, at, why, text))
        seen.append((f"secondaryCidrs[{i}]", net))
    return problems


def _host_driver_support(stack: str, spec: StackSpec) -> list[Problem]:
    """A driver on the host (k3s preinstalled with its version given, an EKS AMI's fixed branch) should be on a branch
    the GPU Operator release supports: its toolkit, device plugin and DCGM exporter are built and tested against
    those branches (GPU Operator Component Matrix, gpufleet/base/catalog/drivers.yaml `operator_matrix`). The
    operator's own driver is judged by the gpu-operator-version-support policy."""
    op = spec.gpu_operator
    if not op.enabled or op.driver.source != "preinstalled":
        return []
    release = catalog.operator_release(op.version)
    supported = ", ".join(map(str, release.driver_branches))
    found: list[tuple[str, str, str]] = []  # (key, driver, where it comes from)
    if op.driver.version:
        found.append((f"{NS}:gpuOperator.driver.version", op.driver.version, "the hosts' preinstalled driver"))
    elif spec.cluster.platform == "eks":
        for i, pool in enumerate(spec.node_pools):
            ami = aws_catalog.ami(pool.ami)
            found.append((f"{NS}:nodePools[{i}].ami", ami.driver_version or f"{ami.driver_branch}.x",
                          f"the {pool.ami} AMI's driver"))
    problems = []
    for key, driver, where in found:
        branch = int(driver.split(".", 1)[0])
        if branch not in release.driver_branches:
            problems.append(Problem(stack, key, f"{where} is {driver} (branch {branch}), which GPU Operator {op.version} "
                                    f"({NS}:gpuOperator.version) does not list as supported (supported branches: {supported}): pick a "
                                    "release that lists it, or move the hosts to a supported branch",
                                    driver))
    return problems


def check(stack: str, spec: StackSpec) -> list[Problem]:
    return (_exclusions(stack, spec) + _deletion_protection(stack, spec) + _capacity_blocks(stack, spec)
            + _rdma_ranges(stack, spec) + _default_storage_class(stack, spec) + _gpu_advertising(stack, spec)
            + _secondary_cidrs(stack, spec))


def warnings(stack: str, spec: StackSpec) -> list[Problem]:
    """Findings that do not stop a plan: a host driver outside the operator's tested branches often works, so the
    plan says so rather than refuse (the example corpus keeps such stacks for the CUDA alignment policy)."""
    return _host_driver_support(stack, spec)


__all__ = ["check"]
