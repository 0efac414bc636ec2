"""Layers import one way, and no two files import each other in a circle.

base (spec, catalog, versions, labels, ...) <- components and policies <- application (program, plan,
review, cli). Every import counts, also one inside a function: a late import that dodges a cycle is
still a cycle, and so is one under `if TYPE_CHECKING:` (a type that two modules need lives in a module both import).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.helpers import ROOT

# Where each installed package lives in the repository (pyproject.toml's package-dir).
SOURCES = {"gpufleet": ROOT / "gpufleet", "gpufleet.components": ROOT / "components", "gpufleet.policies": ROOT / "policies"}

BASE, MIDDLE, APPLICATION = 0, 1, 2
# Module name prefixes per layer: the folders are the layers. The longest matching prefix decides; every module
# must match one.
LAYERS = {
    "gpufleet": BASE,  # the package's __init__ (and the 0.1 names' finder, gpufleet/_moved.py)
    "gpufleet.base": BASE,
    "gpufleet.components": MIDDLE,
    "gpufleet.policies": MIDDLE,
    "gpufleet.app": APPLICATION,
    "gpufleet.testing": APPLICATION,  # the public testing module: runs programs as the plan does (gpufleet.app.plan)
}
# The two middle-layer packages stand side by side: neither imports the other.
SIDEWAYS = ("gpufleet.components", "gpufleet.policies")


def module_files() -> dict[str, Path]:
    out = {}
    for package, folder in SOURCES.items():
        for path in folder.rglob("*.py"):
            if "__pycache__" in path.parts:
                continue
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            name = ".".join([package, *parts])
            if package == "gpufleet" and len(parts) and parts[0] in ("components", "policies"):
                continue  # not a source of gpufleet itself
            out[name] = path
    return out


MODULES = module_files()


def layer_of(module: str) -> tuple[str, int]:
    prefix = max((p for p in LAYERS if module == p or module.startswith(p + ".")), key=len, default=None)
    assert prefix is not None, f"{module} belongs to no layer: add it to LAYERS in {__file__}"
    return prefix, LAYERS[prefix]


def imports_of(module: str, path: Path) -> set[str]:
    """Our modules this file imports (resolved to the module, not the package, where a name is one)."""
    tree = ast.parse(path.read_text(), str(path))
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    out = set()
    for name in found:
        while name and name not in MODULES:
            name = name.rpartition(".")[0]
        if name and name != module:
            out.add(name)
    return out


GRAPH = {module: imports_of(module, path) for module, path in MODULES.items()}


def test_the_tree_has_every_layer():
    layers = {layer_of(m)[1] for m in MODULES}
    assert layers == {BASE, MIDDLE, APPLICATION}
    assert "gpufleet.components.gpu_cluster" in MODULES and "gpufleet.policies.pack" in MODULES


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_upward_or_sideways_import(module):
    own_prefix, own = layer_of(module)
    wrong = []
    for target in sorted(GRAPH[module]):
        prefix, layer = layer_of(target)
        if layer > own:
            wrong.append(f"{target} (layer {layer} > {own})")
        elif layer == MIDDLE == own:
            mine = next(p for p in SIDEWAYS if module.startswith(p))
            theirs = next(p for p in SIDEWAYS if target.startswith(p))
            if mine != theirs:
                wrong.append(f"{target} (components and policies stand side by side)")
    assert not wrong, f"{module} imports upward: {', '.join(wrong)}"


def test_no_import_cycle_between_files():
    """Tarjan's strongly connected components over every import (module level and inside functions)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in GRAPH[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in sorted(GRAPH):
        if module not in index:
            connect(module)
    assert not cycles, f"import cycles: {cycles}"


def test_the_walk_sees_late_imports():
    """The walker must see an import inside a function (the kind that hid the plan <-> spec cycle)."""
    assert "gpufleet.components.gpu_stack.operator" in GRAPH["gpufleet.components.cluster_layers"]
    assert "gpufleet.policies.pack" in GRAPH["gpufleet.app.plan.policy_runner"]
