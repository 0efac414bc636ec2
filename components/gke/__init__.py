"""GCP GKE: control plane, VPC, GPU node pools (with GPUDirect networks), and GKE's own storage.

Importing this package loads `pulumi_gcp`; a k3s or EKS stack never does.

Public API: the names in `__all__` (docs/components.md); the modules behind them are internal.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for type checkers and editors; at run time each name loads on first use
    from gpufleet.components.gke.network import GkeNetwork, GkeNetworkArgs, GkeNetworkRef
    from gpufleet.components.gke.cluster import GkeCluster, GkeClusterArgs
    from gpufleet.components.gke.node_pool import GkeNodePool, GkeNodePoolArgs
    from gpufleet.components.gke.gpudirect_network import GkeGpuDirectNetwork, GkeGpuDirectNetworkArgs
    from gpufleet.components.gke.gpudirect_wiring import GkeGpuDirectWiring, GkeGpuDirectWiringArgs, GpuDirectPool
    from gpufleet.components.gke.storage import GkeStorage, GkeStorageArgs
    from gpufleet.components.gke.keda_identity import KedaWorkloadIdentity, KedaWorkloadIdentityArgs

_PUBLIC = {
    "GkeNetwork": "network", "GkeNetworkArgs": "network", "GkeNetworkRef": "network",
    "GkeCluster": "cluster", "GkeClusterArgs": "cluster",
    "GkeNodePool": "node_pool", "GkeNodePoolArgs": "node_pool",
    "GkeGpuDirectNetwork": "gpudirect_network", "GkeGpuDirectNetworkArgs": "gpudirect_network",
    "GkeGpuDirectWiring": "gpudirect_wiring", "GkeGpuDirectWiringArgs": "gpudirect_wiring", "GpuDirectPool": "gpudirect_wiring",
    "GkeStorage": "storage", "GkeStorageArgs": "storage",
    "KedaWorkloadIdentity": "keda_identity", "KedaWorkloadIdentityArgs": "keda_identity",
}
__all__ = sorted(_PUBLIC)


def __getattr__(name: str) -> Any:
    if name in _PUBLIC:
        return getattr(importlib.import_module(f"{__name__}.{_PUBLIC[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
