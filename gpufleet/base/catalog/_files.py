"""Reading the catalog's YAML files (one cached parse each)."""

from __future__ import annotations

import functools
from pathlib import Path

import yaml

_HERE = Path(__file__).parent
# libyaml's parser when PyYAML was built with it (the wheels are): the catalog's files parse about ten times faster,
# into the same values (the same SafeConstructor builds them), and every plan reads several of them.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@functools.cache
def _load(name: str) -> dict:
    with open(_HERE / name, encoding="utf-8") as f:
        return yaml.load(f, Loader=_LOADER)
