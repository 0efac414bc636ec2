"""The stack's platform is installed: its cloud SDKs are importable, or the stack is refused naming the extra.

gpufleet installs per platform (`pip install 'gpufleet[eks]'`, `[gke]`, `[aks]`, `[k3s]`, `[existing]`, `[all]`;
pyproject.toml): the core carries no cloud SDK. A stack whose platform's SDK is missing would otherwise fail deep in
its program with a `ModuleNotFoundError` traceback; here it is one problem on `gpufleet:cluster.platform` (exit 2
from the CLI) that says what to install. The platform declares its SDK modules and extra
(`ProgramTraits.sdk_modules`, `.extra`); the check only looks for them (`importlib.util.find_spec`), it imports none.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from gpufleet.base import platforms
from gpufleet.base.spec.errors import Problem

NAMESPACE = "gpufleet"


def missing_modules(modules: tuple[str, ...]) -> list[str]:
    """The modules of `modules` this Python cannot find (a missing parent package counts as missing)."""
    return [name for name in modules if not _found(name)]


def _found(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # `a.b` whose package `a` is absent
        return False


def check(stack: str, spec: Any, config: dict) -> list[Problem]:
    """One problem when the platform's SDK modules are not all installed, naming them and the extra to install."""
    traits = platforms.of(spec)
    missing = missing_modules(traits.program.sdk_modules)
    if not missing:
        return []
    return [Problem(
        stack, f"{NAMESPACE}:cluster.platform",
        f"platform {traits.name} needs {', '.join(missing)}: pip install 'gpufleet[{traits.program.extra}]'",
    )]
