"""Cost items from registrations the example stacks do not make: claims on file-system classes, load balancers,
capacity reservations, provisioned gp3 performance, Cloud NAT past 32 VMs (prices: gpufleet/base/catalog/charges.yaml,
sources cited there and in tests/unit/test_cost.py)."""

from __future__ import annotations

from gpufleet.base.catalog import charges
from gpufleet.app.plan.cost_items import claim_items, eks_items, gib, gke_items
from gpufleet.app.plan.mocks import Registration, mock_id
from tests.helpers import example_config, stack_file
from gpufleet.base.spec import load_spec

H = 730


def reg(type_: str, name: str, inputs: dict, parent: str = "p") -> Registration:
    return Registration(urn=f"urn:{name}", type=type_, name=name, parent=parent, custom=True, inputs=inputs)


def spec(stack: str):
    f = stack_file(example_config(stack), stack)
    return load_spec(f.stack, f.config, f.secret_keys)


def test_quantities_in_gib():
    assert (gib("2Ti"), gib("100Gi"), gib("1200Gi"), gib("1e9")) == (2048.0, 100.0, 1200.0, 1e9 / 2**30)


def test_a_claim_on_fsx_is_billed_at_least_the_minimum_file_system():
    sc = reg("kubernetes:storage.k8s.io/v1:StorageClass", "sc", {
        "metadata": {"name": "fsx"}, "provisioner": "fsx.csi.aws.com",
        "parameters": {"deploymentType": "PERSISTENT_2", "perUnitStorageThroughput": "125"}})
    pvc = reg("kubernetes:core/v1:PersistentVolumeClaim", "data", {
        "metadata": {"name": "data"}, "spec": {"storageClassName": "fsx", "resources": {"requests": {"storage": "100Gi"}}}})
    [item] = claim_items([sc, pvc], "us-east-1")
    # FSx persistent SSD starts at 1,200 GiB; PERSISTENT_2 at 125 MB/s/TiB is 0.145 $/GB-month in us-east-1
    assert item.kind == "storage" and "1200 GiB" in item.name
    assert round(item.hourly_min, 6) == round(1200 * 0.145 / H, 6)


def test_an_unknown_tier_and_a_missing_class_are_unpriced():
    sc = reg("kubernetes:storage.k8s.io/v1:StorageClass", "sc", {
        "metadata": {"name": "fsx"}, "provisioner": "fsx.csi.aws.com",
        "parameters": {"deploymentType": "PERSISTENT_2", "perUnitStorageThroughput": "1000"}})
    pvcs = [reg("kubernetes:core/v1:PersistentVolumeClaim", n, {
        "metadata": {"name": n}, "spec": {"storageClassName": c, "resources": {"requests": {"storage": "2Ti"}}}})
        for n, c in (("a", "fsx"), ("b", "nowhere"))]
    items = {i.key: i for i in claim_items([sc, *pvcs], "us-east-1")}
    assert not items["storage:claim:a"].priced and "1000 MB/s/TiB" in items["storage:claim:a"].source
    assert not items["storage:claim:b"].priced and "not created by this stack" in items["storage:claim:b"].source


def test_a_load_balancer_service_is_listed_unpriced():
    from gpufleet.app.plan.cost_items import items_for

    lb = reg("kubernetes:core/v1:Service", "api", {"metadata": {"name": "api"}, "spec": {"type": "LoadBalancer"}})
    cost = items_for(spec("dev"), [lb], [], None)
    [item] = [i for i in cost.items if i.kind == "load-balancer"]
    assert item.name == "load balancer of Service api" and not item.priced and cost.at_least


def test_a_capacity_reservation_is_committed_whether_used_or_not():
    r = reg("aws:ec2/capacityReservation:CapacityReservation", "res", {"instanceType": "p5.48xlarge", "instanceCount": 2})
    [item] = eks_items(spec("prod-eks"), [r], [], "us-east-1")
    assert item.committed and (item.hourly_min, item.hourly_max) == (2 * 55.04, 2 * 55.04)


def test_gp3_performance_above_the_free_baseline_is_priced():
    lt = reg("aws:ec2/launchTemplate:LaunchTemplate", "lt", {"blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {
        "volumeSize": 100, "volumeType": "gp3", "iops": 6000, "throughput": 250}}]})
    ng = reg("aws:eks/nodeGroup:NodeGroup", "ng", {"launchTemplate": {"id": mock_id("aws:ec2/launchTemplate:LaunchTemplate", "lt")}, "instanceTypes": ["m7i.xlarge"],
                                                   "scalingConfig": {"minSize": 1, "maxSize": 1}, "labels": {}})
    volume = next(i for i in eks_items(spec("prod-eks"), [lt, ng], [], "us-east-1") if i.kind == "storage")
    # 100 GB x 0.08 + (6000 - 3000) IOPS x 0.005 + (250 - 125) MB/s x 0.04, per month
    assert round(volume.hourly_min, 6) == round((100 * 0.08 + 3000 * 0.005 + 125 * 0.04) / H, 6)


def test_cloud_nat_is_capped_from_32_vms_and_filestore_priced_where_the_catalog_has_it():
    nat = reg("gcp:compute/routerNat:RouterNat", "nat", {"natIpAllocateOption": "AUTO_ONLY"})
    pool = reg("gcp:container/nodePool:NodePool", "pool", {"autoscaling": {"totalMinNodeCount": 2, "totalMaxNodeCount": 40},
                                                           "nodeConfig": {"machineType": "e2-standard-4"}})
    fs = reg("gcp:filestore/instance:Instance", "fs", {"tier": "BASIC_HDD", "fileShares": {"capacityGb": 1024}})
    items = {i.key: i for i in gke_items(spec("prod-gke"), [pool, nat, fs], [], "us-west1", [])}
    assert (items["network:nat"].hourly_min, items["network:nat"].hourly_max) == (round(2 * 0.0014 + 0.005, 6), round(0.044 + 0.005, 6))
    assert round(items["storage:fs"].hourly_min, 6) == round(1024 * 0.000274, 6)
    assert charges.filestore_min_gib("BASIC_HDD") == 1024 and charges.filestore_min_gib("BASIC_HDD", gke_csi=True) == 100
