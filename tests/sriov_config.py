"""A test-only k3s stack with an SR-IOV RDMA pool: the lab stack plus a fourth pool on `network: sriov`
(the lab's macvlan pool stays, so both network types share one Network Operator)."""

from __future__ import annotations

from tests.helpers import example_config

SRIOV_POOL = {
    "name": "h100-sriov",
    "gpu": "H100-80GB",
    "gpusPerNode": 8,
    "pricePerNodeHour": 24.0,
    "rdma": True,
    "rdmaNetwork": {
        "vendors": ["15b3"],
        "deviceIds": ["101d"],  # ConnectX-6 Dx
        "interfaces": ["ens2f0np0", "ens2f1np1"],
        "network": "sriov",
        "numVfs": 8,
        "ipRange": "192.168.101.0/24",
        "namespace": "training",
    },
    "hosts": [{"name": "h100-sriov-1", "address": "203.0.113.61"}, {"name": "h100-sriov-2", "address": "203.0.113.62"}],
}


def sriov_config() -> dict:
    """Raw config of the test stack: pools [0] l4-shared, [1] h100-mig, [2] a100-rdma (macvlan), [3] h100-sriov."""
    import copy

    config = example_config("lab")
    config["gpufleet:nodePools"].append(copy.deepcopy(SRIOV_POOL))
    return config
