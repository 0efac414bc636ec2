"""k3s on your own hosts over SSH: servers (embedded etcd for HA), agents, GPU pools, local storage and node health
(node-problem-detector).

Public API: the names in `__all__` (docs/components.md); the modules behind them are internal.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for type checkers and editors; at run time each name loads on first use
    from gpufleet.components.k3s.cluster import K3sCluster, K3sClusterArgs, K3sJoin
    from gpufleet.components.k3s.node_health import K3sNodeHealth, K3sNodeHealthArgs
    from gpufleet.components.k3s.node_pool import K3sNodePool, K3sNodePoolArgs
    from gpufleet.components.k3s.storage import K3sStorage, K3sStorageArgs

_PUBLIC = {
    "K3sCluster": "cluster", "K3sClusterArgs": "cluster", "K3sJoin": "cluster",
    "K3sNodeHealth": "node_health", "K3sNodeHealthArgs": "node_health",
    "K3sNodePool": "node_pool", "K3sNodePoolArgs": "node_pool",
    "K3sStorage": "storage", "K3sStorageArgs": "storage",
}
__all__ = sorted(_PUBLIC)


def __getattr__(name: str) -> Any:
    if name in _PUBLIC:
        return getattr(importlib.import_module(f"{__name__}.{_PUBLIC[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
