"""The 0.1 module names, kept for one release: `import gpufleet.spec` gives the module `gpufleet.base.spec` itself.

0.2 laid the package out by layer (gpufleet/__init__.py). A program or script written against 0.1 keeps working:
importing an old name warns (DeprecationWarning, naming the new one) and returns the very module at the new name,
so classes, `isinstance` checks and module state are shared, never loaded twice. `python -m gpufleet.nccl_test`
runs the new module too. Remove this module, and its `install()` in gpufleet/__init__.py, in 0.3.
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

# Old name -> new name; a submodule of an old package moves with it (gpufleet.spec.eks -> gpufleet.base.spec.eks).
MOVED = {
    **{f"gpufleet.{name}": f"gpufleet.base.{name}"
       for name in ("spec", "catalog", "versions", "labels", "sharing", "node_labels", "capacity")},
    **{f"gpufleet.{name}": f"gpufleet.app.{name}" for name in ("program", "cli", "package", "plan", "review", "verify")},
    "gpufleet.nccl_test": "gpufleet.app.verify.nccl.allreduce",
    "gpufleet.nccl_gke": "gpufleet.app.verify.nccl.gke",
}


def new_name(old: str) -> Optional[str]:
    """The module's 0.2 name, or None when `old` is not a 0.1 name."""
    for prefix, target in MOVED.items():
        if old == prefix or old.startswith(prefix + "."):
            return target + old[len(prefix):]
    return None


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
        warnings.warn(f"{spec.name} moved to {new} in gpufleet 0.2; the old name goes in 0.3",
                      DeprecationWarning, stacklevel=2)  # warn() skips importlib's frames: the importer
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
        warnings.warn(f"python -m {fullname}: the module moved to {new} in gpufleet 0.2; the old name goes in 0.3",
                      FutureWarning, stacklevel=2)
        return importlib.util.find_spec(new).loader.get_code(new)

    def is_package(self, fullname) -> bool:
        return importlib.util.find_spec(new_name(fullname)).submodule_search_locations is not None


_FINDER = _MovedModules()


def install() -> None:
    """Put the finder first on sys.meta_path (once), so old names never load a second copy from a path."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
