"""Platforms as plug-ins in every layer: what each platform declares once, and how shared code finds it.

A platform (eks, gke, aks, k3s, existing, or one a user or a test adds) is a `PlatformTraits` (contract/): its name
and one object per area of shared code that needs to know something about it (its stack keys and checks, its
Kubernetes versions, what its nodes carry, how its pools are priced, which add-ons and scheduling features it has,
which of its resources the review and the policies read, what its program needs). Shared code asks
`platforms.get(name).<area>.<trait>` and never compares a platform's name (tests/unit/test_platform_traits.py).

The built-in platforms are the subpackages of this package, each defining `TRAITS`; another platform plugs in with
`register(traits)` (a platform only the tests know does) or the `gpufleet.platforms` entry point group (a package's own). A
platform's resources live in `gpufleet.components.<name>` (or wherever `traits.program.components` names), imported
only when a stack uses it, so its cloud SDK is imported only then.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any, Optional

from gpufleet.base.platforms.contract import PlatformTraits

__all__ = ["PlatformTraits", "get", "names", "of", "register", "unregister"]

ENTRY_POINT_GROUP = "gpufleet.platforms"
_REGISTRY: dict[str, PlatformTraits] = {}
_DISCOVERED = False


def _discover() -> None:
    """The built-in platforms (subpackages here defining TRAITS), then installed plug-ins' entry points, once."""
    global _DISCOVERED
    if _DISCOVERED:
        return
    _DISCOVERED = True
    for info in pkgutil.iter_modules(__path__):
        if info.ispkg and info.name != "contract":
            traits = importlib.import_module(f"{__name__}.{info.name}").TRAITS
            _REGISTRY.setdefault(traits.name, traits)
    from importlib.metadata import entry_points

    for point in entry_points(group=ENTRY_POINT_GROUP):
        traits = point.load()
        _REGISTRY.setdefault(traits.name, traits)


def register(traits: PlatformTraits) -> None:
    """Add a platform (a plug-in's, a test's). Its name must be new."""
    _discover()
    if traits.name in _REGISTRY and _REGISTRY[traits.name] is not traits:
        raise ValueError(f"a platform named {traits.name!r} is already registered")
    _REGISTRY[traits.name] = traits


def unregister(name: str) -> None:
    """Remove a platform `register` added (tests clean up with it)."""
    _REGISTRY.pop(name, None)


def names() -> tuple[str, ...]:
    """Every platform's name, in the order the docs and messages list them (`PlatformTraits.order`, then name)."""
    _discover()
    return tuple(t.name for t in sorted(_REGISTRY.values(), key=lambda t: (t.order, t.name)))


def get(name: str) -> PlatformTraits:
    """The platform called `name`; KeyError naming the known ones when there is none."""
    _discover()
    found: Optional[PlatformTraits] = _REGISTRY.get(name)
    if found is None:
        raise KeyError(f"no platform {name!r} (known: {', '.join(names())})")
    return found


def of(spec: Any) -> PlatformTraits:
    """The platform a validated stack spec (a gpufleet.base.spec StackSpec) runs on. The spec imports this module,
    so the type is not imported here."""
    return get(spec.cluster.platform)
