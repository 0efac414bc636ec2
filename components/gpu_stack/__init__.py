"""The GPU stack on any cluster: NVIDIA GPU Operator, AMD GPU Operator (k3s), GPU sharing configs, Network Operator and SR-IOV.

Public API: the names in `__all__` (docs/components.md); the modules behind them are internal.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for type checkers and editors; at run time each name loads on first use
    from gpufleet.components.gpu_stack.operator import GpuOperator, GpuOperatorArgs
    from gpufleet.components.gpu_stack.amd_operator import AmdGpuOperator, AmdGpuOperatorArgs
    from gpufleet.components.gpu_stack.sharing import GpuSharing, GpuSharingArgs, operator_settings
    from gpufleet.components.gpu_stack.network_operator import NetworkOperator, NetworkOperatorArgs

_PUBLIC = {
    "AmdGpuOperator": "amd_operator", "AmdGpuOperatorArgs": "amd_operator",
    "GpuOperator": "operator", "GpuOperatorArgs": "operator",
    "GpuSharing": "sharing", "GpuSharingArgs": "sharing", "operator_settings": "sharing",
    "NetworkOperator": "network_operator", "NetworkOperatorArgs": "network_operator",
}
__all__ = sorted(_PUBLIC)


def __getattr__(name: str) -> Any:
    if name in _PUBLIC:
        return getattr(importlib.import_module(f"{__name__}.{_PUBLIC[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
