"""Reading the catalog's YAML files (one cached parse each)."""

from __future__ import annotations

import functools
from pathlib import Path

import yaml

_HERE = Path(__file__).parent


@functools.cache
def _load(name: str) -> dict:
    with open(_HERE / name, encoding="utf-8") as f:
        return yaml.safe_load(f)
