"""Reading the catalog's YAML files (one cached parse each)."""

from __future__ import annotations

import functools
from pathlib import Path

import yaml

_HERE = Path(__file__).parent
# libyaml's parser when PyYAML has it (its wheels do): every plan reads several catalog files, and libyaml parses
# them about seven times faster into the same values (the same safe constructor builds them;
# tests/unit/test_catalog_files.py compares both parsers on every file).
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@functools.cache
def _load(name: str) -> dict:
    with open(_HERE / name, encoding="utf-8") as f:
        return yaml.load(f, Loader=LOADER)
