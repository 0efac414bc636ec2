"""An existing Kubernetes cluster gpufleet does not create (a GPU cloud's managed cluster, one another team runs):
the cluster reached through a secret kubeconfig, and pools of the nodes it already has.

Public API: the names in `__all__` (docs/components.md); the modules behind them are internal.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for type checkers and editors; at run time each name loads on first use
    from gpufleet.components.existing.cluster import ExistingCluster, ExistingClusterArgs
    from gpufleet.components.existing.node_pool import ExistingNodePool, ExistingNodePoolArgs

_PUBLIC = {
    "ExistingCluster": "cluster", "ExistingClusterArgs": "cluster",
    "ExistingNodePool": "node_pool", "ExistingNodePoolArgs": "node_pool",
}
__all__ = sorted(_PUBLIC)


def __getattr__(name: str) -> Any:
    if name in _PUBLIC:
        return getattr(importlib.import_module(f"{__name__}.{_PUBLIC[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
