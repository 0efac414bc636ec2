"""Component tests (layer 2): each capacity kind mapped to the platform's real settings.

EKS: reserved pools on a Capacity Block (launch template market type `capacity-block` and reservation target,
node group capacity type CAPACITY_BLOCK, subnets in the block's zone) and on an On-Demand Capacity Reservation
resource group. GKE (stacks/Pulumi.dws-gke.yaml): flex-start, queued provisioning and a specific reservation.
"""

import pytest

from gpufleet.testing import mocked_id
from tests.helpers import example_config, one, parent_of, plan_config, planned

NG = "aws:eks/nodeGroup:NodeGroup"
LT = "aws:ec2/launchTemplate:LaunchTemplate"
PG = "aws:ec2/placementGroup:PlacementGroup"
NP = "gcp:container/nodePool:NodePool"
CB = "cr-0123456789abcdef0"
GROUP = "arn:aws:resource-groups:us-east-1:123456789012:group/l4-odcrs"


@pytest.fixture(scope="module")
def eks():
    c = example_config("prod-eks")
    h100, l4 = c["gpufleet:nodePools"]
    h100.update(capacity="reserved", maxNodes=2, reservation={
        "type": "capacity-block", "id": CB, "zone": "us-east-1b", "instanceType": "p5.48xlarge", "instanceCount": 2})
    del h100["availabilityZone"]
    l4.update(capacity="reserved", reservation={"type": "odcr", "resourceGroupArn": GROUP, "instanceCount": 1})
    return plan_config(c, "prod-eks")


@pytest.fixture(scope="module")
def gke():
    return planned("dws-gke", policies=True)


def test_capacity_block_launch_template_and_node_group(eks):
    lt = one(eks, LT, "prod-gpu-pool-h100-train-lt")
    assert parent_of(eks, lt).name == "prod-gpu-pool-h100-train"
    assert lt.inputs["instanceMarketOptions"] == {"marketType": "capacity-block"}
    assert lt.inputs["capacityReservationSpecification"] == {"capacityReservationTarget": {"capacityReservationId": CB}}
    assert lt.inputs["tags"] == {
        "gpufleet.io/reservation-instance-count": "2", "gpufleet.io/reservation-instance-type": "p5.48xlarge",
        "gpufleet.io/reservation-type": "capacity-block", "gpufleet.io/reservation-zone": "us-east-1b",
    }
    ng = one(eks, NG, "prod-gpu-pool-h100-train-ng").inputs
    assert ng["capacityType"] == "CAPACITY_BLOCK"
    assert ng["instanceTypes"] == ["p5.48xlarge"]
    assert ng["labels"]["gpufleet.io/capacity-type"] == "reserved"
    # The block's zone only (EC2: no launch into a Capacity Block from another AZ).
    assert ng["subnetIds"] == [mocked_id(one(eks, "aws:ec2/subnet:Subnet", "prod-gpu-network-private-us-east-1b"))]
    # EFA still gets its cluster placement group (terraform-aws-eks-blueprints ml-capacity-block does too).
    assert one(eks, PG, "prod-gpu-pool-h100-train-efa-pg").inputs["strategy"] == "cluster"


def test_odcr_resource_group_targets_the_group_on_demand(eks):
    lt = one(eks, LT, "prod-gpu-pool-l4-infer-lt").inputs
    assert lt["capacityReservationSpecification"] == {"capacityReservationTarget": {"capacityReservationResourceGroupArn": GROUP}}
    assert "instanceMarketOptions" not in lt
    assert one(eks, NG, "prod-gpu-pool-l4-infer-ng").inputs["capacityType"] == "ON_DEMAND"


def _pool(gke, name):
    return one(gke, NP, f"dws-gke-pool-{name}-pool").inputs


def test_flex_start_pool(gke):
    p = _pool(gke, "h100-flex")
    assert p["nodeConfig"]["flexStart"] is True and p["nodeConfig"]["spot"] is False
    assert p["nodeConfig"]["maxRunDuration"] == "86400s"
    assert p["nodeConfig"]["reservationAffinity"] == {"consumeReservationType": "NO_RESERVATION"}
    assert p["management"] == {"autoRepair": False, "autoUpgrade": True}
    assert p["autoscaling"] == {"locationPolicy": "ANY", "totalMinNodeCount": 0, "totalMaxNodeCount": 4}
    assert "queuedProvisioning" not in p
    assert p["nodeConfig"]["labels"]["gpufleet.io/capacity-type"] == "flex-start"


def test_queued_provisioning_pool(gke):
    p = _pool(gke, "a3mega-queued")
    assert p["queuedProvisioning"] == {"enabled": True}
    assert p["nodeConfig"]["flexStart"] is True
    assert p["nodeConfig"]["reservationAffinity"] == {"consumeReservationType": "NO_RESERVATION"}
    assert p["management"] == {"autoRepair": False, "autoUpgrade": False}
    assert p["autoscaling"]["locationPolicy"] == "ANY" and p["autoscaling"]["totalMinNodeCount"] == 0
    assert p["nodeConfig"]["labels"]["cloud.google.com/gke-queued"] == "true"
    assert "maxRunDuration" not in p["nodeConfig"]


def test_specific_reservation_pool(gke):
    p = _pool(gke, "l4-reserved")
    assert p["nodeLocations"] == ["us-central1-b"]  # the reservation's zone
    assert p["nodeConfig"]["reservationAffinity"] == {
        "consumeReservationType": "SPECIFIC_RESERVATION", "key": "compute.googleapis.com/reservation-name", "values": ["l4-inference"]}
    assert p["nodeConfig"]["resourceLabels"]["gpufleet-reservation-zone"] == "us-central1-b"
    assert p["nodeConfig"]["resourceLabels"]["gpufleet-reservation-instance-count"] == "4"
    assert "flexStart" not in p["nodeConfig"] and p["management"]["autoRepair"] is True


def test_shared_reservation_names_the_owner_project():
    from gpufleet.components.gke.node_pool import capacity_reservation
    from gpufleet.base.spec import NodePoolSpec

    pool = NodePoolSpec.model_validate({"name": "x", "machineType": "g2-standard-8", "capacity": "reserved", "reservation": {
        "type": "specific", "name": "shared-l4", "project": "owner-proj", "zone": "us-central1-b"}})
    assert capacity_reservation(pool, "my-proj").values == ["projects/owner-proj/reservations/shared-l4"]
    any_pool = pool.model_copy(update={"reservation": pool.reservation.model_copy(update={"type": "any", "name": None, "project": None})})
    assert capacity_reservation(any_pool, "my-proj").consume_reservation_type == "ANY_RESERVATION"


def test_queued_pool_admits_through_a_provisioning_request_check(gke):
    prc = one(gke, "kubernetes:kueue.x-k8s.io/v1beta2:ProvisioningRequestConfig", "dws-gke-kueue-provreq-a3mega-queued")
    assert prc.inputs["metadata"]["name"] == "a3mega-queued-dws"
    assert prc.inputs["spec"] == {"provisioningClassName": "queued-provisioning.gke.io", "managedResources": ["nvidia.com/gpu"]}
    check = one(gke, "kubernetes:kueue.x-k8s.io/v1beta2:AdmissionCheck", "dws-gke-kueue-check-a3mega-queued")
    assert check.inputs["spec"] == {"controllerName": "kueue.x-k8s.io/provisioning-request", "parameters": {
        "apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig", "name": "a3mega-queued-dws"}}
    assert parent_of(gke, check).type == "gpufleet:addons:Kueue"
    cq = one(gke, "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue", "dws-gke-kueue-cq-research-a3mega-queued").inputs["spec"]
    assert cq["admissionChecksStrategy"] == {"admissionChecks": [{"name": "a3mega-queued-dws", "onFlavors": ["a3mega-queued"]}]}
    flex = one(gke, "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue", "dws-gke-kueue-cq-research-h100-flex").inputs["spec"]
    assert "admissionChecksStrategy" not in flex  # flex-start nodes come through the autoscaler, no check
