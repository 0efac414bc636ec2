"""Unit tests (layer 1): the GKE spec (cluster.gke, nodePools[*] on gke) and the GCP machine catalog."""

import copy

from gpufleet.base import catalog
from gpufleet.base.catalog import gcp
from gpufleet.base.capacity import capacity, cost
from tests.helpers import example_config
from tests.helpers import load_config as load
from tests.helpers import spec_problems as problems

BASE = example_config("prod-gke")
MIG_GPUS = "A100-40GB, A100-80GB, H100-80GB, H100-NVL, H200, B200, RTX-PRO-6000, B300, GB200, GB300"


def with_pool(**pool) -> dict:
    config = copy.deepcopy(BASE)
    config["gpufleet:nodePools"] = [{"name": "p", **pool}]
    return config


def test_example_stack_is_valid():
    spec = load(BASE)
    assert spec.cluster.platform == "gke"
    assert spec.cluster.gke.region == "us-central1" and spec.cluster.gke.zone is None  # regional
    assert [p.machine_type for p in spec.node_pools] == ["a3-highgpu-8g", "g2-standard-8"]


def test_mig_on_l4_is_rejected():
    assert problems(with_pool(machineType="g2-standard-8", gke={"gpuPartitionSize": "1g.10gb"})) == [
        "stack 'test': gpufleet:nodePools[0].gke.gpuPartitionSize: MIG needs a MIG-capable GPU; "
        f"g2-standard-8 has L4 (MIG GPUs: {MIG_GPUS}) (got '1g.10gb')"
    ]


def test_mps_with_mig_on_one_pool_is_rejected():
    config = with_pool(machineType="a2-ultragpu-1g",
                       gke={"gpuPartitionSize": "1g.10gb", "gpuSharing": {"strategy": "mps", "maxSharedClientsPerGpu": 2}})
    assert problems(config) == [
        "stack 'test': gpufleet:nodePools[0].gke.gpuSharing.strategy: MPS is not supported together with MIG on one pool "
        "(use time-sharing with gpuPartitionSize, or MPS without it) (got 'mps')"
    ]


def test_time_sharing_on_mig_partitions_is_allowed():
    spec = load(with_pool(machineType="a2-ultragpu-1g",
                          gke={"gpuPartitionSize": "1g.10gb", "gpuSharing": {"strategy": "time-sharing", "maxSharedClientsPerGpu": 2}}))
    assert spec.node_pools[0].gke.gpu_partition_size == "1g.10gb"


def test_partition_size_must_be_a_profile_of_the_gpu():
    assert problems(with_pool(machineType="a3-highgpu-8g", gke={"gpuPartitionSize": "1g.5gb"})) == [
        "stack 'test': gpufleet:nodePools[0].gke.gpuPartitionSize: not a MIG profile of H100-80GB "
        "(allowed: 1g.10gb, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb) (got '1g.5gb')"
    ]


def test_gpudirect_on_a_machine_without_it_is_rejected():
    assert problems(with_pool(machineType="g2-standard-8", rdma=True)) == [
        "stack 'test': gpufleet:nodePools[0].rdma: GPUDirect is not available on g2-standard-8 "
        "(machine types with GPUDirect: a3-highgpu-8g, a3-megagpu-8g, a3-ultragpu-8g, a4-highgpu-8g, a4x-highgpu-4g) (got True)"
    ]


def test_accelerator_count_the_machine_does_not_take_is_rejected():
    assert problems(with_pool(machineType="g2-standard-8", acceleratorCount=4)) == [
        "stack 'test': gpufleet:nodePools[0].acceleratorCount: g2-standard-8 takes 1 x nvidia-l4 (allowed: 1) (got 4)"
    ]
    assert problems(with_pool(machineType="n1-standard-8", acceleratorCount=3)) == [
        "stack 'test': gpufleet:nodePools[0].acceleratorCount: n1-standard-8 takes 1, 2, 4 x nvidia-tesla-t4 (allowed: 1, 2, 4) (got 3)"
    ]


def test_attachable_gpus_need_a_count():
    assert problems(with_pool(machineType="n1-standard-8")) == [
        "stack 'test': gpufleet:nodePools[0].acceleratorCount: required for n1-standard-8: how many nvidia-tesla-t4 "
        "to attach (allowed: 1, 2, 4)"
    ]


def test_machine_type_required_and_known():
    assert problems(with_pool()) == [
        "stack 'test': gpufleet:nodePools[0].machineType: required on gke: a GPU machine type, e.g. g2-standard-8 or a3-highgpu-8g"
    ]
    [msg] = problems(with_pool(machineType="g2-standard-9"))
    assert msg.startswith("stack 'test': gpufleet:nodePools[0].machineType: not a GPU machine type gpufleet knows (allowed: n1-standard-4,")
    assert msg.endswith("(got 'g2-standard-9')")


def test_k3s_fields_are_rejected_on_gke():
    assert problems(with_pool(machineType="g2-standard-8", gpu="L4", gpusPerNode=1)) == [
        "stack 'test': gpufleet:nodePools[0].gpu: not used on gke: it follows from machineType; remove it",
        "stack 'test': gpufleet:nodePools[0].gpusPerNode: not used on gke: it follows from machineType; remove it",
    ]


def hyperdisk(config: dict) -> dict:
    """A3 Ultra/A4 pools attach Hyperdisk only: the default StorageClass and the system pool must match (issue 14)."""
    gke = config["gpufleet:cluster"]["gke"]
    gke["storage"] = {**gke.get("storage", {}), "defaultDiskType": "hyperdisk-balanced"}
    gke["systemPool"] = {**gke.get("systemPool", {}), "machineType": "c3-standard-4"}
    return config


def test_rdma_needs_one_zone():
    assert problems(hyperdisk(with_pool(machineType="a3-ultragpu-8g", rdma=True))) == [
        "stack 'test': gpufleet:nodePools[0].gke.zones: GPUDirect RDMA on a3-ultragpu-8g needs exactly one zone "
        "(the RoCE network profile is zonal) (got [])"
    ]


def test_spot_pools_cannot_consume_reservations():
    config = with_pool(machineType="g2-standard-8", capacity="spot", gke={"reservation": {"type": "specific", "name": "r1"}})
    assert problems(config) == [
        "stack 'test': gpufleet:nodePools[0].gke.reservation.type: spot nodes cannot consume reservations "
        "(allowed with spot: none) (got 'specific')"
    ]


def test_every_problem_is_reported_at_once():
    config = copy.deepcopy(BASE)
    config["gpufleet:nodePools"] = [
        {"name": "a", "machineType": "g2-standard-8", "gke": {"gpuPartitionSize": "1g.10gb"}},
        {"name": "b", "machineType": "g2-standard-8", "rdma": True},
        {"name": "c", "machineType": "g2-standard-8", "acceleratorCount": 2},
    ]
    del config["gcp:project"]
    got = problems(config)
    assert [g.split(": ")[1] for g in got] == [
        "gcp:project", "gpufleet:nodePools[0].gke.gpuPartitionSize", "gpufleet:nodePools[1].rdma",
        "gpufleet:nodePools[2].acceleratorCount",
    ]


def test_gke_block_and_version_are_checked():
    config = copy.deepcopy(BASE)
    del config["gpufleet:cluster"]["gke"]
    assert "platform gke needs a `gke:` block with at least a `region`" in problems(config)[0]
    config = copy.deepcopy(BASE)
    config["gpufleet:cluster"]["kubernetesVersion"] = "1.29"
    assert problems(config) == [
        "stack 'test': gpufleet:cluster.kubernetesVersion: '1.29' is not a GKE version gpufleet plans for "
        "(allowed: 1.32, 1.33, 1.34, 1.35, 1.36)"
    ]


def test_private_endpoint_needs_private_nodes():
    config = copy.deepcopy(BASE)
    config["gpufleet:cluster"]["gke"].update(privateNodes=False, privateEndpoint=True)
    assert problems(config) == [
        "stack 'test': gpufleet:cluster.gke: privateEndpoint needs privateNodes: true "
        "(a private control plane has no route to public nodes)"
    ]


def test_gpu_operator_only_when_the_gpu_stack_asks():
    config = copy.deepcopy(BASE)
    config["gpufleet:nodePools"][1]["gke"].pop("gpuDriverVersion")  # the example's l4-infer runs LATEST (issue 49)
    config["gpufleet:gpuOperator"] = {"enabled": True}
    assert problems(config) == [
        "stack 'test': gpufleet:gpuOperator.enabled: on gke the GPU Operator runs only with cluster.gke.gpuStack: operator "
        "(default gke: GKE installs the driver and device plugin); set enabled: false or gpuStack: operator"
    ]
    config["gpufleet:cluster"]["gke"]["gpuStack"] = "operator"
    del config["gpufleet:nodePools"][0]["rdma"]  # GPUDirect needs COS nodes (test_gpudirect_with_the_gpu_operator_stack_is_rejected)
    config["gpufleet:gpuOperator"] = {"driver": {"source": "preinstalled"}}
    assert problems(config) == [
        "stack 'test': gpufleet:gpuOperator.driver.source: with cluster.gke.gpuStack: operator the operator installs the driver "
        "(GKE's driver installation is disabled; allowed: operator) (got 'preinstalled')",
        "stack 'test': gpufleet:nodePools[0].gke.gpuDriverVersion: not used with cluster.gke.gpuStack: operator "
        "(GKE's driver installation is disabled; the operator installs the driver) (got 'LATEST')",
    ]


def test_cuda_must_run_on_gkes_driver():
    config = copy.deepcopy(BASE)
    config["gpufleet:nodePools"][1]["gke"].pop("gpuDriverVersion")  # the example's l4-infer runs LATEST (issue 49)
    config["gpufleet:cluster"]["kubernetesVersion"] = "1.34"  # the newest minor with a recorded driver branch
    config["gpufleet:workloads"] = {"cudaVersions": ["13.0"]}
    got = problems(config)
    # GKE 1.34 LATEST installs a branch >= 580 (rapidsai/deployment#656, #659): CUDA 13 runs there; DEFAULT
    # (R535) cannot run it.
    assert len(got) == 1
    assert got[0] == (
        "stack 'test': gpufleet:nodePools[1].gke.gpuDriverVersion: GKE 1.34 installs driver branch 535 for DEFAULT, "
        "which cannot run CUDA 13.0 from workloads.cudaVersions: use LATEST, or cluster.gke.gpuStack: operator "
        "with a newer driver (got 'DEFAULT')"
    )


def test_cuda_13_on_gke_133_latest_still_refused():
    config = copy.deepcopy(BASE)
    config["gpufleet:cluster"]["kubernetesVersion"] = "1.33"
    config["gpufleet:workloads"] = {"cudaVersions": ["13.0"]}
    assert problems(config)[0].startswith(
        "stack 'test': gpufleet:nodePools[0].gke.gpuDriverVersion: GKE 1.33 installs driver branch 570 for LATEST"
    )


def test_gke_fields_are_rejected_on_k3s():
    config = example_config("dev")
    config["gpufleet:nodePools"][0]["machineType"] = "g2-standard-8"
    config["gpufleet:nodePools"][0]["instanceType"] = "g6.xlarge"
    assert problems(config) == [
        "stack 'test': gpufleet:nodePools[0].instanceType: not used on k3s: eks pools only; remove it",
        "stack 'test': gpufleet:nodePools[0].machineType: not used on k3s: gke pools only; remove it",
    ]


# ---- catalog ----------------------------------------------------------------------------------------

def test_catalog_machines_name_known_gpus_and_sources():
    sources = catalog._load(gcp.FILE)["sources"]
    for m in gcp.machines().values():
        assert m.gpu in catalog.gpu_models(), m.name
        assert set(m.sources) <= set(sources), m.name
        # spot None: no sourced figure (a4-highgpu-8g), unpriced rather than guessed (issue 12).
        assert m.spot is None or m.spot > 0, m.name
        if m.on_demand is not None and m.spot is not None:
            assert m.on_demand > m.spot, m.name
        # Not sold on-demand and not through a reservation: no on-demand price to invent (issue 12). A machine sold
        # on-demand may still have no price (a4x-highgpu-4g: none read), but then it cites no pricing source.
        if not m.sold_on_demand and not m.on_demand_needs_reservation:
            assert m.on_demand is None, m.name
        elif m.on_demand is None:
            assert "gce_pricing" not in m.sources, m.name
    assert gcp.price_date() == "2026-12-02"


def test_catalog_gpudirect_kinds():
    kinds = {n: (m.gpudirect.kind, m.gpudirect.additional_node_networks) for n, m in gcp.machines().items() if m.gpudirect}
    assert kinds == {
        "a3-highgpu-8g": ("TCPX", 4), "a3-megagpu-8g": ("TCPXO", 8),
        "a3-ultragpu-8g": ("RDMA", 9), "a4-highgpu-8g": ("RDMA", 9),
        "a4x-highgpu-4g": ("RDMA", 5),  # RoCE NICs: cluster-toolkit attaches them (issue 49, gcp_machines.yaml)
    }
    assert gcp.machine("a3-megagpu-8g").accelerator == "nvidia-h100-mega-80gb"
    assert gcp.machine("a4-highgpu-8g").gpu == "B200"


def test_capacity_and_cost_come_from_the_catalog():
    spec = load(BASE)
    h100, l4 = capacity(spec)
    assert (h100.gpu, h100.gpus_per_node, h100.max_gpus, h100.price_per_node_hour) == ("H100-80GB", 8, 32, 88.49)
    assert (l4.gpu, l4.capacity_type, l4.price_per_node_hour) == ("L4", "spot", 0.34)
    assert l4.advertised == {"nvidia.com/gpu": 4}  # time-shared 4 ways
    assert cost([h100, l4]) == {"hourlyMin": 0.0, "hourlyMax": round(4 * 88.49 + 8 * 0.34, 4), "currency": "USD", "unpricedPools": []}


def test_mig_partitions_multiply_advertised_gpus():
    spec = load(with_pool(machineType="a2-ultragpu-1g", gke={"gpuPartitionSize": "1g.10gb"}))
    assert capacity(spec)[0].advertised == {"nvidia.com/gpu": 7}


def test_unknown_gke_keys_name_the_allowed_ones():
    config = copy.deepcopy(BASE)
    config["gpufleet:cluster"]["gke"]["privateNode"] = True
    config["gpufleet:nodePools"][1]["gke"]["gpuSharng"] = {}
    got = problems(config)
    assert got[0].startswith("stack 'test': gpufleet:cluster.gke.privateNode: unknown key (allowed: project, region, zone,")
    assert got[0].endswith("; did you mean 'privateNodes'?)")
    assert got[1].startswith("stack 'test': gpufleet:nodePools[1].gke.gpuSharng: unknown key (allowed: gpuDriverVersion, gpuSharing,")


def test_hyperdisk_only_machines_boot_from_hyperdisk():
    machines = gcp.machines()
    assert {n for n, m in machines.items() if m.boot_disk != "pd-balanced"} == {"a3-ultragpu-8g", "a4-highgpu-8g", "a4x-highgpu-4g", "a4x-maxgpu-4g-metal"}
    assert machines["a3-ultragpu-8g"].boot_disk == "hyperdisk-balanced" and "hyperdisk_only" in machines["a4-highgpu-8g"].sources


def test_gpudirect_with_the_gpu_operator_stack_is_rejected():
    """GPUDirect pools get gVNIC, which GKE supports on Container-Optimized OS only; gpuStack operator runs Ubuntu."""
    config = copy.deepcopy(BASE)
    config["gpufleet:nodePools"][1]["gke"].pop("gpuDriverVersion")  # the example's l4-infer runs LATEST (issue 49)
    config["gpufleet:cluster"]["gke"]["gpuStack"] = "operator"
    config["gpufleet:gpuOperator"] = {"driver": {"source": "operator"}}
    del config["gpufleet:nodePools"][0]["gke"]["gpuDriverVersion"]
    assert problems(config) == [
        "stack 'test': gpufleet:nodePools[0].rdma: GPUDirect on gke needs gVNIC, which needs Container-Optimized OS nodes; "
        "cluster.gke.gpuStack operator runs Ubuntu nodes (use gpuStack: gke, or rdma: false) (got True)"
    ]


def test_gcs_fuse_needs_workload_identity():
    config = copy.deepcopy(BASE)
    config["gpufleet:cluster"]["gke"].update(workloadIdentity=False, storage={"gcsFuse": True})
    assert problems(config) == [
        "stack 'test': gpufleet:cluster.gke.storage.gcsFuse: the Cloud Storage FUSE CSI driver needs Workload Identity "
        "(set cluster.gke.workloadIdentity: true, or gcsFuse: false) (got True)"
    ]


def test_cluster_name_must_be_a_gke_cluster_name():
    """GKE cluster names are at most 40 characters, lowercase, starting with a letter; without cluster.name the
    cluster takes the stack name, which Pulumi allows to be longer and to hold '_', '.' and capitals."""
    config = copy.deepcopy(BASE)
    del config["gpufleet:cluster"]["name"]
    for stack in ("prod_gke", "training-" + "x" * 32):
        assert problems(config, stack) == [
            f"stack '{stack}': gpufleet:cluster.name: not a GKE cluster name (the stack name, as cluster.name is not set): "
            f"lowercase letters, digits and '-', starting with a letter, at most 40 characters (got '{stack}')"
        ]
    assert load(config, "training-" + "x" * 31).cluster.name is None  # 40 characters
    config["gpufleet:cluster"]["name"] = "1st-cluster"
    assert problems(config) == [
        "stack 'test': gpufleet:cluster.name: not a GKE cluster name: lowercase letters, digits and '-', "
        "starting with a letter, at most 40 characters (got '1st-cluster')"
    ]


def test_gpudirect_pool_name_fits_gkes_network_object_names():
    """GKE caps Device-type Network object names at 41 characters; gpufleet names them <pool>-<nic>."""
    config = copy.deepcopy(BASE)
    config["gpufleet:nodePools"][0]["name"] = "h" * 36  # + "-vpc-3" = 42
    assert problems(config) == [
        f"stack 'test': gpufleet:nodePools[0].name: too long for a GPUDirect pool: its GKE Network objects <pool>-vpc-3 "
        f"must stay within 41 characters (at most 35 here) (got '{'h' * 36}')"
    ]
    config["gpufleet:nodePools"][0]["name"] = "h" * 35
    load(config)


def test_gpudirect_cidr_must_hold_every_pools_subnets():
    config = copy.deepcopy(BASE)
    config["gpufleet:cluster"]["gke"]["network"] = {"gpuDirectCidr": "192.168.0.0/23", "gpuDirectSubnetPrefix": 24}
    assert problems(config) == [
        "stack 'test': gpufleet:cluster.gke.network.gpuDirectCidr: room for 2 /24 subnets, but the GPUDirect pools need 4 "
        "(one per extra NIC of each pool); use a larger IPv4 range (or a longer cluster.gke.network.gpuDirectSubnetPrefix) "
        "(got '192.168.0.0/23')"
    ]


def test_keda_on_managed_prometheus_needs_workload_identity():
    """KEDA's operator queries Managed Service for Prometheus as a Google service account through Workload Identity
    (components/gke/keda_identity.py): without it the stack is refused, not silently left without credentials."""
    config = copy.deepcopy(BASE)
    config["gpufleet:cluster"]["gke"]["workloadIdentity"] = False
    config["gpufleet:addons"] = {"keda": {"enabled": True}}
    assert problems(config) == [
        "stack 'test': gpufleet:cluster.gke.workloadIdentity: KEDA (addons.keda.enabled) queries GKE's managed "
        "Prometheus (metrics backend gke-managed) through Workload Identity (set cluster.gke.workloadIdentity: true, "
        "turn KEDA off, or choose another metrics backend) (got False)"
    ]
    # Without the managed backend KEDA needs no Google identity, and without KEDA nothing needs Workload Identity.
    config["gpufleet:observability"] = {"metrics": {"backend": "none"}}
    assert load(config).addons.keda.enabled
    config["gpufleet:observability"] = {}
    config["gpufleet:addons"] = {"keda": {"enabled": False}}
    assert load(config).observability.backend("gke") == "gke-managed"
