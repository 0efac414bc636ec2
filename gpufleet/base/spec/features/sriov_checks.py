"""Cross checks for SR-IOV RDMA pools (`rdmaNetwork.network: sriov`) where the platform has them (its scheduling
trait `sriov_rdma`: k3s).

Called from `_cross_checks` in gpufleet/base/spec/__init__.py once every block is valid on its own. The SR-IOV
operator's SriovNetworkNodePolicy selects NICs by one vendor and one device ID (`nicSelector.vendor`,
`nicSelector.deviceID` are strings), and it deploys its own SR-IOV device plugin, which cannot run beside the
one the NicClusterPolicy deploys for host-device pools.
"""

from __future__ import annotations

from gpufleet.base import platforms
from gpufleet.base.spec.errors import Problem
from gpufleet.base.spec.features.rdma import SRIOV_MAX_VFS

NS = "gpufleet"


def check(stack: str, spec) -> list[Problem]:
    if not platforms.of(spec).scheduling.sriov_rdma:
        return []  # rdmaNetwork where the platform has no such NICs is reported by sharing_checks
    problems: list[Problem] = []
    rdma = [(i, p) for i, p in enumerate(spec.node_pools) if p.rdma]
    for i, pool in rdma:
        problems += [Problem(stack, path, msg) for path, msg in _pool(pool, f"{NS}:nodePools[{i}].rdmaNetwork")]
    host_device = [p.name for _, p in rdma if p.rdma_network.network == "host-device"]
    sriov = [(i, p) for i, p in rdma if p.rdma_network.network == "sriov"]
    if host_device and sriov:
        i, pool = sriov[0]
        problems.append(Problem(stack, f"{NS}:nodePools[{i}].rdmaNetwork.network", (
            f"sriov on pool '{pool.name}' cannot be combined with host-device on pool '{host_device[0]}': both "
            "deploy an SR-IOV device plugin (the SR-IOV operator's and the NicClusterPolicy's); use sriov or "
            "macvlan for every pool"
        )))
    return problems


def _pool(pool, here: str):
    net = pool.rdma_network
    if net.network != "sriov":
        if net.num_vfs is not None:
            yield f"{here}.numVfs", f"only used with network sriov (pool '{pool.name}' has network {net.network})"
        return
    if net.num_vfs is None:
        yield f"{here}.numVfs", (
            f"sriov on pool '{pool.name}' needs the number of virtual functions per NIC: set numVfs "
            f"(1-{SRIOV_MAX_VFS}), e.g. 8"
        )
    if len(net.vendors) != 1:
        yield f"{here}.vendors", (
            f"sriov selects NICs by one PCI vendor (SriovNetworkNodePolicy nicSelector.vendor) on pool "
            f"'{pool.name}' (got {', '.join(net.vendors) or 'none'})"
        )
    if len(net.device_ids) > 1:
        yield f"{here}.deviceIds", (
            f"sriov selects NICs by at most one PCI device ID (SriovNetworkNodePolicy nicSelector.deviceID) on "
            f"pool '{pool.name}' (got {', '.join(net.device_ids)}): use interfaces to pick NICs of several models"
        )
