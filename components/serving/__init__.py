"""Inference serving on any cluster: LeaderWorkerSet, a Gateway (GKE's managed classes or Envoy Gateway), the
Inference Extension's InferencePool and endpoint picker, and model servers scaled on their own metrics
(docs/inference.md).

Public API: the names in `__all__`; the modules behind them are internal.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpufleet.components.serving.lws import LeaderWorkerSetController, LeaderWorkerSetControllerArgs
    from gpufleet.components.serving.gateway import ServingGateway, ServingGatewayArgs
    from gpufleet.components.serving.model_server import ModelServer, ModelServerArgs

_PUBLIC = {
    "LeaderWorkerSetController": "lws", "LeaderWorkerSetControllerArgs": "lws",
    "ServingGateway": "gateway", "ServingGatewayArgs": "gateway",
    "ModelServer": "model_server", "ModelServerArgs": "model_server",
}
__all__ = sorted(_PUBLIC)


def __getattr__(name: str) -> Any:
    if name in _PUBLIC:
        return getattr(importlib.import_module(f"{__name__}.{_PUBLIC[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
