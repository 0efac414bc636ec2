"""Unit tests (layer 1): the sharing, rdmaNetwork and storage blocks — bad input gives exact errors."""

import copy

import pytest

from gpufleet.base import catalog, sharing
from gpufleet.base.spec import SpecError, load_spec
from tests.helpers import example_config, stack_file

P = "gpufleet:nodePools"
BASE = example_config("lab")  # [0] l4-shared time-slicing, [1] h100-mig MIG, [2] a100-rdma RDMA


def problems(mutate) -> list[str]:
    config = copy.deepcopy(BASE)
    mutate(config)
    sf = stack_file(config)
    try:
        load_spec(sf.stack, sf.config, sf.secret_keys)
    except SpecError as exc:
        return [str(p) for p in exc.problems]
    return []


def pool(i, **changes):
    return lambda c: c[P][i].update(changes)


def sharing_of(i, **changes):
    return lambda c: c[P][i]["sharing"].update(changes)


def rdma_net(**changes):
    return lambda c: c[P][2]["rdmaNetwork"].update(changes)


def _second_mig_pool(c):
    extra = copy.deepcopy(c[P][1])
    extra.update(name="h100-b", hosts=[{"name": "hb", "address": "203.0.113.99"}])
    extra["sharing"] = {"mode": "mig", "profile": "1g.10gb", "strategy": "single"}
    c[P].append(extra)


def _custom_and_conflicting_named(c):
    # all-balanced means different profiles on A100-40GB and H100-80GB; a custom layout forces one config.
    c[P][0].update(gpu="A100-40GB", sharing={"mode": "mig", "layout": "all-balanced"})
    c[P][1]["sharing"] = {"mode": "mig", "layout": "all-balanced"}
    c[P][2].update(rdma=False, sharing={"mode": "mig", "profiles": {"3g.40gb": 1, "4g.40gb": 1}})
    c[P][2].pop("rdmaNetwork")


S = "stack 'test': gpufleet:nodePools"
BAD = [
    ("replicas < 2", sharing_of(0, replicas=1),
     [f"{S}[0].sharing.replicas: must be >= 2 to share a GPU (got 1)"]),
    ("time-slicing without replicas", lambda c: c[P][0]["sharing"].pop("replicas"),
     [f"{S}[0].sharing.replicas: required for time-slicing on pool 'l4-shared': pods that share one GPU (>= 2)"]),
    ("failRequestsGreaterThanOne with mps", sharing_of(0, mode="mps"),
     [f"{S}[0].sharing.failRequestsGreaterThanOne: only used with time-slicing (pool 'l4-shared' has mode mps)"]),
    ("unknown mode", sharing_of(0, mode="timeslicing"),
     [f"{S}[0].sharing.mode: Input should be 'none', 'time-slicing', 'mps', 'mig' or 'partition' (got 'timeslicing')"]),
    ("MIG on a GPU without MIG", pool(0, sharing={"mode": "mig", "profile": "1g.10gb"}),
     [f"{S}[0].sharing.mode: GPU L4 of pool 'l4-shared' has no MIG "
      "(MIG GPUs: A100-40GB, A100-80GB, H100-80GB, H100-NVL, H200, B200, RTX-PRO-6000, B300, GB200, GB300)"]),
    ("unknown profile for the GPU", sharing_of(1, profile="1g.5gb"),
     [f"{S}[1].sharing.profile: profile '1g.5gb' does not exist on H100-80GB "
      "(allowed: 1g.10gb, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb)"]),
    ("layout of another GPU", pool(1, sharing={"mode": "mig", "layout": "all-3g.20gb"}),
     [f"{S}[1].sharing.layout: unknown layout 'all-3g.20gb' for H100-80GB (allowed: all-1g.10gb, all-1g.20gb, "
      "all-2g.20gb, all-3g.40gb, all-4g.40gb, all-7g.80gb, all-balanced; or use profiles)"]),
    ("unknown profile in a map", pool(1, sharing={"mode": "mig", "profiles": {"1g.5gb": 7}}),
     [f"{S}[1].sharing.profiles: pool 'h100-mig': profile '1g.5gb' does not exist on H100-80GB "
      "(allowed: 1g.10gb, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb)"]),
    ("MPS/time-slicing replicas with MIG", sharing_of(1, replicas=4),
     [f"{S}[1].sharing.replicas: not used with mig on pool 'h100-mig': MPS or time-slicing replicas cannot be "
      "combined with MIG on one pool"]),
    ("MIG without a layout", pool(1, sharing={"mode": "mig"}),
     [f"{S}[1].sharing: mig on pool 'h100-mig' needs one of profile (e.g. 1g.10gb), layout (e.g. all-balanced) "
      "or profiles"]),
    ("two MIG forms", pool(1, sharing={"mode": "mig", "profile": "1g.10gb", "layout": "all-balanced"}),
     [f"{S}[1].sharing: set only one of profile, layout or profiles on pool 'h100-mig' (got profile, layout)"]),
    ("layout larger than the GPU", pool(1, sharing={"mode": "mig", "profiles": {"3g.40gb": 2, "1g.10gb": 2}}),
     [f"{S}[1].sharing.profiles: pool 'h100-mig': the layout uses 8 compute slices; H100-80GB has 7",
      f"{S}[1].sharing.profiles: pool 'h100-mig': the layout uses 10 memory slices; H100-80GB has 8"]),
    ("more instances than fit", pool(1, sharing={"mode": "mig", "profiles": {"1g.10gb": 8}}),
     [f"{S}[1].sharing.profiles: pool 'h100-mig': at most 7 x 1g.10gb fit on one H100-80GB (got 8)",
      f"{S}[1].sharing.profiles: pool 'h100-mig': the layout uses 8 compute slices; H100-80GB has 7"]),
    ("zero instances", pool(1, sharing={"mode": "mig", "profiles": {"1g.10gb": 0}}),
     [f"{S}[1].sharing.profiles: instance counts must be >= 1 (got {{'1g.10gb': 0}})"]),
    ("single strategy with several profiles", pool(1, sharing={"mode": "mig", "layout": "all-balanced", "strategy": "single"}),
     [f"{S}[1].sharing.strategy: single needs one profile per GPU, but the layout of pool 'h100-mig' has 3 "
      "(1g.10gb, 2g.20gb, 3g.40gb): use mixed"]),
    ("MIG pools disagree on strategy", _second_mig_pool,
     [f"{S}[3].sharing.strategy: every MIG pool must use one strategy (the GPU Operator's mig.strategy is "
      "cluster-wide): pool 'h100-mig' uses mixed, pool 'h100-b' uses single"]),
    ("one layout name, two meanings", _custom_and_conflicting_named,
     [f"{S}[1].sharing: layout 'all-balanced' means {{'1g.5gb': 2, '2g.10gb': 1, '3g.20gb': 1}} on pool "
      "'l4-shared' but {'1g.10gb': 2, '2g.20gb': 1, '3g.40gb': 1} on pool 'h100-mig'; gpufleet writes one "
      "mig-parted config for the cluster: give one pool a profiles map"]),
    ("strategy without MIG", sharing_of(0, strategy="single"),
     [f"{S}[0].sharing.strategy: only used with mode mig (pool 'l4-shared' has mode time-slicing)"]),
    ("sharing on a pool with no GPU", lambda c: c[P][0].pop("gpu"),
     [f"{S}[0].gpu: required on k3s: the GPU model of the pool's hosts",
      f"{S}[0].sharing.mode: pool 'l4-shared' has no GPU model (`gpu`), so there is nothing to share with "
      "time-slicing"]),
    ("macvlan without its master interface", lambda c: c[P][2]["rdmaNetwork"].pop("interfaces"),
     [f"{S}[2].rdmaNetwork.interfaces: macvlan on pool 'a100-rdma' needs the RDMA interface as its master: "
      "set interfaces, e.g. [ens1f0np0]"]),
    ("rdmaNetwork without rdma", pool(2, rdma=False),
     [f"{S}[2].rdmaNetwork: only used with rdma: true (pool 'a100-rdma' has rdma: false)"]),
    ("ipRange with host bits", rdma_net(ipRange="192.168.100.1/24"),
     [f"{S}[2].rdmaNetwork.ipRange: not a network in CIDR form, e.g. 192.168.100.0/24 "
      "(192.168.100.1/24 has host bits set)"]),
    ("vendor not a PCI id", rdma_net(vendors=["mellanox"]),
     [f"{S}[2].rdmaNetwork.vendors: PCI IDs are 4 hex digits, e.g. '15b3' (got 'mellanox')"]),
    ("gateway outside the range", rdma_net(gateway="10.0.0.1"),
     [f"{S}[2].rdmaNetwork.gateway: 10.0.0.1 is not inside ipRange 192.168.100.0/24"]),
    ("address blocks larger than the range", rdma_net(ipRange="192.168.100.0/28", perNodeBlockSize=8),
     [f"{S}[2].rdmaNetwork.perNodeBlockSize: 2 nodes x 8 addresses do not fit in ipRange 192.168.100.0/28 "
      "(14 usable): use a larger range or a smaller block"]),
    ("checkpoints without NFS", lambda c: c["gpufleet:storage"].pop("nfs"),
     ["stack 'test': gpufleet:storage.checkpoints: needs storage.nfs: the checkpoint claim is ReadWriteMany on "
      "the NFS class"]),
    ("local-path with k3s's provisioner disabled",
     lambda c: c["gpufleet:cluster"]["k3s"].update(disable=["traefik", "local-storage"]),
     ["stack 'test': gpufleet:storage.localPath.enabled: k3s's local-path provisioner is disabled "
      "(cluster.k3s.disable has local-storage): remove it from disable, or set localPath.enabled: false"]),
    ("relative NFS share", lambda c: c["gpufleet:storage"]["nfs"].update(share="export"),
     ["stack 'test': gpufleet:storage.nfs.share: must be an absolute path, e.g. /export/gpufleet (got 'export')"]),
    ("sharing without the GPU Operator", lambda c: c.update({"gpufleet:gpuOperator": {"enabled": False}}),
     [f"{S}[0].sharing.mode: GPU sharing is configured through the GPU Operator: set gpuOperator.enabled: true "
      "or sharing mode none"] + [
         f"{S}[{i}]: nothing would advertise pool '{name}''s nvidia.com/gpu: gpufleet:gpuOperator.enabled is false "
         "and k3s hosts have no device plugin of their own; turn the operator on"
         for i, name in enumerate(("l4-shared", "h100-mig", "a100-rdma"))]),
    ("unknown storage key", lambda c: c["gpufleet:storage"].update(nsf={}),
     ["stack 'test': gpufleet:storage.nsf: unknown key (allowed: localPath, nfs, checkpoints; did you mean 'nfs'?)"]),
]


@pytest.mark.parametrize("mutate,expected", [(m, e) for _, m, e in BAD], ids=[n for n, _, _ in BAD])
def test_bad_input_is_reported_exactly(mutate, expected):
    assert problems(mutate) == expected


def test_lab_stack_is_valid():
    assert problems(lambda c: None) == []


@pytest.mark.parametrize("block,resources", [
    ({"mode": "time-slicing", "replicas": 4}, {"nvidia.com/gpu": 32}),
    ({"mode": "time-slicing", "replicas": 4, "renameByDefault": True}, {"nvidia.com/gpu.shared": 32}),
    ({"mode": "mps", "replicas": 10}, {"nvidia.com/gpu": 80}),
    ({"mode": "mig", "profile": "1g.10gb"}, {"nvidia.com/mig-1g.10gb": 56}),
    ({"mode": "mig", "profile": "1g.10gb", "strategy": "single"}, {"nvidia.com/gpu": 56}),
    ({"mode": "mig", "layout": "all-balanced"},
     {"nvidia.com/mig-1g.10gb": 16, "nvidia.com/mig-2g.20gb": 8, "nvidia.com/mig-3g.40gb": 8}),
    ({"mode": "mig", "profiles": {"4g.40gb": 1, "3g.40gb": 1}}, {"nvidia.com/mig-4g.40gb": 8, "nvidia.com/mig-3g.40gb": 8}),
])
def test_advertised_resources_per_node(block, resources):
    config = copy.deepcopy(BASE)
    config[P][1]["sharing"] = block  # 8 x H100-80GB per node
    sf = stack_file(config)
    spec = load_spec(sf.stack, sf.config, sf.secret_keys)
    assert sharing.advertised(spec.node_pools[1]) == resources


def test_profile_count_depends_on_the_gpu():
    config = copy.deepcopy(BASE)
    config[P][1]["gpu"] = "A100-40GB"
    config[P][1]["sharing"] = {"mode": "mig", "profile": "1g.10gb"}
    sf = stack_file(config)
    spec = load_spec(sf.stack, sf.config, sf.secret_keys)
    assert sharing.mig_devices(spec.node_pools[1].sharing, catalog.gpu("A100-40GB")) == {"1g.10gb": 4}
    assert sharing.explain(spec.node_pools[1]) == (
        "8 GPUs x 4 = 32 nvidia.com/mig-1g.10gb (MIG all-1g.10gb, mixed strategy)"
    )
