"""A directory for one test run, shared by its pytest workers, holding results that are a pure function of their
inputs and cost seconds to make: helm renders (tests/helm.py), example stacks' plans (tests.helpers.planned).

Each is made once per run instead of once per worker, and no run reads another's: tests/conftest.py creates the
directory in the process that starts the run, hands its path to the workers in GPUFLEET_TEST_RUN_CACHE, and removes
it when the run ends. A key names everything its value depends on (a digest of the inputs); two workers that make the
same value at once both write it whole, and the last rename wins.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Optional

ENV = "GPUFLEET_TEST_RUN_CACHE"


def directory() -> Optional[Path]:
    """This run's directory; None outside a pytest run started with tests/conftest.py (nothing is kept then)."""
    path = os.environ.get(ENV)
    return Path(path) if path else None


def read_bytes(key: str) -> Optional[bytes]:
    """The value stored under `key` in this run, or None."""
    root = directory()
    if root is None:
        return None
    try:
        return (root / key).read_bytes()
    except FileNotFoundError:
        return None


def write_bytes(key: str, value: bytes) -> None:
    """Store `value` under `key` for the rest of this run (written to a temporary file, then renamed into place)."""
    root = directory()
    if root is None:
        return
    with tempfile.NamedTemporaryFile(dir=root, prefix=f".{key}.", delete=False) as f:
        f.write(value)
    os.replace(f.name, root / key)


def read(key: str) -> Optional[str]:
    value = read_bytes(key)
    return None if value is None else value.decode()


def write(key: str, value: str) -> None:
    write_bytes(key, value.encode())
