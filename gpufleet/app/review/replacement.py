"""Which input changes force Pulumi to replace a resource, per resource type token, with the source of each fact.

Bridged providers (pulumi-aws, pulumi-gcp, pulumi-random) replace a resource when an input the upstream
Terraform schema marks `ForceNew` changes; pulumi-kubernetes and pulumi-command decide it in their own Diff.
The provider schemas (`replaceOnChanges`) are not available offline here, so each table cites the upstream
schema or provider source it was read from. `checked` says whether the entry was read at that source while
writing this table (True) or taken from the provider docs without re-reading (False): re-check those first.

Paths are Pulumi input names (camelCase), dotted; list indices are ignored (`instanceTypes[0]` matches
`instanceTypes`), and a rule matches every path below it (`nodeConfig.guestAccelerators` matches
`nodeConfig.guestAccelerators.type`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class ReplaceTable:
    """The inputs of one resource type whose change replaces the resource."""

    paths: tuple[str, ...]
    source: str
    checked: bool
    conditional: tuple[str, ...] = ()
    """Inputs that force replacement only in some directions (named in `source`); reported as 'may replace'."""


_TF_AWS = "hashicorp/terraform-provider-aws"
_TF_GOOGLE = "hashicorp/terraform-provider-google"

TABLES: dict[str, ReplaceTable] = {
    "aws:eks/nodeGroup:NodeGroup": ReplaceTable(
        paths=(
            "amiType", "capacityType", "clusterName", "diskSize", "instanceTypes", "launchTemplate.id",
            "launchTemplate.name", "nodeGroupName", "nodeGroupNamePrefix", "nodeRoleArn", "remoteAccess",
            "subnetIds",
        ),
        source=f"{_TF_AWS} internal/service/eks/node_group.go, resource schema ForceNew",
        checked=True,
    ),
    "aws:eks/cluster:Cluster": ReplaceTable(
        paths=(
            "name", "roleArn", "bootstrapSelfManagedAddons", "accessConfig.bootstrapClusterCreatorAdminPermissions",
            "kubernetesNetworkConfig.ipFamily", "kubernetesNetworkConfig.serviceIpv4Cidr",
            "outpostConfig.controlPlaneInstanceType", "outpostConfig.controlPlanePlacement.groupName",
            "remoteNetworkConfig",
        ),
        conditional=("encryptionConfig", "computeConfig.nodeRoleArn"),
        source=f"{_TF_AWS} internal/service/eks/cluster.go, schema ForceNew and CustomizeDiff "
        "(removing encryptionConfig, or changing an existing computeConfig.nodeRoleArn, forces replacement)",
        checked=True,
    ),
    "gcp:container/nodePool:NodePool": ReplaceTable(
        paths=(
            "name", "namePrefix", "cluster", "location", "project", "initialNodeCount", "placementPolicy",
            "nodeConfig.guestAccelerators", "nodeConfig.spot", "nodeConfig.preemptible", "nodeConfig.serviceAccount",
            "nodeConfig.oauthScopes", "nodeConfig.metadata", "nodeConfig.minCpuPlatform", "nodeConfig.localSsdCount",
            "nodeConfig.ephemeralStorageLocalSsdConfig", "nodeConfig.localNvmeSsdBlockConfig",
            "nodeConfig.reservationAffinity", "nodeConfig.shieldedInstanceConfig", "nodeConfig.sandboxConfig",
            "nodeConfig.bootDiskKmsKey", "nodeConfig.secondaryBootDisks",
        ),
        source=f"{_TF_GOOGLE} google/services/container/node_config.go schemaNodeConfig ForceNew "
        "(guest_accelerator incl. gpu_driver_installation_config, gpu_sharing_config, gpu_partition_size; spot; "
        "machine_type is updated in place, read); the pool's own fields (name, cluster, location, project, "
        "initialNodeCount, placementPolicy) from the google_container_node_pool docs, not re-read",
        checked=True,
    ),
    "gcp:container/cluster:Cluster": ReplaceTable(
        paths=(
            "name", "location", "project", "network", "subnetwork", "clusterIpv4Cidr", "ipAllocationPolicy",
            "enableAutopilot", "initialNodeCount", "privateClusterConfig.masterIpv4CidrBlock",
        ),
        source="Terraform google provider docs, google_container_cluster arguments marked 'Changing this forces a "
        "new resource'",
        checked=False,
    ),
    "aws:fsx/lustreFileSystem:LustreFileSystem": ReplaceTable(
        paths=(
            "deploymentType", "subnetIds", "securityGroupIds", "storageType", "kmsKeyId", "importPath", "exportPath",
            "importedFileChunkSize", "driveCacheType", "efaEnabled",
        ),
        conditional=("storageCapacity",),
        source="Terraform AWS provider docs, aws_fsx_lustre_file_system (storageCapacity can only grow in place)",
        checked=False,
    ),
    "aws:efs/fileSystem:FileSystem": ReplaceTable(
        paths=("creationToken", "encrypted", "kmsKeyId", "performanceMode", "availabilityZoneName"),
        source="Terraform AWS provider docs, aws_efs_file_system",
        checked=False,
    ),
    "gcp:filestore/instance:Instance": ReplaceTable(
        paths=("name", "tier", "location", "zone", "project", "networks", "fileShares.name", "kmsKeyName"),
        source="Terraform google provider docs, google_filestore_instance (fileShares.capacityGb grows in place)",
        checked=False,
    ),
    "aws:ec2/vpc:Vpc": ReplaceTable(
        paths=("cidrBlock", "ipv4IpamPoolId", "ipv4NetmaskLength"),
        source="Terraform AWS provider docs, aws_vpc",
        checked=False,
    ),
    "gcp:compute/network:Network": ReplaceTable(
        paths=("name", "project", "autoCreateSubnetworks", "enableUlaInternalIpv6", "internalIpv6Range"),
        source="Terraform google provider docs, google_compute_network",
        checked=False,
    ),
    "kubernetes:helm.sh/v3:Release": ReplaceTable(
        paths=("name", "namespace"),
        source="pulumi/pulumi-kubernetes provider/pkg/provider/helm_release.go Diff: forceNewFields .name, .namespace",
        checked=True,
    ),
    "command:remote:Command": ReplaceTable(
        paths=("triggers",),
        source="pulumi/pulumi-command docs: 'triggers' replaces the resource on change; other inputs run `update` "
        "(or `create` again)",
        checked=False,
    ),
    "command:local:Command": ReplaceTable(
        paths=("triggers",),
        source="pulumi/pulumi-command docs: 'triggers' replaces the resource on change",
        checked=False,
    ),
    "random:index/randomPassword:RandomPassword": ReplaceTable(
        paths=(
            "length", "special", "upper", "lower", "numeric", "number", "minLower", "minUpper", "minNumeric",
            "minSpecial", "overrideSpecial", "keepers",
        ),
        source="terraform-provider-random random_password: every argument RequiresReplace",
        checked=False,
    ),
}

# AKS (pulumi-azure 6.40.1, bridged from terraform-provider-azurerm 4.x). Its generated SDK docstrings say which inputs
# force a new resource ("Changing this forces a new resource to be created"), and which make the provider rebuild a
# node pool through `temporary_name_for_rotation` ("Changing this property requires specifying
# `temporary_name_for_rotation`"): azurerm then creates the temporary pool, deletes the pool and creates it again with
# the change, so every node of the pool is replaced although the Pulumi resource keeps its URN. Both are replacements
# for a reviewer (the pool's nodes, their local disks and running pods go). Read from
# pulumi_azure/containerservice/kubernetes_cluster_node_pool.py and kubernetes_cluster.py, 2026-12-04.
_AKS_POOL_ROTATION = ("vmSize", "osDiskSizeGb", "osDiskType", "vnetSubnetId", "podSubnetId", "zones", "kubeletDiskType",
                      "kubeletConfig", "linuxOsConfig", "maxPods", "fipsEnabled", "hostEncryptionEnabled",
                      "nodePublicIpEnabled", "ultraSsdEnabled", "snapshotId")
TABLES["azure:containerservice/kubernetesClusterNodePool:KubernetesClusterNodePool"] = ReplaceTable(
    paths=("name", "kubernetesClusterId", "priority", "evictionPolicy", "spotMaxPrice", "gpuDriver", "gpuInstance",
           "osType", "capacityReservationGroupId", "hostGroupId", "nodePublicIpPrefixId", "proximityPlacementGroupId",
           "windowsProfile", *_AKS_POOL_ROTATION),
    conditional=("osSku",),
    source="pulumi-azure 6.40.1 KubernetesClusterNodePool docstrings: name, cluster, priority, eviction policy, Spot max "
    "price, GPU driver and the placement ids force a new pool; vmSize, OS disk, subnets, zones, kubelet and OS config "
    "rebuild the pool through temporary_name_for_rotation (every node replaced); osSku forces one except between "
    "AzureLinux and Ubuntu",
    checked=True,
)
TABLES["azure:containerservice/kubernetesCluster:KubernetesCluster"] = ReplaceTable(
    paths=("name", "resourceGroupName", "location", "dnsPrefix", "dnsPrefixPrivateCluster", "edgeZone",
           "diskEncryptionSetId", "nodeResourceGroup", "privateClusterEnabled", "privateDnsZoneId",
           "roleBasedAccessControlEnabled", "networkProfile",
           *(f"defaultNodePool.{p}" for p in ("name", *_AKS_POOL_ROTATION))),
    source="pulumi-azure 6.40.1 KubernetesCluster docstrings: name, resource group, location, DNS prefix, private "
    "cluster, RBAC and network profile force a new cluster; the default (system) node pool's VM size, OS disk, subnet "
    "and zones rebuild it through temporary_name_for_rotation (every system node replaced)",
    checked=True,
)
for _azure, _path in (("azure:network/virtualNetwork:VirtualNetwork", ("name", "resourceGroupName", "location")),
                      ("azure:network/subnet:Subnet", ("name", "resourceGroupName", "virtualNetworkName")),
                      ("azure:core/resourceGroup:ResourceGroup", ("name", "location"))):
    TABLES[_azure] = ReplaceTable(paths=_path, source="Terraform azurerm provider docs: name, group and location force "
                                  "a new resource", checked=False)

TABLES["kubernetes:core/v1:PersistentVolumeClaim"] = ReplaceTable(
    paths=("metadata.name", "metadata.namespace", "spec.accessModes", "spec.storageClassName", "spec.volumeName",
           "spec.volumeMode", "spec.selector", "spec.dataSource", "spec.dataSourceRef"),
    source="Kubernetes API validation (ValidatePersistentVolumeClaimUpdate): a bound claim's spec is immutable except "
    "resources.requests (growing) and volumeAttributesClassName, so these changes need a new claim",
    checked=False,
)
TABLES["kubernetes:storage.k8s.io/v1:StorageClass"] = ReplaceTable(
    paths=("metadata.name", "provisioner", "parameters", "reclaimPolicy", "volumeBindingMode"),
    source="Kubernetes API validation (ValidateStorageClassUpdate): provisioner, parameters, reclaimPolicy and "
    "volumeBindingMode are immutable",
    checked=False,
)

# Every Kubernetes object (not the Helm release) is replaced when its name or namespace changes.
KUBERNETES_OBJECT = ReplaceTable(
    paths=("metadata.name", "metadata.namespace"),
    source="pulumi/pulumi-kubernetes provider Diff: a changed metadata.name/namespace is a new object",
    checked=False,
)

# Resource kinds whose replacement or deletion disrupts running work or loses data.
_DISRUPTIVE_KINDS: dict[str, str] = {
    "aws:eks/cluster:Cluster": "cluster",
    "gcp:container/cluster:Cluster": "cluster",
    "aws:eks/nodeGroup:NodeGroup": "node pool",
    "gcp:container/nodePool:NodePool": "node pool",
    "azure:containerservice/kubernetesCluster:KubernetesCluster": "cluster",
    "azure:containerservice/kubernetesClusterNodePool:KubernetesClusterNodePool": "node pool",
    "azure:network/virtualNetwork:VirtualNetwork": "network",
    "aws:fsx/lustreFileSystem:LustreFileSystem": "file system",
    "aws:efs/fileSystem:FileSystem": "file system",
    "gcp:filestore/instance:Instance": "file system",
    "aws:ec2/vpc:Vpc": "network",
    "gcp:compute/network:Network": "network",
    "kubernetes:core/v1:Namespace": "namespace (deletes everything in it)",
    "command:remote:Command": "host install (k3s server/agent)",
}

# What a stateful resource holds: the data a delete or replacement can lose (the review lists these first).
STATEFUL: dict[str, str] = {
    "aws:eks/cluster:Cluster": "every Kubernetes object of the cluster (its etcd), and what runs on it",
    "gcp:container/cluster:Cluster": "every Kubernetes object of the cluster (its etcd), and what runs on it",
    "azure:containerservice/kubernetesCluster:KubernetesCluster": "every Kubernetes object of the cluster (its etcd), and what runs on it",
    "aws:kms/key:Key": "the key the cluster's Secrets are encrypted with (without it they cannot be read)",
    "gcp:kms/cryptoKey:CryptoKey": "the key the data is encrypted with (without it it cannot be read)",
    "kubernetes:core/v1:PersistentVolumeClaim": "the claim's volume (checkpoints, datasets): jobs would get a new, empty one",
    "kubernetes:core/v1:PersistentVolume": "the volume's data",
    "aws:ebs/volume:Volume": "the volume's data",
    "aws:efs/fileSystem:FileSystem": "the file system's data",
    "aws:fsx/lustreFileSystem:LustreFileSystem": "the file system's data",
    "gcp:filestore/instance:Instance": "the file system's data",
    "gcp:compute/disk:Disk": "the disk's data",
    # AMP User Guide, "Delete an Amazon Managed Service for Prometheus workspace": "Deleting a workspace deletes the
    # data that has been ingested into it" (DeleteWorkspace API reference: permanently, within one month).
    "aws:amp/workspace:Workspace": "every metric sample ingested into the workspace (its alert history too): a new workspace starts empty",
}
_K3S_SERVER = re.compile(r"INSTALL_K3S_EXEC=['\"]?server\b")


def data_held(type_: str, inputs: Optional[dict], protected: bool = False) -> Optional[str]:
    """What deleting or replacing this resource can lose, or None for a resource that holds no data. A k3s server
    install holds the cluster's datastore; anything the plan registered with `protect` holds something too."""
    inputs = inputs or {}
    if type_ in STATEFUL:
        held = STATEFUL[type_]
        name = (inputs.get("metadata") or {}).get("name") if isinstance(inputs.get("metadata"), dict) else None
        return f"{held} (named {name})" if name and type_.startswith("kubernetes:") else held
    if type_ == "command:remote:Command" and _K3S_SERVER.search(str(inputs.get("create") or "")):
        host = (inputs.get("connection") or {}).get("host") if isinstance(inputs.get("connection"), dict) else None
        return (f"the k3s datastore on {host or 'the server'} (etcd member or SQLite, local etcd snapshots): the uninstall "
                "script removes it")
    if protected:
        return "state the program protects (it was registered with protect)"
    return None


_INDEX = re.compile(r"\[\d+\]")


def table_for(type_: str) -> Optional[ReplaceTable]:
    if type_ in TABLES:
        return TABLES[type_]
    if type_.startswith("kubernetes:") and not type_.startswith("kubernetes:helm.sh/") and ":" in type_[11:]:
        return KUBERNETES_OBJECT
    return None


def normalize(path: str) -> str:
    """`nodeConfig.guestAccelerators[0].type` -> `nodeConfig.guestAccelerators.type`."""
    return _INDEX.sub("", path)


def _under(path: str, rule: str) -> bool:
    return path == rule or path.startswith(rule + ".")


def forcing_rule(type_: str, path: str) -> Optional[tuple[str, str, bool]]:
    """(rule path, source, certain) when a change at `path` of a `type_` resource forces replacement."""
    table = table_for(type_)
    if table is None:
        return None
    p = normalize(path)
    for rule in table.paths:
        if _under(p, rule):
            return rule, table.source, True
    for rule in table.conditional:
        if _under(p, rule):
            return rule, table.source, False
    return None


def disruptive_kind(type_: str) -> Optional[str]:
    """What losing this resource means ("node pool", "file system", ...), or None for ordinary resources."""
    return _DISRUPTIVE_KINDS.get(type_)
