"""cluster.eks.network.egress: endpoints (issue 37): no NAT, no route out, VPC endpoints for what nodes call, priced
per endpoint per zone. Read from the plan of the example stack airgap-eks (3 zones, cluster autoscaler)."""

from __future__ import annotations

from tests.helpers import by_type, planned

VPCE = "aws:ec2/vpcEndpoint:VpcEndpoint"


def test_no_nat_and_no_route_out():
    p = planned("airgap-eks")
    assert not by_type(p, "aws:ec2/natGateway:NatGateway") and not by_type(p, "aws:ec2/eip:Eip")
    private = [r for r in by_type(p, "aws:ec2/routeTable:RouteTable") if "-private-" in r.name]
    assert len(private) == 3 and all(not r.inputs.get("routes") for r in private)


def test_the_endpoints_of_the_eks_private_cluster_guide():
    p = planned("airgap-eks")
    endpoints = {r.inputs["serviceName"]: r for r in by_type(p, VPCE)}
    assert sorted(endpoints) == sorted(f"com.amazonaws.us-east-1.{s}"
                                       for s in ("s3", "ec2", "ecr.api", "ecr.dkr", "sts", "autoscaling"))
    s3 = endpoints.pop("com.amazonaws.us-east-1.s3")
    assert s3.inputs["vpcEndpointType"] == "Gateway" and len(s3.inputs["routeTableIds"]) == 3
    sg = next(r for r in by_type(p, "aws:ec2/securityGroup:SecurityGroup") if r.name.endswith("-network-endpoints"))
    assert sg.inputs["ingress"] == [{"cidrBlocks": ["10.0.0.0/16"], "description": "nodes and pods to AWS APIs",
                                     "fromPort": 443.0, "protocol": "tcp", "toPort": 443.0}]
    for r in endpoints.values():
        assert r.inputs["vpcEndpointType"] == "Interface" and r.inputs["privateDnsEnabled"] is True
        assert len(r.inputs["subnetIds"]) == 3 and r.parent.endswith("airgap-gpu-network")


def test_the_autoscaler_uses_its_static_instance_list():
    p = planned("airgap-eks")
    release = next(r for r in by_type(p, "kubernetes:helm.sh/v3:Release") if r.inputs.get("name") == "cluster-autoscaler")
    assert release.inputs["values"]["extraArgs"]["aws-use-static-instance-list"] is True
    prod = planned("prod-eks")
    release = next(r for r in by_type(prod, "kubernetes:helm.sh/v3:Release") if r.inputs.get("name") == "cluster-autoscaler")
    assert "aws-use-static-instance-list" not in release.inputs["values"]["extraArgs"]


def test_the_cost_counts_endpoint_zones_instead_of_nat():
    items = planned("airgap-eks").cost.to_json()["items"]
    network = {i["key"]: (i["countMin"], i["count"], i["unitHourly"]) for i in items if i["kind"] == "network"}
    assert network == {f"network:airgap-gpu-network-vpce-{s}": (3, 3, 0.01)
                       for s in ("ec2", "ecr-api", "ecr-dkr", "sts", "autoscaling")}
