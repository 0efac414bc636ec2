"""gpufleet's Pulumi components, installed as `gpufleet.components`.

- `gpu_cluster.GpuCluster` composes everything; `platform` picks the platform package by name;
  `cluster_access.ClusterAccess` is the narrow view of a cluster that pools and add-ons take;
  `helm_chart` installs a pinned chart on that view.
- `eks/`, `gke/`, `k3s/`: one subpackage per platform (control plane, network, GPU pools, its own add-ons).
- `gpu_stack/`, `workloads/`: the cross-platform layers installed on any cluster.

The public API is what each package's `__all__` names (docs/components.md): import it from the package,
e.g. `from gpufleet.components.eks import EksCluster`. The modules behind it, and every other name in them,
are internal and may change. Names load on first use, so a platform's SDK loads only when one of its
components is used.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for type checkers and editors; at run time each name loads on first use
    from gpufleet.components.gpu_cluster import GpuCluster, GpuClusterArgs, GpuClusterConfigError, StackConfig
    from gpufleet.components.cluster_access import ClusterAccess

_PUBLIC = {
    "GpuCluster": "gpu_cluster", "GpuClusterArgs": "gpu_cluster", "GpuClusterConfigError": "gpu_cluster",
    "StackConfig": "gpu_cluster",
    "ClusterAccess": "cluster_access",
}
__all__ = sorted(_PUBLIC)


def __getattr__(name: str) -> Any:
    if name in _PUBLIC:
        return getattr(importlib.import_module(f"{__name__}.{_PUBLIC[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
