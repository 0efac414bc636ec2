"""nodePools[].rdmaNetwork — RDMA NICs and the secondary network of a k3s pool (NVIDIA Network Operator)."""

import ipaddress
import re
from typing import Annotated, Literal, Optional

from pydantic import Field, field_validator

from gpufleet.base.spec import ids
from gpufleet.base.spec.base import Model

# Network types whose wiring exists (sriov runs the SR-IOV Network Operator, a subchart of the Network Operator).
RDMA_NETWORK_TYPES = ("macvlan", "host-device", "sriov")
IMPLEMENTED_RDMA_NETWORK_TYPES = RDMA_NETWORK_TYPES
# Most VFs per PF the SR-IOV operator admits on NVIDIA/Mellanox NICs (its webhook's MlxMaxVFs,
# k8snetworkplumbingwg/sriov-network-operator pkg/webhook/validate.go); 0 is rejected for a user policy.
SRIOV_MAX_VFS = 128
_HEX_ID = re.compile(r"[0-9a-fA-F]{4}")


class RdmaNetworkSpec(Model):
    """Which NICs carry RDMA on a pool's hosts and how pods attach to them (used when `rdma: true`)."""

    vendors: list[str] = ["15b3"]
    """PCI vendor IDs of the RDMA NICs (4 hex digits); default: 15b3 (NVIDIA/Mellanox ConnectX)."""
    device_ids: list[str] = []
    """PCI device IDs to narrow the NICs, e.g. ["101b"] (ConnectX-6); default: any device of the vendors."""
    interfaces: list[Annotated[str, Field(pattern=ids.INTERFACE_NAME)]] = []
    """Host interface names, e.g. ["ens1f0np0"]; macvlan uses the first as its master, sriov creates VFs on each
    (its PF names). Default: any interface."""
    network: Literal["macvlan", "host-device", "sriov"] = "macvlan"
    """Secondary network pods attach to: macvlan (shared NIC, RoCE through a macvlan on `interfaces[0]`) or
    host-device (a whole NIC moved into the pod) or sriov (the SR-IOV Network Operator splits each NIC into
    `numVfs` virtual functions; a pod gets one VF)."""
    ip_range: str = "192.168.100.0/24"
    """CIDR pods on this network get addresses from (NVIDIA IPAM pool); default: 192.168.100.0/24."""
    gateway: Optional[str] = None
    """Gateway of `ipRange`; default: none (pods talk to each other on one L2 segment)."""
    per_node_block_size: int = Field(default=16, ge=2)
    """Addresses each node reserves from `ipRange` for its pods; default: 16."""
    namespace: str = Field(default="default", pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", max_length=63)
    """Namespace of the network attachment pods reference (pods must run there); default: default."""
    rdma_hca_max: int = Field(default=63, ge=1, le=1000)
    """macvlan: pods that may share one RDMA NIC (rdma shared device plugin `rdmaHcaMax`); default: 63."""
    num_vfs: Optional[int] = Field(default=None, ge=1, le=SRIOV_MAX_VFS)
    """sriov: virtual functions created on each selected NIC (PF), 1-128; required with network sriov and
    used only there (no default: the right count depends on the NIC's firmware limit and the pods per node)."""

    @field_validator("vendors", "device_ids")
    @classmethod
    def _hex_ids(cls, values: list[str]) -> list[str]:
        bad = [v for v in values if not _HEX_ID.fullmatch(v)]
        if bad:
            raise ValueError(f"PCI IDs are 4 hex digits, e.g. '15b3' (got {', '.join(map(repr, bad))})")
        return [v.lower() for v in values]

    @field_validator("network")
    @classmethod
    def _implemented(cls, v: str) -> str:
        if v not in IMPLEMENTED_RDMA_NETWORK_TYPES:
            raise ValueError(
                f"network '{v}' is not available yet (available: {', '.join(IMPLEMENTED_RDMA_NETWORK_TYPES)})"
            )
        return v

    @field_validator("ip_range")
    @classmethod
    def _cidr(cls, v: str) -> str:
        try:
            return str(ipaddress.ip_network(v, strict=True))
        except ValueError as exc:
            raise ValueError(f"not a network in CIDR form, e.g. 192.168.100.0/24 ({exc})") from None

    @field_validator("gateway")
    @classmethod
    def _gateway(cls, v: Optional[str]) -> Optional[str]:
        if v is not None:
            try:
                ipaddress.ip_address(v)
            except ValueError:
                raise ValueError(f"'{v}' is not an IP address") from None
        return v
