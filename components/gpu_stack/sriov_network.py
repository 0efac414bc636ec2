"""SR-IOV RDMA pools (`rdmaNetwork.network: sriov`): the objects the SR-IOV Network Operator reconciles.

The Network Operator chart deploys the SR-IOV Network Operator as its `sriov-network-operator` subchart
(`sriovNetworkOperator.enabled`). Per pool gpufleet declares, in the operator's namespace:
- a SriovNetworkNodePolicy: on the pool's nodes (`gpufleet.io/pool=<pool>`), create `numVfs` VFs on each NIC
  the spec selects (vendor, device ID, PF names), bound to the netdevice driver with RDMA (RoCE on bare metal:
  deviceType netdevice + isRdma), and advertise them as `nvidia.com/sriov_<pool>`;
- a SriovNetwork `rdma-<pool>`: the operator renders a NetworkAttachmentDefinition of that name in the pool's
  `rdmaNetwork.namespace`, with the sriov CNI and NV-IPAM addresses from the pool's IPPool (as macvlan does).
Applying a policy makes the operator's config daemon create the VFs, which may drain and reboot the node
(Mellanox firmware needs SR-IOV enabled and a VF count at least `numVfs`).

Field names follow the upstream CRDs (k8snetworkplumbingwg/sriov-network-operator config/crd/bases,
sriovnetwork.openshift.io_sriovnetworknodepolicies.yaml at 0d2faf1c6d03687334ab9ef6825c8cc8c4b0e6e8 and
sriovnetwork.openshift.io_sriovnetworks.yaml at 36d7243009134a63463172d467754a0723172478).
"""

from __future__ import annotations

import json

from gpufleet.base import labels
from gpufleet.base.spec import NodePoolSpec

API_VERSION = "sriovnetwork.openshift.io/v1"
# The subchart's `sriov-network-operator.operator.resourcePrefix` (nvidia.com in the Network Operator chart):
# the operator prefixes every policy's resourceName with it.
RESOURCE_PREFIX = "nvidia.com"
# The policy's nodeSelector ANDs with the config daemon's; the chart's default daemon selector also waits for
# `network.nvidia.com/operator.mofed.wait=false`, which the Network Operator sets on nodes with an NVIDIA NIC
# when it does not manage the driver (gpufleet uses the host's driver).
CONFIG_DAEMON_NODE_SELECTOR = {labels.RDMA_NODE_LABEL: "true"}


def resource_name(pool: NodePoolSpec) -> str:
    """The policy's resourceName: letters, digits and _ only (the operator's webhook rejects anything else)."""
    return f"sriov_{pool.name.replace('-', '_')}"


def chart_values() -> dict:
    """network-operator chart values that turn the SR-IOV Network Operator on (key paths of values.yaml)."""
    return {
        "sriovNetworkOperator": {"enabled": True},
        "sriov-network-operator": {
            # The chart deploys the default SriovOperatorConfig; its config daemon runs on RDMA pools' nodes only.
            "sriovOperatorConfig": {"deploy": True, "configDaemonNodeSelector": dict(CONFIG_DAEMON_NODE_SELECTOR)},
        },
    }


def node_policy(pool: NodePoolSpec, namespace: str) -> dict:
    """The pool's SriovNetworkNodePolicy (must live in the operator's namespace to be used)."""
    net = pool.rdma_network
    nic: dict = {"vendor": net.vendors[0]}
    if net.device_ids:
        nic["deviceID"] = net.device_ids[0]
    if net.interfaces:
        nic["pfNames"] = list(net.interfaces)
    spec = {
        "nodeSelector": {labels.POOL_LABEL: pool.name},
        "nicSelector": nic,
        "numVfs": net.num_vfs,
        "deviceType": "netdevice",
        "isRdma": True,
        "resourceName": resource_name(pool),
    }
    return {"apiVersion": API_VERSION, "kind": "SriovNetworkNodePolicy",
            "metadata": {"name": f"rdma-{pool.name}", "namespace": namespace}, "spec": spec}


def sriov_network(pool: NodePoolSpec, name: str, namespace: str) -> dict:
    """The pool's SriovNetwork `name`: a NetworkAttachmentDefinition in the pool's namespace, NV-IPAM addresses."""
    net = pool.rdma_network
    spec = {
        "resourceName": resource_name(pool),
        "networkNamespace": net.namespace,
        "ipam": json.dumps({"type": "nv-ipam", "poolName": name}),
    }
    return {"apiVersion": API_VERSION, "kind": "SriovNetwork",
            "metadata": {"name": name, "namespace": namespace}, "spec": spec}
