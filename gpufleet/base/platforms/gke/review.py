"""gke: review traits (gpufleet/base/platforms/contract/review.py says what each one means).

Rows for pulumi-gcp resources: bridged from hashicorp/terraform-provider-google, which replaces a resource when an
input its schema marks `ForceNew` changes.
"""

from __future__ import annotations

from typing import Any

from gpufleet.base.platforms.contract.review import ReplaceTable, ReviewTraits, VersionedPart
from gpufleet.base.platforms.contract.versions import CONTROL_PLANE, NODE_POOL

_TF_GOOGLE = "hashicorp/terraform-provider-google"

_KEY = "cluster.kubernetesVersion"
"""The stack key that sets every version these parts run (gpufleet:cluster.kubernetesVersion)."""

class GkeReview(ReviewTraits):
    replace_tables = {
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
        "gcp:filestore/instance:Instance": ReplaceTable(
            paths=("name", "tier", "location", "zone", "project", "networks", "fileShares.name", "kmsKeyName"),
            source="Terraform google provider docs, google_filestore_instance (fileShares.capacityGb grows in place)",
            checked=False,
        ),
        "gcp:compute/network:Network": ReplaceTable(
            paths=("name", "project", "autoCreateSubnetworks", "enableUlaInternalIpv6", "internalIpv6Range"),
            source="Terraform google provider docs, google_compute_network",
            checked=False,
        ),
    }

    # The cluster's autoscaling profile (components/gke/cluster.py; gkeSpec.autoscaling_profile).
    scale_down_settings = {
        "gcp:container/cluster:Cluster": {
            "clusterAutoscaling.autoscalingProfile":
                "OPTIMIZE_UTILIZATION removes more nodes, and faster, than BALANCED",
        },
    }

    disruptive_kinds = {
        "gcp:container/cluster:Cluster": "cluster",
        "gcp:container/nodePool:NodePool": "node pool",
        "gcp:filestore/instance:Instance": "file system",
        "gcp:compute/network:Network": "network",
    }

    stateful = {
        "gcp:container/cluster:Cluster": "every Kubernetes object of the cluster (its etcd), and what runs on it",
        "gcp:kms/cryptoKey:CryptoKey": "the key the data is encrypted with (without it it cannot be read)",
        "gcp:filestore/instance:Instance": "the file system's data",
        "gcp:compute/disk:Disk": "the disk's data",
    }

    def kubernetes_parts(self, type_: str, inputs: dict) -> list[VersionedPart]:
        """The cluster's `minMasterVersion`; a node pool's `version` only when set (without it the pool takes the
        control plane's version and, with auto-upgrade, follows it)."""
        if type_ == "gcp:container/cluster:Cluster" and inputs.get("minMasterVersion"):
            return [VersionedPart(CONTROL_PLANE, str(inputs.get("name") or ""), str(inputs["minMasterVersion"]), _KEY)]
        if type_ == "gcp:container/nodePool:NodePool" and inputs.get("version"):
            return [VersionedPart(NODE_POOL, str(inputs.get("name") or ""), str(inputs["version"]), _KEY)]
        return []

    def versions(self, type_: str, inputs: dict) -> list[tuple[str, Any]]:
        if type_ == "gcp:container/cluster:Cluster":
            return [("Kubernetes (GKE control plane)", inputs.get("minMasterVersion"))]
        if type_ == "gcp:container/nodePool:NodePool":
            node_config = inputs.get("nodeConfig")
            accelerators = (node_config.get("guestAccelerators") if isinstance(node_config, dict) else None) or []
            return [("Kubernetes (GKE node pools)", inputs.get("version"))] + [
                ("GKE GPU driver", _driver_version(acc)) for acc in accelerators]
        return []


def _driver_version(accelerator: Any) -> Any:
    """An accelerator's gpuDriverInstallationConfig.gpuDriverVersion (None when absent)."""
    config = accelerator.get("gpuDriverInstallationConfig") if isinstance(accelerator, dict) else None
    return config.get("gpuDriverVersion") if isinstance(config, dict) else None
