"""The 0.1 module names, kept for one release: `import gpufleet.spec` gives the module `gpufleet.base.spec` itself.

0.2 laid the package out by layer (gpufleet/__init__.py). A program or script written against 0.1 keeps working:
importing an old name warns (DeprecationWarning, naming the new one) and returns the very module at the new name,
so classes, `isinstance` checks and module state are shared, never loaded twice. `python -m gpufleet.nccl_test`
runs the new module too. Remove MOVED in 0.3, MOVED_IN_0_3 in 0.4, and then this module and its `install()`.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from types import ModuleType
from typing import Optional

# Old name -> new name; a submodule of an old package moves with it (gpufleet.spec.eks -> gpufleet.base.spec.platforms.eks).
MOVED = {
    **{f"gpufleet.{name}": f"gpufleet.base.{name}"
       for name in ("spec", "catalog", "versions", "labels", "sharing", "node_labels", "capacity")},
    **{f"gpufleet.{name}": f"gpufleet.app.{name}" for name in ("program", "cli", "package", "plan", "review", "verify")},
    "gpufleet.nccl_test": "gpufleet.app.verify.nccl.allreduce",
    "gpufleet.nccl_gke": "gpufleet.app.verify.nccl.gke",
}
# 0.3 grouped the spec (gpufleet/base/spec/): a platform's keys (platforms/), a feature's keys (features/), the
# cross-cutting checks (checks/). `gpufleet.spec.eks` (0.1) follows both moves.
MOVED_IN_0_3 = {
    "gpufleet.base.spec.addon_checks": "gpufleet.base.spec.features.addon_checks",
    "gpufleet.base.spec.addons": "gpufleet.base.spec.features.addons",
    "gpufleet.base.spec.admission_checks": "gpufleet.base.spec.checks.admission_checks",
    "gpufleet.base.spec.aks": "gpufleet.base.spec.platforms.aks",
    "gpufleet.base.spec.aks_checks": "gpufleet.base.spec.platforms.aks_checks",
    "gpufleet.base.spec.amd_checks": "gpufleet.base.spec.features.amd_checks",
    "gpufleet.base.spec.amd_operator": "gpufleet.base.spec.features.amd_operator",
    "gpufleet.base.spec.catalog_checks": "gpufleet.base.spec.checks.catalog_checks",
    "gpufleet.base.spec.cold_start": "gpufleet.base.spec.features.cold_start",
    "gpufleet.base.spec.compat_checks": "gpufleet.base.spec.checks.compat_checks",
    "gpufleet.base.spec.depth_checks": "gpufleet.base.spec.checks.depth_checks",
    "gpufleet.base.spec.disabled_checks": "gpufleet.base.spec.checks.disabled_checks",
    "gpufleet.base.spec.dra": "gpufleet.base.spec.features.dra",
    "gpufleet.base.spec.dra_checks": "gpufleet.base.spec.features.dra_checks",
    "gpufleet.base.spec.eks": "gpufleet.base.spec.platforms.eks",
    "gpufleet.base.spec.eks_checks": "gpufleet.base.spec.platforms.eks_checks",
    "gpufleet.base.spec.eks_endpoints": "gpufleet.base.spec.platforms.eks_endpoints",
    "gpufleet.base.spec.existing": "gpufleet.base.spec.platforms.existing",
    "gpufleet.base.spec.gke": "gpufleet.base.spec.platforms.gke",
    "gpufleet.base.spec.image_checks": "gpufleet.base.spec.features.image_checks",
    "gpufleet.base.spec.images": "gpufleet.base.spec.features.images",
    "gpufleet.base.spec.k3s_label_checks": "gpufleet.base.spec.platforms.k3s_label_checks",
    "gpufleet.base.spec.lifecycle_checks": "gpufleet.base.spec.checks.lifecycle_checks",
    "gpufleet.base.spec.name_checks": "gpufleet.base.spec.checks.name_checks",
    "gpufleet.base.spec.network_checks": "gpufleet.base.spec.checks.network_checks",
    "gpufleet.base.spec.observability": "gpufleet.base.spec.features.observability",
    "gpufleet.base.spec.observability_checks": "gpufleet.base.spec.features.observability_checks",
    "gpufleet.base.spec.operator": "gpufleet.base.spec.features.operator",
    "gpufleet.base.spec.platform_keys": "gpufleet.base.spec.checks.platform_keys",
    "gpufleet.base.spec.protection": "gpufleet.base.spec.features.protection",
    "gpufleet.base.spec.rdma": "gpufleet.base.spec.features.rdma",
    "gpufleet.base.spec.region_checks": "gpufleet.base.spec.checks.region_checks",
    "gpufleet.base.spec.registry": "gpufleet.base.spec.features.registry",
    "gpufleet.base.spec.registry_checks": "gpufleet.base.spec.features.registry_checks",
    "gpufleet.base.spec.reservation": "gpufleet.base.spec.features.reservation",
    "gpufleet.base.spec.serving": "gpufleet.base.spec.features.serving",
    "gpufleet.base.spec.sharing_checks": "gpufleet.base.spec.features.sharing_checks",
    "gpufleet.base.spec.sriov_checks": "gpufleet.base.spec.features.sriov_checks",
    "gpufleet.base.spec.storage": "gpufleet.base.spec.features.storage",
    "gpufleet.base.spec.topology": "gpufleet.base.spec.features.topology",
    "gpufleet.base.spec.topology_checks": "gpufleet.base.spec.features.topology_checks",
    "gpufleet.base.spec.upkeep_checks": "gpufleet.base.spec.checks.upkeep_checks",
    "gpufleet.base.spec.value_checks": "gpufleet.base.spec.checks.value_checks",
}


def _step(old: str, table: dict[str, str]) -> Optional[str]:
    for prefix, target in table.items():
        if old == prefix or old.startswith(prefix + "."):
            return target + old[len(prefix):]
    return None


def new_name(old: str) -> Optional[str]:
    """The module's current name, or None when `old` is not an old name."""
    new = _step(old, MOVED) or old
    new = _step(new, MOVED_IN_0_3) or new
    return None if new == old else new


def message(old: str) -> str:
    """What importing an old name warns: where the module is now, and when the old name goes."""
    moved, goes = ("0.2", "0.3") if _step(old, MOVED) else ("0.3", "0.4")
    return f"{old} moved to {new_name(old)} in gpufleet {moved}; the old name goes in {goes}"


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        new = new_name(fullname)
        if new is None:
            return None
        real = importlib.util.find_spec(new)
        if real is None:
            return None
        spec = importlib.machinery.ModuleSpec(fullname, self, origin=real.origin,
                                              is_package=real.submodule_search_locations is not None)
        spec.has_location = real.has_location  # `python -m <old name>` then sets the module's __file__
        spec.loader_state = new
        return spec

    def create_module(self, spec) -> ModuleType:
        new = spec.loader_state
        warnings.warn(message(spec.name), DeprecationWarning, stacklevel=2)  # warn() skips importlib's frames: the importer
        module = importlib.import_module(new)
        spec.loader_state = (new, module.__spec__)
        return module

    def exec_module(self, module: ModuleType) -> None:
        # importlib gave the module the alias's spec (module_from_spec sets __spec__); give it back its own.
        module.__spec__ = module.__spec__.loader_state[1]

    def get_code(self, fullname):
        """`python -m <old name>` (runpy asks the loader for the code): the new module's code. A command's user sees
        the message (FutureWarning is shown by default; a DeprecationWarning from runpy would not be)."""
        new = new_name(fullname)
        warnings.warn(f"python -m {fullname}: the module {message(fullname).split(' ', 1)[1]}", FutureWarning, stacklevel=2)
        return importlib.util.find_spec(new).loader.get_code(new)

    def is_package(self, fullname) -> bool:
        return importlib.util.find_spec(new_name(fullname)).submodule_search_locations is not None


_FINDER = _MovedModules()


def install() -> None:
    """Put the finder first on sys.meta_path (once), so old names never load a second copy from a path."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
