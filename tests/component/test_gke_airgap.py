"""The air-gapped GKE example (issue 37): private nodes without Cloud NAT reach Google's APIs and registries through
Private Google Access on the subnet gpufleet creates, and nothing else is created to route them out."""

from __future__ import annotations

from tests.helpers import by_type, one, planned


def test_private_nodes_have_private_google_access_and_no_nat():
    plan = planned("airgap-gke")
    subnet = one(plan, "gcp:compute/subnetwork:Subnetwork")
    assert subnet.inputs["privateIpGoogleAccess"] is True
    assert by_type(plan, "gcp:compute/router:Router") == [] and by_type(plan, "gcp:compute/routerNat:RouterNat") == []
    cluster = one(plan, "gcp:container/cluster:Cluster")
    private = cluster.inputs["privateClusterConfig"]
    assert private["enablePrivateNodes"] is True and private["enablePrivateEndpoint"] is True
    # The plan's cost has no Cloud NAT line (prod-gke, with one, has "Cloud NAT <name>-network-nat").
    assert [i.name for i in plan.cost.items if "Cloud NAT" in i.name] == []
    assert [i.name for i in planned("prod-gke").cost.items if "Cloud NAT" in i.name] != []


def test_every_release_comes_from_the_artifact_registry_chart_repository():
    plan = planned("airgap-gke")
    charts = {r.inputs["chart"] for r in by_type(plan, "kubernetes:helm.sh/v3:Release")}
    assert charts == {f"{plan.spec.registry.charts}/jobset", f"{plan.spec.registry.charts}/kueue"}
