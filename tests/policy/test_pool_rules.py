"""gpu-sharing-valid, gpu-pool-taint, spot-pool-safety (+ advisory spot-pool-diversified), rdma-placement."""

import pytest

from gpufleet.base.catalog import aws
from gpufleet.policies import inputs as I
from tests.policy.fixtures import (
    LAUNCH_TEMPLATE_IN, NODE_GROUP_IN, NODE_POOL_IN, NTH_IN, PLACEMENT_GROUP_IN, SPOT_NODE_GROUP_IN, DELETE,
    device_plugin_config_map, findings, messages, res, with_,
)

SHARING, TAINT, SPOT, DIVERSE, RDMA = "gpu-sharing-valid", "gpu-pool-taint", "spot-pool-safety", "spot-pool-diversified", "rdma-placement"
ACC = "nodeConfig.guestAccelerators.0"


# --- gpu-sharing-valid ----------------------------------------------------------------------------

@pytest.mark.parametrize(
    "changes,expected",
    [
        ({f"{ACC}.gpuPartitionSize": "1g.10gb"}, set()),  # H100 has 1g.10gb
        ({f"{ACC}.gpuPartitionSize": "1g.5gb"}, {(SHARING, "h100", "mandatory")}),  # an A100-40GB profile
        ({f"{ACC}.type": "nvidia-l4", "nodeConfig.machineType": "g2-standard-4", f"{ACC}.gpuPartitionSize": "1g.10gb"}, {(SHARING, "h100", "mandatory")}),
        ({f"{ACC}.gpuPartitionSize": "1g.10gb", f"{ACC}.gpuSharingConfig": {"gpuSharingStrategy": "MPS", "maxSharedClientsPerGpu": 2.0}}, {(SHARING, "h100", "mandatory")}),
        ({f"{ACC}.gpuSharingConfig": {"gpuSharingStrategy": "TIME_SHARING", "maxSharedClientsPerGpu": 4.0}}, set()),
        ({f"{ACC}.gpuSharingConfig": {"gpuSharingStrategy": "TIME_SHARING", "maxSharedClientsPerGpu": 1.0}}, {(SHARING, "h100", "mandatory")}),
        ({f"{ACC}.gpuSharingConfig": {"gpuSharingStrategy": "MPS", "maxSharedClientsPerGpu": 64.0}}, {(SHARING, "h100", "mandatory")}),
    ],
)
def test_gke_sharing(gke_stack, changes, expected):
    inputs = NODE_POOL_IN
    for path, value in changes.items():
        inputs = with_(inputs, path, value)
    gke_stack["h100"] = res(I.GKE_NODE_POOL, "h100", inputs)
    assert findings(list(gke_stack.values()), policy=SHARING) == expected


TIME_SLICING = """version: v1
flags: {migStrategy: none}
sharing:
  timeSlicing:
    resources:
    - {name: nvidia.com/gpu, replicas: %s}
"""
MPS_WITH_MIG = """version: v1
flags: {migStrategy: single}
sharing:
  mps:
    resources:
    - {name: nvidia.com/gpu, replicas: 4}
"""


@pytest.mark.parametrize(
    "data,expected",
    [
        (TIME_SLICING % 4, set()),
        (TIME_SLICING % 1, {(SHARING, "sharing", "mandatory")}),
        (MPS_WITH_MIG, {(SHARING, "sharing", "mandatory")}),
        ("not: [yaml", set()),  # not a device plugin config: not judged, no exception
        # MIG with time-slicing is allowed (only MPS is not; issue 56: `and mig and` -> `and mig or` survived)
        (TIME_SLICING.replace("migStrategy: none", "migStrategy: single") % 4, set()),
    ],
)
def test_device_plugin_config_maps(data, expected):
    assert findings([res(I.CONFIG_MAP, "sharing", device_plugin_config_map(data))], policy=SHARING) == expected


# --- gpu-pool-taint -------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "taints,expected",
    [
        (NODE_GROUP_IN["taints"], set()),
        ([], {(TAINT, "h100", "mandatory")}),
        ([{"key": "nvidia.com/gpu", "value": "true", "effect": "PREFER_NO_SCHEDULE"}], {(TAINT, "h100", "mandatory")}),
    ],
)
def test_eks_taint(eks_stack, taints, expected):
    eks_stack["h100"] = res(I.EKS_NODE_GROUP, "h100", with_(NODE_GROUP_IN, "taints", taints))
    assert findings(list(eks_stack.values()), policy=TAINT) == expected


def test_gke_pool_without_taint_passes_because_gke_adds_it(gke_stack):
    assert "taints" not in NODE_POOL_IN["nodeConfig"]
    assert findings(list(gke_stack.values()), policy=TAINT) == set()


def test_taint_exempt_by_label(eks_stack):
    inputs = with_(NODE_GROUP_IN, "taints", [])
    inputs["labels"]["gpufleet.io/exempt-gpu-pool-taint"] = "dedicated-cluster"
    eks_stack["h100"] = res(I.EKS_NODE_GROUP, "h100", inputs)
    assert findings(list(eks_stack.values()), policy=TAINT) == set()


# --- spot-pool-safety / spot-pool-diversified ------------------------------------------------------

def test_spot_node_group_PASSED(eks_stack):
    eks_stack["h100"] = res(I.EKS_NODE_GROUP, "h100", SPOT_NODE_GROUP_IN)
    assert findings(list(eks_stack.values())) == set()


@pytest.mark.parametrize(
    "path,value,expected",
    [
        ("taints", NODE_GROUP_IN["taints"], {(SPOT, "h100", "mandatory")}),
        ("labels", {"gpufleet.io/capacity-type": "on-demand"}, {(SPOT, "h100", "mandatory")}),
        ("instanceTypes", ["g5.12xlarge"], {(DIVERSE, "h100", "advisory")}),
    ],
)
def test_spot_node_group_FAILED(eks_stack, path, value, expected):
    inputs = with_(SPOT_NODE_GROUP_IN, path, value)
    eks_stack["h100"] = res(I.EKS_NODE_GROUP, "h100", inputs)
    got = findings(list(eks_stack.values()))
    assert {f for f in got if f[0] in (SPOT, DIVERSE)} == expected


def test_gke_spot_pool_needs_a_spot_taint_not_diversity(gke_stack):
    gke_stack["h100"] = res(I.GKE_NODE_POOL, "h100", with_(NODE_POOL_IN, "nodeConfig.spot", True))
    assert findings(list(gke_stack.values())) == {(SPOT, "h100", "mandatory")}
    tainted = with_(with_(NODE_POOL_IN, "nodeConfig.spot", True), "nodeConfig.taints", [{"key": "cloud.google.com/gke-spot", "value": "true", "effect": "NO_SCHEDULE"}])
    gke_stack["h100"] = res(I.GKE_NODE_POOL, "h100", tainted)
    assert findings(list(gke_stack.values())) == set()


ASG_SPOT = {
    "minSize": 0.0,
    "maxSize": 4.0,
    "mixedInstancesPolicy": {
        "instancesDistribution": {"onDemandPercentageAboveBaseCapacity": 0.0},
        "launchTemplate": {"overrides": [{"instanceType": "g5.12xlarge"}, {"instanceType": "g6.12xlarge"}]},
    },
}


def test_self_managed_spot_asg_needs_interruption_handler():
    assert findings([res(I.ASG, "gpu", ASG_SPOT)], policy=SPOT) == {(SPOT, "gpu", "mandatory")}
    assert findings([res(I.ASG, "gpu", ASG_SPOT), res(I.HELM_RELEASE, "nth", NTH_IN)], policy=SPOT) == set()


@pytest.mark.parametrize(
    "path,value,expected",
    [
        ("mixedInstancesPolicy.instancesDistribution.onDemandPercentageAboveBaseCapacity", 99.0, {(SPOT, "gpu", "mandatory")}),
        ("mixedInstancesPolicy.instancesDistribution.onDemandPercentageAboveBaseCapacity", 100.0, set()),  # no spot at all
        ("mixedInstancesPolicy.instancesDistribution.onDemandPercentageAboveBaseCapacity", DELETE, set()),  # not said: not guessed
        ("mixedInstancesPolicy.launchTemplate.overrides", [{"instanceType": "m5.large"}, {"instanceType": "g5.12xlarge"}],
         {(SPOT, "gpu", "mandatory")}),  # one GPU type among the overrides is enough
        ("mixedInstancesPolicy.launchTemplate.overrides", [{"instanceType": "m5.large"}, {"instanceType": "c5.xlarge"}], set()),
        ("mixedInstancesPolicy", DELETE, set()),  # a plain ASG: no mixed-instances policy, no spot
    ],
    ids=["99-percent-on-demand", "all-on-demand", "no-percentage", "a-gpu-override", "cpu-overrides", "no-policy"],
)
def test_self_managed_asg_is_spot_gpu_only_when_every_condition_holds(path, value, expected):
    """Each condition of a spot GPU ASG alone turns the finding off (issue 56: `and` -> `or` survived)."""
    assert findings([res(I.ASG, "gpu", with_(ASG_SPOT, path, value))], policy=SPOT) == expected


@pytest.mark.parametrize(
    "capacity,types,expected",
    [
        ("SPOT", ["g5.12xlarge", "g5.24xlarge", "g6e.12xlarge"], set()),  # above the minimum
        ("SPOT", ["g5.12xlarge", "g5.24xlarge"], set()),  # at the minimum (2)
        ("SPOT", ["g5.12xlarge", "g5.12xlarge"], {(DIVERSE, "h100", "advisory")}),  # one type listed twice is one type
        ("SPOT", ["g5.12xlarge"], {(DIVERSE, "h100", "advisory")}),  # one below
        ("ON_DEMAND", ["g5.12xlarge"], set()),  # not spot: not judged
    ],
)
def test_spot_diversity_at_and_around_the_minimum(eks_stack, capacity, types, expected):
    """Issue 56: `>=` -> `==` survived, no test had more types than the minimum."""
    eks_stack["h100"] = res(I.EKS_NODE_GROUP, "h100", with_(with_(SPOT_NODE_GROUP_IN, "instanceTypes", types), "capacityType", capacity))
    assert findings(list(eks_stack.values()), policy=DIVERSE) == expected


def test_spot_diversity_message_counts_the_distinct_types(eks_stack):
    eks_stack["h100"] = res(I.EKS_NODE_GROUP, "h100", with_(SPOT_NODE_GROUP_IN, "instanceTypes", ["g5.12xlarge"]))
    (message,) = messages(list(eks_stack.values()), DIVERSE)
    assert message.endswith("spot GPU pool draws from 1 instance type (g5.12xlarge); list at least 2 with the same GPU")


# --- rdma-placement -------------------------------------------------------------------------------

def efa_stack(lt=LAUNCH_TEMPLATE_IN, pg=PLACEMENT_GROUP_IN, ng=None):
    ng = ng or with_(NODE_GROUP_IN, "launchTemplate", {"name": "h100-efa", "version": "1"})
    return [res(I.EC2_LAUNCH_TEMPLATE, "h100-lt", lt), res(I.EC2_PLACEMENT_GROUP, "h100-pg", pg), res(I.EKS_NODE_GROUP, "h100", ng)]


def test_efa_PASSED():
    assert findings(efa_stack(), policy=RDMA) == set()


@pytest.mark.parametrize(
    "stack,expected",
    [
        (efa_stack(lt=with_(LAUNCH_TEMPLATE_IN, "networkInterfaces", LAUNCH_TEMPLATE_IN["networkInterfaces"][:4])), {(RDMA, "h100-lt", "mandatory")}),
        (efa_stack(lt=with_(LAUNCH_TEMPLATE_IN, "placement", DELETE)), {(RDMA, "h100-lt", "mandatory")}),
        (efa_stack(pg=with_(PLACEMENT_GROUP_IN, "strategy", "spread")), {(RDMA, "h100-pg", "mandatory")}),
        (efa_stack(ng=with_(with_(NODE_GROUP_IN, "launchTemplate", {"name": "h100-efa"}), "subnetIds", ["subnet-a", "subnet-b"])), {(RDMA, "h100", "mandatory")}),
    ],
    ids=["missing-efa-interfaces", "no-placement-group", "spread-placement-group", "two-azs"],
)
def test_efa_FAILED(stack, expected):
    assert findings(stack, policy=RDMA) == expected


def test_efa_message_names_the_full_interface_count():
    lt = with_(LAUNCH_TEMPLATE_IN, "networkInterfaces", LAUNCH_TEMPLATE_IN["networkInterfaces"][:4])
    assert messages(efa_stack(lt=lt), RDMA)[0].endswith("launch template 'h100-lt' has 4 EFA interface(s); p5.48xlarge supports 32: use all of them")


@pytest.mark.parametrize("networks,expected", [(4, set()), (2, {(RDMA, "h100", "mandatory")}), (0, set())])
def test_gke_gpudirect_networks(gke_stack, networks, expected):
    configs = [{"network": f"net-{i}", "subnetwork": f"sub-{i}"} for i in range(networks)]
    gke_stack["h100"] = res(I.GKE_NODE_POOL, "h100", with_(NODE_POOL_IN, "networkConfig", {"additionalNodeNetworkConfigs": configs}))
    assert findings(list(gke_stack.values()), policy=RDMA) == expected


# --- GPU family recognition (issue 32: GB200 / GB300 UltraServers) -----------------------------------

# A node group of a Grace Blackwell type with a non-NVIDIA AMI string, so only the family makes it a GPU pool.
GB_TYPES = ["p6e-gb200.36xlarge", "p6e-gb300.36xlarge"]


@pytest.mark.parametrize("instance_type", GB_TYPES)
def test_grace_blackwell_families_are_gpu_pools(instance_type):
    assert aws.is_gpu_type(instance_type)
    _, node_group = I.pool_types()[I.EKS_NODE_GROUP]
    pool = node_group.gpu_pool(I.PropsInputs({**NODE_GROUP_IN, "instanceTypes": [instance_type], "amiType": "CUSTOM"}))
    assert pool is not None and pool[1] == [instance_type]


@pytest.mark.parametrize("instance_type", GB_TYPES)
def test_eks_taint_judges_grace_blackwell_pools(eks_stack, instance_type):
    inputs = {**NODE_GROUP_IN, "instanceTypes": [instance_type], "amiType": "CUSTOM", "taints": []}
    eks_stack["gb"] = res(I.EKS_NODE_GROUP, "gb", inputs)
    assert findings(list(eks_stack.values()), policy=TAINT) == {(TAINT, "gb", "mandatory")}
    eks_stack["gb"] = res(I.EKS_NODE_GROUP, "gb", {**inputs, "taints": NODE_GROUP_IN["taints"]})
    assert findings(list(eks_stack.values()), policy=TAINT) == set()
