"""Azure Kubernetes Service: the resource group and network, a private AKS control plane with Microsoft Entra ID and
workload identity and its system pool, one node pool per GPU pool, StorageClasses on AKS's CSI drivers, and the nvidia-peermem
reloader of InfiniBand pools on AKS's own driver (docs/aks.md).

Importing this package loads `pulumi_azure_native` (its submodules) only when a name is used; an EKS, GKE or k3s stack never does.

Public API: the names in `__all__` (docs/components.md); the modules behind them are internal.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for type checkers and editors; at run time each name loads on first use
    from gpufleet.components.aks.network import AksNetwork, AksNetworkArgs, AksNetworkRef
    from gpufleet.components.aks.cluster import AksCluster, AksClusterArgs
    from gpufleet.components.aks.node_pool import AksNodePool, AksNodePoolArgs
    from gpufleet.components.aks.peermem_reloader import AksPeermemReloader, AksPeermemReloaderArgs
    from gpufleet.components.aks.storage import AksStorage, AksStorageArgs

_PUBLIC = {
    "AksNetwork": "network", "AksNetworkArgs": "network", "AksNetworkRef": "network",
    "AksCluster": "cluster", "AksClusterArgs": "cluster",
    "AksNodePool": "node_pool", "AksNodePoolArgs": "node_pool",
    "AksPeermemReloader": "peermem_reloader", "AksPeermemReloaderArgs": "peermem_reloader",
    "AksStorage": "storage", "AksStorageArgs": "storage",
}
__all__ = sorted(_PUBLIC)


def __getattr__(name: str) -> Any:
    if name in _PUBLIC:
        return getattr(importlib.import_module(f"{__name__}.{_PUBLIC[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
