"""The workload layer on any cluster: Kueue, JobSet, Kubeflow trainer, Volcano, KEDA, priorities, team namespaces.

Public API: the names in `__all__` (docs/components.md); the modules behind them are internal.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for type checkers and editors; at run time each name loads on first use
    from gpufleet.components.workloads.kueue import Kueue, KueueArgs
    from gpufleet.components.workloads.jobset import JobSet, JobSetArgs
    from gpufleet.components.workloads.trainer import Trainer, TrainerArgs
    from gpufleet.components.workloads.volcano import Volcano, VolcanoArgs
    from gpufleet.components.workloads.keda import Keda, KedaArgs, KedaPodIdentity
    from gpufleet.components.workloads.priority_classes import PriorityClasses, PriorityClassesArgs
    from gpufleet.components.workloads.team_namespace import TeamNamespace, TeamNamespaceArgs
    from gpufleet.components.workloads.pool_flavor import PoolFlavor, pool_flavors

_PUBLIC = {
    "Kueue": "kueue", "KueueArgs": "kueue",
    "JobSet": "jobset", "JobSetArgs": "jobset",
    "Trainer": "trainer", "TrainerArgs": "trainer",
    "Volcano": "volcano", "VolcanoArgs": "volcano",
    "Keda": "keda", "KedaArgs": "keda", "KedaPodIdentity": "keda",
    "PriorityClasses": "priority_classes", "PriorityClassesArgs": "priority_classes",
    "TeamNamespace": "team_namespace", "TeamNamespaceArgs": "team_namespace",
    "PoolFlavor": "pool_flavor", "pool_flavors": "pool_flavor",
}
__all__ = sorted(_PUBLIC)


def __getattr__(name: str) -> Any:
    if name in _PUBLIC:
        return getattr(importlib.import_module(f"{__name__}.{_PUBLIC[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
