"""Check that every values key path we set exists in a chart's upstream values.yaml."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.helpers import load_yaml

# Maps whose keys are the user's own (labels, selectors, ConfigMap data): any key below them is fine.
FREE_FORM = {"nodeSelector", "labels", "annotations", "data", "podLabels", "podAnnotations", "extraArgs", "env"}


def key_paths(values: Any, prefix: str = "") -> list[str]:
    """Dotted paths to every leaf we set; lists and free-form maps count as leaves."""
    if not isinstance(values, dict) or not values:
        return [prefix]
    out = []
    for key, value in values.items():
        path = f"{prefix}.{key}" if prefix else key
        out += [path] if key in FREE_FORM else key_paths(value, path)
    return out


def missing_paths(values: dict, upstream_file: Path) -> list[str]:
    """Key paths in `values` that the upstream values.yaml does not have (commented-out keys do not count)."""
    upstream = load_yaml(upstream_file.read_text())
    missing = []
    for path in key_paths(values):
        node: Any = upstream
        for part in path.split("."):
            if not isinstance(node, dict) or part not in node:
                missing.append(path)
                break
            node = node[part]
    return missing
