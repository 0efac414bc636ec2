"""AWS EKS: control plane, VPC, managed GPU node groups (with EFA), and EKS's own add-ons.

Importing this package loads `pulumi_aws`; a k3s or GKE stack never does.

Public API: the names in `__all__` (docs/components.md); the modules behind them are internal.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for type checkers and editors; at run time each name loads on first use
    from gpufleet.components.eks.network import EksNetwork, EksNetworkArgs
    from gpufleet.components.eks.cluster import EksCluster, EksClusterArgs
    from gpufleet.components.eks.node_group import EksNodeGroup, EksNodeGroupArgs
    from gpufleet.components.eks.efa import EksEfaFabric, EksEfaFabricArgs
    from gpufleet.components.eks.autoscaler import ClusterAutoscaler, ClusterAutoscalerArgs
    from gpufleet.components.eks.karpenter import Karpenter, KarpenterArgs
    from gpufleet.components.eks.karpenter_pool import KarpenterNodePool, KarpenterNodePoolArgs
    from gpufleet.components.eks.efa_device_plugin import EfaDevicePlugin, EfaDevicePluginArgs
    from gpufleet.components.eks.ebs_storage import EbsStorage
    from gpufleet.components.eks.fsx_storage import FsxLustreStorage, FsxLustreStorageArgs
    from gpufleet.components.eks.managed_prometheus import EksManagedPrometheus, EksManagedPrometheusArgs
    from gpufleet.components.eks.amp_query_access import AmpQueryAccess, AmpQueryAccessArgs
    from gpufleet.components.eks.irsa import irsa_role, trust_policy
    from gpufleet.components.eks.platform import accelerator_label_value

_PUBLIC = {
    "EksNetwork": "network", "EksNetworkArgs": "network",
    "EksCluster": "cluster", "EksClusterArgs": "cluster",
    "EksNodeGroup": "node_group", "EksNodeGroupArgs": "node_group",
    "EksEfaFabric": "efa", "EksEfaFabricArgs": "efa",
    "ClusterAutoscaler": "autoscaler", "ClusterAutoscalerArgs": "autoscaler",
    "Karpenter": "karpenter", "KarpenterArgs": "karpenter",
    "KarpenterNodePool": "karpenter_pool", "KarpenterNodePoolArgs": "karpenter_pool",
    "EfaDevicePlugin": "efa_device_plugin", "EfaDevicePluginArgs": "efa_device_plugin",
    "EbsStorage": "ebs_storage",
    "FsxLustreStorage": "fsx_storage", "FsxLustreStorageArgs": "fsx_storage",
    "EksManagedPrometheus": "managed_prometheus", "EksManagedPrometheusArgs": "managed_prometheus",
    "AmpQueryAccess": "amp_query_access", "AmpQueryAccessArgs": "amp_query_access",
    "irsa_role": "irsa", "trust_policy": "irsa",
    "accelerator_label_value": "platform",
}
__all__ = sorted(_PUBLIC)


def __getattr__(name: str) -> Any:
    if name in _PUBLIC:
        return getattr(importlib.import_module(f"{__name__}.{_PUBLIC[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
