"""Unit tests (layer 1): `rdmaNetwork.network: sriov` — valid configs load, bad ones give exact errors."""

import copy

import pytest

from gpufleet.base.spec import SpecError, load_spec
from tests.helpers import stack_file
from tests.sriov_config import sriov_config

P = "gpufleet:nodePools"
S = "stack 'test': gpufleet:nodePools"
BASE = sriov_config()  # [2] a100-rdma macvlan, [3] h100-sriov sriov


def load(mutate):
    config = copy.deepcopy(BASE)
    mutate(config)
    sf = stack_file(config)
    return load_spec(sf.stack, sf.config, sf.secret_keys)


def problems(mutate) -> list[str]:
    try:
        load(mutate)
    except SpecError as exc:
        return [str(p) for p in exc.problems]
    return []


def net(i=3, **changes):
    return lambda c: c[P][i]["rdmaNetwork"].update(changes)


def drop(key, i=3):
    return lambda c: c[P][i]["rdmaNetwork"].pop(key)


def _sriov_only(c):
    # The default ipRange is pool [2]'s: each pool's RDMA network needs its own (upkeep_checks).
    c[P][3]["rdmaNetwork"] = {"network": "sriov", "numVfs": 1, "ipRange": "192.168.101.0/24"}


def _all_sriov(c):
    c[P][2]["rdmaNetwork"].update(network="sriov", numVfs=4)


VALID = [
    ("the test stack", lambda c: None),
    ("only network, numVfs and a range of its own (any 15b3 NIC)", _sriov_only),
    ("numVfs at the operator's maximum", net(numVfs=128)),
    ("no device id, PF names only", drop("deviceIds")),
    ("no interfaces, vendor and device", drop("interfaces")),
    ("sriov beside macvlan and another sriov pool", _all_sriov),
]


@pytest.mark.parametrize("mutate", [m for _, m in VALID], ids=[n for n, _ in VALID])
def test_valid_sriov_configs_load(mutate):
    assert problems(mutate) == []


def test_sriov_fields_are_read():
    net_ = load(lambda c: None).node_pools[3].rdma_network
    assert (net_.network, net_.num_vfs, net_.vendors, net_.device_ids, net_.interfaces) == (
        "sriov", 8, ["15b3"], ["101d"], ["ens2f0np0", "ens2f1np1"]
    )


BAD = [
    ("numVfs missing", drop("numVfs"),
     [f"{S}[3].rdmaNetwork.numVfs: sriov on pool 'h100-sriov' needs the number of virtual functions per NIC: "
      "set numVfs (1-128), e.g. 8"]),
    ("numVfs zero", net(numVfs=0),
     [f"{S}[3].rdmaNetwork.numVfs: Input should be greater than or equal to 1 (got 0)"]),
    ("numVfs above the operator's limit", net(numVfs=129),
     [f"{S}[3].rdmaNetwork.numVfs: Input should be less than or equal to 128 (got 129)"]),
    ("numVfs not a number", net(numVfs="eight"),
     [f"{S}[3].rdmaNetwork.numVfs: Input should be a valid integer, unable to parse string as an integer "
      "(got 'eight')"]),
    ("numVfs on a macvlan pool", net(2, numVfs=8),
     [f"{S}[2].rdmaNetwork.numVfs: only used with network sriov (pool 'a100-rdma' has network macvlan)"]),
    ("two vendors", net(vendors=["15b3", "8086"]),
     [f"{S}[3].rdmaNetwork.vendors: sriov selects NICs by one PCI vendor (SriovNetworkNodePolicy "
      "nicSelector.vendor) on pool 'h100-sriov' (got 15b3, 8086)"]),
    ("no vendor", net(vendors=[]),
     [f"{S}[3].rdmaNetwork.vendors: sriov selects NICs by one PCI vendor (SriovNetworkNodePolicy "
      "nicSelector.vendor) on pool 'h100-sriov' (got none)"]),
    ("two device ids", net(deviceIds=["101b", "101d"]),
     [f"{S}[3].rdmaNetwork.deviceIds: sriov selects NICs by at most one PCI device ID (SriovNetworkNodePolicy "
      "nicSelector.deviceID) on pool 'h100-sriov' (got 101b, 101d): use interfaces to pick NICs of several models"]),
    ("sriov beside host-device", net(2, network="host-device"),
     [f"{S}[3].rdmaNetwork.network: sriov on pool 'h100-sriov' cannot be combined with host-device on pool "
      "'a100-rdma': both deploy an SR-IOV device plugin (the SR-IOV operator's and the NicClusterPolicy's); use "
      "sriov or macvlan for every pool"]),
    ("unknown network type", net(network="sr-iov"),
     [f"{S}[3].rdmaNetwork.network: Input should be 'macvlan', 'host-device' or 'sriov' (got 'sr-iov')"]),
    ("misspelt numVfs", lambda c: c[P][3]["rdmaNetwork"].update(numVFs=8),
     [f"{S}[3].rdmaNetwork.numVFs: unknown key (allowed: vendors, deviceIds, interfaces, network, ipRange, "
      "gateway, perNodeBlockSize, namespace, rdmaHcaMax, numVfs; did you mean 'numVfs'?)"]),
]


@pytest.mark.parametrize("mutate,expected", [(m, e) for _, m, e in BAD], ids=[n for n, _, _ in BAD])
def test_bad_sriov_input_is_reported_exactly(mutate, expected):
    assert problems(mutate) == expected
