"""Day 2 on any cluster: the stack's metrics pipeline (kube-prometheus-stack, GKE's managed collection, or the
exporters an outside collector scrapes), GPU alerts and dashboards.

Public API: the names in `__all__` (docs/components.md); the modules behind them are internal.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for type checkers and editors; at run time each name loads on first use
    from gpufleet.components.observability.stack import Observability, ObservabilityArgs
    from gpufleet.components.observability.pools import PoolFacts, pool_facts
    from gpufleet.components.observability.exporters import MetricsExporters, MetricsExportersArgs
    from gpufleet.components.observability.gke_managed import GkeManagedObservability, GkeManagedObservabilityArgs

_PUBLIC = {
    "Observability": "stack", "ObservabilityArgs": "stack",
    "PoolFacts": "pools", "pool_facts": "pools",
    "MetricsExporters": "exporters", "MetricsExportersArgs": "exporters",
    "GkeManagedObservability": "gke_managed", "GkeManagedObservabilityArgs": "gke_managed",  # imports pulumi_gcp
}
__all__ = sorted(_PUBLIC)


def __getattr__(name: str) -> Any:
    if name in _PUBLIC:
        return getattr(importlib.import_module(f"{__name__}.{_PUBLIC[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
