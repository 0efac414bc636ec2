"""Unit tests (layer 1): the EKS spec, its cross checks and the EC2 instance catalog."""

import pytest

from gpufleet.base import catalog, versions
from gpufleet.base.catalog import aws as aws_catalog
from gpufleet.base.catalog import dra as dra_catalog
from gpufleet.base.spec import SpecError, load_spec
from tests.helpers import example_config, stack_file


def _load(cfg):
    sf = stack_file(cfg, "bad")
    return load_spec(sf.stack, sf.config, sf.secret_keys)


def _problems(cfg) -> list[str]:
    with pytest.raises(SpecError) as err:
        _load(cfg)
    return [str(p) for p in err.value.problems]


def _pool(cfg, i=0):
    return cfg["gpufleet:nodePools"][i]


def _eks(cfg):
    return cfg["gpufleet:cluster"]["eks"]


def _existing_network(cfg):
    _eks(cfg)["network"] = {
        "vpcId": "vpc-0abc12345678",
        "subnets": [
            {"id": "subnet-0aaa1111", "availabilityZone": "us-east-1a"},
            {"id": "subnet-0bbb2222", "availabilityZone": "us-east-1b"},
        ],
    }
    del _pool(cfg)["availabilityZone"]
    _eks(cfg).pop("storage")


def test_example_is_valid():
    spec = _load(example_config("prod-eks"))
    assert spec.cluster.platform == "eks"
    assert spec.cluster.eks.network.zones() == ["us-east-1a", "us-east-1b", "us-east-1c"]
    assert spec.node_pools[0].instance_type == "p5.48xlarge" and spec.node_pools[0].rdma


P = "stack 'bad': gpufleet:nodePools[0]"

CASES = {
    "efa on a type without it": (
        lambda c: _pool(c).update(instanceType="g6.xlarge"),
        [f"{P}.instanceType: g6.xlarge has no EFA: rdma needs an EFA instance type (EFA GPU types: g4dn.12xlarge, g5.8xlarge, "
         "g5.16xlarge, g5.24xlarge, g5.12xlarge, g5.48xlarge, g6.8xlarge, g6.16xlarge, g6.24xlarge, g6.12xlarge, g6.48xlarge, "
         "g6e.12xlarge, g6e.48xlarge, p4d.24xlarge, p4de.24xlarge, p5.48xlarge, "
         "p5e.48xlarge, p5en.48xlarge, p6-b200.48xlarge, g7.8xlarge, g7.12xlarge, g7.24xlarge, g7.48xlarge, g7e.8xlarge, "
         "g7e.12xlarge, g7e.24xlarge, g7e.48xlarge, p6-b300.48xlarge, g4dn.16xlarge, g4dn.8xlarge, g4dn.metal, g6e.16xlarge, "
         "g6e.24xlarge, g6e.8xlarge, gr6.8xlarge, p5.4xlarge) (got 'g6.xlarge')"],
    ),
    "unknown instance type": (
        lambda c: _pool(c).update(instanceType="p5.48xlarg"),
        [f"{P}.instanceType: unknown EC2 instance type (known: " + ", ".join(sorted(aws_catalog.instance_types()))
         + "; did you mean 'p5.48xlarge'?); a real type the catalog lacks plans when the pool gives its own gpu and "
         "gpusPerNode (and pricePerNodeHour) (got 'p5.48xlarg')"],
    ),
    # issue 32: GB200/GB300 UltraServer families are GPU families; a size without a catalog row is named as such
    "grace blackwell type without a catalog row": (
        lambda c: _pool(c).update(instanceType="p6e-gb300.36xlarge"),
        [f"{P}.instanceType: p6e-gb300.36xlarge is an NVIDIA GPU instance type (family p6e-gb300), but gpufleet's catalog "
         "has no facts for this size yet (GPU count, network cards, EFA interfaces, price): give the pool's own gpu and "
         "gpusPerNode (and pricePerNodeHour), add its row to gpufleet/base/catalog/aws_instances.yaml with its sources, "
         "or use a catalogued type (GPU types: "
         f"{', '.join(aws_catalog.gpu_instance_types())}) (got 'p6e-gb300.36xlarge')",
         # issue 34: no AWS document read sizes P6e-GB300 UltraServers (catalog dra.yaml `unsourced`)
         f"{P}.instanceType: gpufleet cannot size p6e-gb300.36xlarge: {dra_catalog.unsourced('eks', 'p6e-gb300.36xlarge')}. "
         "Known multi-node NVLink machines are in gpufleet/base/catalog/dra.yaml (got 'p6e-gb300.36xlarge')"],
    ),
    "gpu pool with a cpu type": (
        lambda c: _pool(c, 1).update(instanceTypes=["m7i.xlarge"]),
        ["stack 'bad': gpufleet:nodePools[1].instanceTypes[0]: m7i.xlarge has no GPU: a GPU pool needs a GPU instance type "
         f"(GPU types: {', '.join(aws_catalog.gpu_instance_types())}) (got 'm7i.xlarge')"],
    ),
    "no instance type": (
        lambda c: _pool(c, 1).pop("instanceTypes"),
        ["stack 'bad': gpufleet:nodePools[1].instanceType: required on eks: the pool's EC2 GPU instance type, e.g. "
         "p5.48xlarge (or instanceTypes: several of one GPU shape)"],
    ),
    "mixed GPU shapes": (
        lambda c: _pool(c, 1).update(instanceTypes=["g6.xlarge", "g6.12xlarge"]),
        ["stack 'bad': gpufleet:nodePools[1].instanceTypes: a pool's instance types must share one GPU shape "
         "(g6.xlarge = 1 x L4, g6.12xlarge = 4 x L4)"],
    ),
    "both instanceType and instanceTypes": (
        lambda c: _pool(c).update(instanceTypes=["p5.48xlarge"]),
        [f"{P}.instanceTypes: give instanceType or instanceTypes, not both"],
    ),
    "efa pool with subnets in several zones": (
        lambda c: (_existing_network(c), _pool(c).update(subnetIds=["subnet-0aaa1111", "subnet-0bbb2222"])),
        [f"{P}.subnetIds: an EFA pool (rdma: true) must run in one availability zone, but its subnets are in us-east-1a, us-east-1b"],
    ),
    "unknown subnet": (
        lambda c: (_existing_network(c), _pool(c).update(subnetIds=["subnet-0ccc3333"])),
        [f"{P}.subnetIds[0]: not one of cluster.eks.network.subnets (allowed: subnet-0aaa1111, subnet-0bbb2222) (got 'subnet-0ccc3333')"],
    ),
    "zone outside the network": (
        lambda c: _pool(c).update(availabilityZone="us-east-1f"),
        [f"{P}.availabilityZone: not one of the network's zones (allowed: us-east-1a, us-east-1b, us-east-1c) (got 'us-east-1f')"],
    ),
    "k3s-only fields on eks": (
        lambda c: _pool(c).update(gpu="H100-80GB", gpusPerNode=8),
        [f"{P}.gpu: not used on eks: it follows from the instance type; remove it",
         f"{P}.gpusPerNode: not used on eks: it follows from the instance type; remove it"],
    ),
    "driver from the operator on eks": (
        lambda c: c["gpufleet:gpuOperator"].update(driver={"source": "operator"}),
        ["stack 'bad': gpufleet:gpuOperator.driver.source: EKS GPU AMIs ship the NVIDIA driver and toolkit; the operator "
         "must not install them (allowed on eks: preinstalled) (got 'operator')"],
    ),
    "unsupported kubernetes version": (
        lambda c: c["gpufleet:cluster"].update(kubernetesVersion="1.29"),
        ["stack 'bad': gpufleet:cluster.kubernetesVersion: '1.29' is not an EKS version gpufleet plans for "
         f"(allowed: {', '.join(versions.EKS_KUBERNETES_VERSIONS)})"],
    ),
    "missing eks block": (
        lambda c: c["gpufleet:cluster"].pop("eks"),
        ["stack 'bad': gpufleet:cluster.eks: platform eks needs an `eks:` block with at least `network`"],
    ),
    "one zone": (
        lambda c: _eks(c).update(network={"availabilityZones": ["us-east-1a"]}),
        ["stack 'bad': gpufleet:cluster.eks.network: EKS needs subnets in at least 2 availability zones (got 1)"],
    ),
    "api open to the internet": (
        lambda c: _eks(c).update(endpoint={"publicAccessCidrs": ["0.0.0.0/0"]}),
        ["stack 'bad': gpufleet:cluster.eks.endpoint.publicAccessCidrs: 0.0.0.0/0: together these open the API to the "
         "internet (more than a /8's worth of public addresses); allowed: your own networks, or a private endpoint"],
    ),
    "fsx s3 link on persistent_2": (
        lambda c: _eks(c)["storage"]["fsxLustre"].update(s3ImportPath="s3://datasets"),
        ["stack 'bad': gpufleet:cluster.eks.storage.fsxLustre: s3ImportPath needs deploymentType SCRATCH_2 or PERSISTENT_1 "
         "(PERSISTENT_2 links S3 through data repository associations)"],
    ),
    "max zero": (
        lambda c: _pool(c).update(maxNodes=0),
        [f"{P}.maxNodes: an EKS managed node group needs maxNodes >= 1 (got 0)"],
    ),
    "no region": (
        lambda c: c.pop("aws:region"),
        ["stack 'bad': aws:region: required for eks: the AWS region (`pulumi config set aws:region us-east-1`)"],
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_is_reported_exactly(case):
    mutate, expected = CASES[case]
    cfg = example_config("prod-eks")
    mutate(cfg)
    assert _problems(cfg) == expected


def test_bottlerocket_runs_cuda_13():
    """Bottlerocket NVIDIA AMIs ship R580 since January 2026 (bottlerocket-os/bottlerocket-kernel-kit#254):
    CUDA 13.0 on a Bottlerocket pool is valid (issue 12; it was refused on a stale R570 fact)."""
    cfg = example_config("prod-eks")
    _pool(cfg, 1).update(ami="bottlerocket-nvidia")
    cfg["gpufleet:workloads"]["cudaVersions"] = ["12.8", "13.0"]
    _load(cfg)  # no SpecError


def test_all_problems_at_once():
    cfg = example_config("prod-eks")
    _pool(cfg).update(instanceType="g6.xlarge")
    _pool(cfg, 1).update(instanceTypes=["m7i.xlarge"])
    cfg["gpufleet:cluster"]["eks"]["storage"]["fsxLustre"]["availabilityZone"] = "us-west-2a"
    problems = _problems(cfg)
    # The FSx zone is wrong twice over: not one of the network's zones, and not in aws:region at all.
    assert len(problems) == 4
    assert sum("fsxLustre.availabilityZone" in p for p in problems) == 2


def test_al2023_driver_runs_every_cuda_the_table_knows():
    cfg = example_config("prod-eks")
    cfg["gpufleet:workloads"]["cudaVersions"] = catalog.cuda_versions()
    assert _load(cfg).workloads.cuda_versions  # 580 branch: CUDA 12.x and 13.x minor-version compatible


def test_catalog_facts_and_sources():
    p5 = aws_catalog.instance_type("p5.48xlarge")
    assert (p5.gpu, p5.gpus, p5.network_cards, p5.efa_interfaces) == ("H100-80GB", 8, 32, 32)
    assert aws_catalog.instance_type("p4d.24xlarge").efa_interfaces == 4
    assert not aws_catalog.instance_type("g6.xlarge").has_efa
    data = catalog._load("aws_instances.yaml")
    known_sources = set(data["sources"])
    for name, t in aws_catalog.instance_types().items():
        assert t.sources and set(t.sources) <= known_sources, name
        assert t.gpu is None or t.gpu in catalog.gpu_models(), name
        if t.on_demand is not None:
            # every price names where it was read: the pricing page, or the Price List API via Karpenter's generated table
            assert {"ec2_pricing", "karpenter_pricing"} & set(t.sources) and (t.spot is None or t.spot < t.on_demand), name
    assert data["prices_as_of"]
    for ami in aws_catalog.amis().values():
        assert ami.driver_branch in (570, 580) and ami.ships_toolkit
        assert catalog.driver_branch(ami.driver_floor) == ami.driver_branch


def test_efa_types_are_in_the_device_plugin_list(reference):
    import yaml

    values = yaml.safe_load((reference / "aws" / f"efa-k8s-device-plugin-values-{versions.EFA_DEVICE_PLUGIN.version}.yaml").read_text())
    supported = set(values["supportedInstanceLabels"]["values"])
    efa = {n for n, t in aws_catalog.instance_types().items() if t.has_efa}
    assert efa <= supported, efa - supported


def test_b200_pool_on_p6_b200_is_accepted():
    """B200 was in the catalog without an instance type, so every EKS B200 pool was refused (issue 12)."""
    cfg = example_config("prod-eks")
    _pool(cfg).update(instanceType="p6-b200.48xlarge")  # an EFA pool (rdma: true): 8 EFA interfaces
    spec = _load(cfg)
    assert spec.node_pools[0].instance_type == "p6-b200.48xlarge"


# ---- issue 12: the families that had no rows -----------------------------------------------------------------

def test_fractional_l4_pool_refuses_mig_and_efa():
    cfg = example_config("prod-eks")
    _pool(cfg, 1).pop("instanceTypes")
    _pool(cfg, 1).update(instanceType="g6f.xlarge", sharing={"mode": "mig", "profile": "1g.10gb"})
    assert any("GPU L4-3Q, a vGPU slice of one L4 of pool" in p and "has no MIG" in p for p in _problems(cfg))
    cfg = example_config("prod-eks")
    _pool(cfg).update(instanceType="gr6f.4xlarge")  # pool 0 has rdma: true
    assert any("gr6f.4xlarge has no EFA: rdma needs an EFA instance type" in p for p in _problems(cfg))


def test_p6_b300_efa_pool_is_refused_until_its_card_layout_is_recorded():
    cfg = example_config("prod-eks")
    _pool(cfg).update(instanceType="p6-b300.48xlarge")
    assert any("p6-b300.48xlarge has 17 network cards but 16 EFA interfaces" in p for p in _problems(cfg))
    _pool(cfg).update(rdma=False)
    spec = _load(cfg)  # without EFA it is a valid B300 pool
    assert spec.node_pools[0].instance_type == "p6-b300.48xlarge"


def test_g7e_pool_is_a_valid_efa_pool():
    cfg = example_config("prod-eks")
    _pool(cfg).update(instanceType="g7e.48xlarge")
    spec = _load(cfg)
    assert spec.node_pools[0].instance_type == "g7e.48xlarge" and spec.node_pools[0].rdma
