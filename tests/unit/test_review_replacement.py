"""The replace-on-change table: every type the review must judge has an entry with its source."""

from __future__ import annotations

import pytest

from gpufleet.app.review import replacement

REQUIRED = {
    "aws:eks/nodeGroup:NodeGroup": ["instanceTypes", "capacityType", "amiType", "subnetIds", "nodeGroupName"],
    "aws:eks/cluster:Cluster": ["name", "roleArn", "kubernetesNetworkConfig.serviceIpv4Cidr"],
    "gcp:container/nodePool:NodePool": ["name", "cluster", "nodeConfig.guestAccelerators", "nodeConfig.spot"],
    "gcp:container/cluster:Cluster": ["name", "location", "network"],
    "aws:fsx/lustreFileSystem:LustreFileSystem": ["deploymentType", "subnetIds"],
    "aws:efs/fileSystem:FileSystem": ["creationToken", "performanceMode", "encrypted"],
    "gcp:filestore/instance:Instance": ["tier", "networks", "name"],
    "aws:ec2/vpc:Vpc": ["cidrBlock"],
    "gcp:compute/network:Network": ["name", "autoCreateSubnetworks"],
    "kubernetes:core/v1:Namespace": ["metadata.name"],
    "kubernetes:helm.sh/v3:Release": ["name", "namespace"],
    "command:remote:Command": ["triggers"],
    "random:index/randomPassword:RandomPassword": ["length", "special"],
}


@pytest.mark.parametrize("type_", sorted(REQUIRED))
def test_required_types_have_a_sourced_table(type_):
    table = replacement.table_for(type_)
    assert table is not None and table.source
    for path in REQUIRED[type_]:
        rule, source, certain = replacement.forcing_rule(type_, path)
        assert (rule, source, certain) == (path, table.source, True)


@pytest.mark.parametrize(
    "type_, path, rule",
    [
        ("aws:eks/nodeGroup:NodeGroup", "instanceTypes[0]", "instanceTypes"),
        ("aws:eks/nodeGroup:NodeGroup", "launchTemplate.id", "launchTemplate.id"),
        ("gcp:container/nodePool:NodePool", "nodeConfig.guestAccelerators[0].type", "nodeConfig.guestAccelerators"),
        ("gcp:container/nodePool:NodePool", "nodeConfig.guestAccelerators[0].gpuSharingConfig.gpuSharingStrategy",
         "nodeConfig.guestAccelerators"),
        ("kubernetes:apps/v1:Deployment", "metadata.namespace", "metadata.namespace"),
    ],
)
def test_nested_and_indexed_paths_match_their_rule(type_, path, rule):
    assert replacement.forcing_rule(type_, path)[0] == rule


@pytest.mark.parametrize(
    "type_, path",
    [
        ("aws:eks/nodeGroup:NodeGroup", "scalingConfig.maxSize"),  # resized in place
        ("aws:eks/nodeGroup:NodeGroup", "labels.gpufleet.io/pool"),
        ("aws:eks/nodeGroup:NodeGroup", "taints[0].value"),
        ("aws:eks/nodeGroup:NodeGroup", "version"),
        ("aws:eks/nodeGroup:NodeGroup", "launchTemplate.version"),
        ("gcp:container/nodePool:NodePool", "nodeConfig.machineType"),  # updated in place upstream
        ("kubernetes:helm.sh/v3:Release", "version"),
        ("kubernetes:helm.sh/v3:Release", "values.driver.version"),
        ("command:remote:Command", "create"),  # runs `update`, no replacement
        ("aws:eks/cluster:Cluster", "version"),
        ("aws:eks/cluster:Cluster", "vpcConfig.subnetIds"),
        ("kubernetes:core/v1:Namespace", "metadata.labels.team"),
        ("gpufleet:k3s:K3sNodePool", "anything"),  # components have no provider
    ],
)
def test_in_place_updates_do_not_force_replacement(type_, path):
    assert replacement.forcing_rule(type_, path) is None


def test_direction_dependent_inputs_are_reported_as_uncertain():
    rule, _, certain = replacement.forcing_rule("aws:fsx/lustreFileSystem:LustreFileSystem", "storageCapacity")
    assert (rule, certain) == ("storageCapacity", False)


def test_every_table_says_where_it_comes_from_and_whether_it_was_checked():
    for type_, table in replacement.tables().items():
        assert table.paths and table.source, type_
        assert isinstance(table.checked, bool)
    # the ones read at the upstream source while writing the table
    assert {t for t, tb in replacement.tables().items() if tb.checked} == {
        "aws:eks/nodeGroup:NodeGroup", "aws:eks/cluster:Cluster", "gcp:container/nodePool:NodePool",
        "kubernetes:helm.sh/v3:Release",
        # read from pulumi-azure-native's force-new table and schema snapshot (docs/aks.md, "Review: what replaces")
        "azure-native:containerservice:AgentPool", "azure-native:containerservice:ManagedCluster",
        "azure-native:network:VirtualNetwork", "azure-native:network:Subnet", "azure-native:resources:ResourceGroup",
    }


def test_disruptive_kinds():
    assert replacement.disruptive_kind("aws:eks/nodeGroup:NodeGroup") == "node pool"
    assert replacement.disruptive_kind("gcp:filestore/instance:Instance") == "file system"
    assert replacement.disruptive_kind("aws:ec2/vpc:Vpc") == "network"
    assert replacement.disruptive_kind("kubernetes:helm.sh/v3:Release") is None
    assert replacement.disruptive_kind("azure-native:containerservice:AgentPool") == "node pool"
