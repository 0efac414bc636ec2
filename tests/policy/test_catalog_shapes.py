"""The pack reads GPU shapes from the same catalog as the plan (aws_instances.yaml, gcp_machines.yaml)."""

from gpufleet.base.catalog import aws, gcp
from gpufleet.base.platforms.eks.policy import ec2_shape
from gpufleet.base.platforms.gke.policy import gke_shape


def test_ec2_shape_is_the_catalog_row():
    for name, t in aws.instance_types().items():
        shape = ec2_shape(name)
        if not t.gpus:
            assert shape is None, name  # CPU types are not GPU shapes
            continue
        assert (shape.gpu, shape.gpus, shape.efa_interfaces, shape.price_hour) == (t.gpu, t.gpus, t.efa_interfaces, t.on_demand), name
    assert ec2_shape("g5g.xlarge") is None  # a GPU family without a catalog row (T4G is not in gpus.yaml)
    assert ec2_shape("p6-b300.48xlarge").gpu == "B300"  # issue 12: the row exists now


def test_ec2_gpu_types_include_unlisted_sizes_of_gpu_families():
    assert aws.is_gpu_type("g5.xlarge") and aws.is_gpu_type("p6-b300.48xlarge") and aws.is_gpu_type("g4dn.metal")
    assert not aws.is_gpu_type("m6i.xlarge") and not aws.is_gpu_type("m7i.large")


def test_gke_shape_prices_the_whole_node_and_counts_gpudirect_networks():
    for name, m in gcp.machines().items():
        count = m.fixed_count or m.counts[-1]
        shape = gke_shape(name, None, 0 if m.fixed_count else count)
        assert (shape.gpu, shape.gpus, shape.price_hour) == (m.gpu, count, m.price("on_demand", count)), name
        assert shape.gpudirect_networks == (m.gpudirect.additional_node_networks if m.gpudirect else 0), name
    assert gke_shape("a3-ultragpu-8g").gpudirect_networks == 9


def test_gke_shape_of_an_unlisted_machine_has_gpus_but_no_price():
    shape = gke_shape("n1-highmem-8", "nvidia-tesla-t4", 2)
    assert (shape.gpu, shape.gpus, shape.price_hour) == ("T4", 2, None)
    assert gke_shape("n1-highmem-8", "nvidia-unknown", 2) is None
    assert gcp.accelerator_gpu("nvidia-h100-mega-80gb") == "H100-80GB"


def test_gke_accelerator_optimized_families_have_gpus():
    assert gcp.machine_has_gpus("a3-edgegpu-8g") and gcp.machine_has_gpus("g2-standard-4")
    assert not gcp.machine_has_gpus("n1-standard-4") and not gcp.machine_has_gpus("a3") and not gcp.machine_has_gpus("")
