"""Policy tests (layer 4): reserved capacity, DWS and Karpenter in gpu-pool-scale-to-zero, spot-pool-safety and the
mandatory reservation-placement, on passing and failing fixtures (exact finding sets)."""

import pytest

from gpufleet.policies import inputs as I
from tests.policy.fixtures import LAUNCH_TEMPLATE_IN, NODE_GROUP_IN, NODE_POOL_IN, DELETE, findings, res, with_
from tests.policy.fixtures import messages as _messages


def messages(resources, policy):
    """The findings' own text (the analyzer prefixes each with the policy's description line)."""
    return [m.split("\n", 1)[-1] for m in _messages(resources, policy)]

ZERO, SPOT, PLACE = "gpu-pool-scale-to-zero", "spot-pool-safety", "reservation-placement"
CB = "cr-0123456789abcdef0"
PARENT = "urn:pulumi:test::gpufleet::gpufleet:eks:EksNodeGroup::block"
NODEPOOL = "kubernetes:karpenter.sh/v1:NodePool"
NODECLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
KARPENTER_IN = {"name": "karpenter", "chart": "oci://public.ecr.aws/karpenter/karpenter", "version": "1.14.1",
                "values": {"settings": {"clusterName": "prod", "interruptionQueue": "prod-karpenter"}}}
FACTS = {"gpufleet.io/reservation-type": "capacity-block", "gpufleet.io/reservation-zone": "us-east-1b",
         "gpufleet.io/reservation-instance-type": "p5.48xlarge", "gpufleet.io/reservation-instance-count": "2"}
BLOCK_LT = {
    **LAUNCH_TEMPLATE_IN,
    "instanceMarketOptions": {"marketType": "capacity-block"},
    "capacityReservationSpecification": {"capacityReservationTarget": {"capacityReservationId": CB}},
    "tags": FACTS,
}
BLOCK_NG = {**NODE_GROUP_IN, "capacityType": "CAPACITY_BLOCK", "scalingConfig": {"minSize": 2.0, "maxSize": 2.0, "desiredSize": 2.0},
            "tags": {**NODE_GROUP_IN["tags"], **FACTS}}
NODEPOOL_IN = {
    "apiVersion": "karpenter.sh/v1", "kind": "NodePool",
    "metadata": {"name": "l4-spot"},
    "spec": {
        "template": {
            "metadata": {"labels": {"gpufleet.io/gpu": "true", "gpufleet.io/capacity-type": "spot"}},
            "spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "l4-spot"},
                "requirements": [
                    {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["g6.xlarge", "g6.2xlarge"]},
                    {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]},
                ],
                "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"},
                           {"key": "gpufleet.io/spot", "value": "true", "effect": "NoSchedule"}],
            },
        },
        "limits": {"nvidia.com/gpu": 8.0},
        "disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "30m", "budgets": [{"nodes": "1"}]},
    },
}
RESERVED_NODEPOOL_IN = with_(with_(with_(
    NODEPOOL_IN, "metadata", {"name": "h100-block", "annotations": FACTS}),
    "spec.template.spec.requirements", [
        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["p5.48xlarge"]},
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["reserved"]},
        {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["us-east-1b"]},
    ]),
    "spec.template.spec.nodeClassRef.name", "h100-block")
NODECLASS_IN = {"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": "h100-block"},
                "spec": {"amiSelectorTerms": [{"alias": "al2023@latest"}], "capacityReservationSelectorTerms": [{"id": CB}]}}
GKE_RESERVED = with_(with_(with_(NODE_POOL_IN, "nodeLocations", ["us-central1-b"]),
                           "nodeConfig.reservationAffinity", {"consumeReservationType": "SPECIFIC_RESERVATION",
                                                              "key": "compute.googleapis.com/reservation-name", "values": ["h100s"]}),
                     "nodeConfig.resourceLabels", {"gpufleet-reservation-zone": "us-central1-b",
                                                   "gpufleet-reservation-instance-type": "a3-highgpu-8g"})


def eks_block(ng=BLOCK_NG, lt=BLOCK_LT):
    return [
        res("gpufleet:eks:EksNodeGroup", "block", {}),
        res(I.EKS_NODE_GROUP, "block-ng", ng, parent=PARENT),
        res(I.EC2_LAUNCH_TEMPLATE, "block-lt", lt, parent=PARENT),
    ]


# --- reservation-placement: EKS -------------------------------------------------------------------

@pytest.mark.parametrize(
    "ng,lt,expected",
    [
        ({}, {}, set()),
        ({"capacityType": "ON_DEMAND"}, {}, {(PLACE, "block-ng", "mandatory")}),  # capacity-block market, on-demand group
        ({}, {"instanceMarketOptions": DELETE}, {(PLACE, "block-ng", "mandatory")}),  # CAPACITY_BLOCK without the market type
        ({"instanceTypes": ["p5e.48xlarge"]}, {}, {(PLACE, "block-ng", "mandatory")}),  # another type than the block holds
        ({}, {"placement.availabilityZone": "us-east-1a"}, {(PLACE, "block-ng", "mandatory")}),  # another zone
        ({}, {"placement.availabilityZone": "us-east-1b"}, set()),
    ],
)
def test_eks_reservation_placement(ng, lt, expected):
    ng_in, lt_in = BLOCK_NG, BLOCK_LT
    for path, value in ng.items():
        ng_in = with_(ng_in, path, value)
    for path, value in lt.items():
        lt_in = with_(lt_in, path, value)
    assert findings(eks_block(ng_in, lt_in), policy=PLACE) == expected


def test_eks_messages_name_the_reservation():
    ng = with_(BLOCK_NG, "instanceTypes", ["p5e.48xlarge"])
    lt = with_(BLOCK_LT, "placement.availabilityZone", "us-east-1a")
    assert messages(eks_block(ng, lt), PLACE) == [
        "node group 'block-ng': the reservation holds p5.48xlarge, but the node group launches p5e.48xlarge: other types never use it",
        f"node group 'block-ng': {CB} is in us-east-1b, but the launch template places instances in us-east-1a: they never use it",
    ]


def test_eks_odcr_in_a_placement_group():
    lt = with_(with_(BLOCK_LT, "instanceMarketOptions", DELETE), "tags", {**FACTS, "gpufleet.io/reservation-type": "odcr",
                                                                         "gpufleet.io/reservation-placement-group": "odcr-pg"})
    ng = with_(BLOCK_NG, "capacityType", "ON_DEMAND")
    assert findings(eks_block(ng, lt), policy=PLACE) == {(PLACE, "block-ng", "mandatory")}  # LT launches into h100-pg
    assert findings(eks_block(ng, with_(lt, "placement.groupName", "odcr-pg")), policy=PLACE) == set()


# --- reservation-placement: GKE and Karpenter ----------------------------------------------------

@pytest.mark.parametrize(
    "changes,expected",
    [
        ({}, set()),
        ({"nodeLocations": DELETE}, {(PLACE, "h100", "mandatory")}),  # any of the cluster's zones
        ({"nodeLocations": ["us-central1-a"]}, {(PLACE, "h100", "mandatory")}),
        ({"nodeConfig.machineType": "a3-megagpu-8g"}, {(PLACE, "h100", "mandatory")}),
        ({"nodeConfig.spot": True}, {(PLACE, "h100", "mandatory")}),
        ({"nodeConfig.flexStart": True}, {(PLACE, "h100", "mandatory")}),  # DWS consumes no reservation
        ({"nodeConfig.flexStart": True, "nodeConfig.reservationAffinity": {"consumeReservationType": "NO_RESERVATION"}}, set()),
    ],
)
def test_gke_reservation_placement(changes, expected):
    pool = GKE_RESERVED
    for path, value in changes.items():
        pool = with_(pool, path, value)
    assert findings([res(I.GKE_NODE_POOL, "h100", pool)], policy=PLACE) == expected


def test_karpenter_reserved_nodepool():
    ok = [res(NODEPOOL, "np", RESERVED_NODEPOOL_IN), res(NODECLASS, "nc", NODECLASS_IN), res(I.HELM_RELEASE, "karpenter", KARPENTER_IN)]
    assert findings(ok, policy=PLACE) == set()
    no_terms = [ok[0], res(NODECLASS, "nc", with_(NODECLASS_IN, "spec.capacityReservationSelectorTerms", DELETE)), ok[2]]
    assert findings(no_terms, policy=PLACE) == {(PLACE, "np", "mandatory")}
    any_zone = with_(RESERVED_NODEPOOL_IN, "spec.template.spec.requirements", RESERVED_NODEPOOL_IN["spec"]["template"]["spec"]["requirements"][:2])
    assert messages([res(NODEPOOL, "np", any_zone), ok[1], ok[2]], PLACE) == [
        "reserved NodePool 'h100-block': the reservation is in us-east-1b, but the NodePool's zone requirement is any zone",
    ]


# --- gpu-pool-scale-to-zero: Karpenter, DWS, reserved ----------------------------------------------

@pytest.mark.parametrize(
    "changes,expected",
    [
        ({}, set()),
        ({"spec.replicas": 2.0}, {(ZERO, "np", "mandatory")}),  # static capacity
        ({"spec.limits": DELETE}, {(ZERO, "np", "mandatory")}),
        ({"spec.disruption.consolidateAfter": "Never"}, {(ZERO, "np", "mandatory")}),
    ],
)
def test_scale_to_zero_karpenter(changes, expected):
    np_ = NODEPOOL_IN
    for path, value in changes.items():
        np_ = with_(np_, path, value)
    assert findings([res(NODEPOOL, "np", np_), res(I.HELM_RELEASE, "karpenter", KARPENTER_IN)], policy=ZERO) == expected


def test_scale_to_zero_karpenter_needs_its_release_and_ignores_cpu_nodepools():
    assert messages([res(NODEPOOL, "np", NODEPOOL_IN)], ZERO) == [
        "GPU NodePool 'l4-spot': no Karpenter Helm release in the stack: nothing launches nodes for this NodePool",
    ]
    cpu = with_(with_(with_(NODEPOOL_IN, "spec.template.spec.requirements.0.values", ["m7i.xlarge"]), "spec.limits", {"cpu": 100.0}),
                "spec.template.metadata.labels", {})
    assert findings([res(NODEPOOL, "np", with_(cpu, "spec.replicas", 3.0))], policy=ZERO) == set()


def test_scale_to_zero_reserved_and_dws_pools(eks_stack):
    # A warm capacity block is committed spend (the cost section's), not idle waste.
    assert findings(eks_block() + [eks_stack["cluster-autoscaler"]], policy=ZERO) == set()
    assert findings([res(I.GKE_NODE_POOL, "h100", with_(GKE_RESERVED, "autoscaling.minNodeCount", 1.0))], policy=ZERO) == set()
    dws = with_(with_(NODE_POOL_IN, "nodeConfig.flexStart", True), "initialNodeCount", 2.0)
    assert findings([res(I.GKE_NODE_POOL, "h100", dws)], policy=ZERO) == {(ZERO, "h100", "mandatory")}
    assert findings([res(I.GKE_NODE_POOL, "h100", with_(dws, "initialNodeCount", DELETE))], policy=ZERO) == set()


# --- spot-pool-safety: Karpenter ---------------------------------------------------------------

def test_karpenter_spot_needs_the_interruption_queue():
    release = res(I.HELM_RELEASE, "karpenter", KARPENTER_IN)
    assert findings([res(NODEPOOL, "np", NODEPOOL_IN), release], policy=SPOT) == set()
    no_queue = res(I.HELM_RELEASE, "karpenter", with_(KARPENTER_IN, "values.settings.interruptionQueue", ""))
    assert messages([res(NODEPOOL, "np", NODEPOOL_IN), no_queue], SPOT) == [
        "spot GPU NodePool 'l4-spot': Karpenter manages spot here but no karpenter release sets settings.interruptionQueue: "
        "spot interruptions and rebalance recommendations never reach it, so pods are killed without draining",
    ]
    untainted = with_(NODEPOOL_IN, "spec.template.spec.taints", [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}])
    assert findings([res(NODEPOOL, "np", untainted), release], policy=SPOT) == {(SPOT, "np", "mandatory")}
    on_demand = with_(NODEPOOL_IN, "spec.template.spec.requirements.1.values", ["on-demand"])
    assert findings([res(NODEPOOL, "np", on_demand), no_queue], policy=SPOT) == set()


def test_example_stacks_pass():
    from tests.helpers import planned
    from tests.karpenter_plan import karpenter_eks

    # Only the advisory that karpenter-eks has no metrics pipeline (gpufleet:observability is opt-in on EKS).
    assert {(v.policy, v.level) for v in karpenter_eks().violations} == {("gpu-observability", "advisory")}
    assert planned("dws-gke", policies=True).violations == []


def test_gke_only_labels_with_the_reservation_prefix_declare_it():
    """A resource label that only ends like a reservation fact is not one (issue 56: `and` -> `or` survived)."""
    from gpufleet.base import labels

    lookalike = "x" * len(labels.GKE_RESERVATION_LABEL_PREFIX) + "zone"
    pool = with_(GKE_RESERVED, "nodeConfig.resourceLabels", {**GKE_RESERVED["nodeConfig"]["resourceLabels"],
                                                              lookalike: "us-central1-a"})
    pool = with_(pool, "nodeConfig.resourceLabels", {k: v for k, v in pool["nodeConfig"]["resourceLabels"].items()
                                                    if k != "gpufleet-reservation-zone"})
    assert findings([res(I.GKE_NODE_POOL, "h100", pool)], policy=PLACE) == set()


def test_a_block_launch_template_on_a_group_that_does_not_say_its_capacity_type():
    """EKS's default capacity type is ON_DEMAND, so a node group that omits it cannot use the block either (issue 56:
    `!=` -> `>` survived, which would also crash comparing the missing value)."""
    ng = {k: v for k, v in BLOCK_NG.items() if k != "capacityType"}
    assert findings(eks_block(ng, BLOCK_LT), policy=PLACE) == {(PLACE, "block-ng", "mandatory")}


def test_a_capacity_block_type_built_at_run_time_is_judged():
    """Inputs arrive over gRPC as strings built at run time, never the rule's own literal (issue 56: `capacity_type ==
    "CAPACITY_BLOCK"` -> `is` survived, since the fixtures' literal is the same interned object)."""
    ng = with_(BLOCK_NG, "capacityType", "".join(["CAPACITY", "_BLOCK"]))
    (message,) = messages(eks_block(ng, with_(BLOCK_LT, "instanceMarketOptions", DELETE)), PLACE)
    assert "capacity type CAPACITY_BLOCK needs a launch template with instanceMarketOptions.marketType capacity-block" in message
