"""A platform is asked, never named (docs/platforms.md): outside a platform's own modules no code compares a
platform's name or keeps a table keyed by it. What differs between platforms is a trait of the platform
(gpufleet/base/platforms/<name>/), read by the shared spec, capacity, cost, review and policies."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from gpufleet.base import platforms
from tests.helpers import ROOT

NAMES = set(platforms.names())
# A platform's own modules: its traits, its keys (gpufleet/base/spec/platforms/<name>*.py) and its components.
OWN = ([ROOT / "gpufleet" / "base" / "platforms" / name for name in NAMES] + [ROOT / "components" / name for name in NAMES]
       + [p for p in (ROOT / "gpufleet" / "base" / "spec" / "platforms").glob("*.py") if p.stem.split("_")[0] in NAMES])
SHARED = [ROOT / "gpufleet", ROOT / "components", ROOT / "policies"]
# The same words meaning something else, each with what it means there (file, the expression as written).
NOT_A_PLATFORM = {
    # The review's verdict status "existing" (already on the base branch), not the platform.
    ("gpufleet/app/review/summary.py", 'v.status != "existing"'),
    ("gpufleet/app/review/fleet.py", 'v.status != "existing"'),
    ("gpufleet/app/review/summary.py", '{"new": 0, "head": 0, "existing": 1, "resolved": 2}'),
    ("gpufleet/app/review/markdown.py",
     '{"new": "new in this change", "existing": "already on the base", "head": "reported by the preview"}'),
    # The files of a k3s release by role ("k3s": the binary), a fact of k3s' release layout in the pin table.
    ("gpufleet/base/versions.py", '{\n        "k3s": "k3s" if arch == "amd64" else f"k3s-{arch}",\n        "images": '
     'f"k3s-airgap-images-{arch}.tar.zst",\n        "sums": f"sha256sum-{arch}.txt",\n    }'),
}


def shared_files() -> list[Path]:
    out = []
    for top in SHARED:
        for path in sorted(top.rglob("*.py")):
            if "__pycache__" in path.parts or any(path.is_relative_to(own) for own in OWN):
                continue
            out.append(path)
    return out


def _names_in(node: ast.AST) -> set[str]:
    """Platform names a compared value spells: a string, or strings in a tuple, list or set literal."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value} & NAMES
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return {e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)} & NAMES
    return set()


def name_uses(path: Path, root: Path = ROOT) -> list[str]:
    """`file:line: expression` for each comparison with a platform's name and each table keyed by one."""
    rel = str(path.relative_to(root))
    source = path.read_text()
    found = []
    for node in ast.walk(ast.parse(source)):
        hit = None
        if isinstance(node, ast.Compare) and any(_names_in(n) for n in (node.left, *node.comparators)):
            hit = node
        elif isinstance(node, ast.Dict) and any(k is not None and _names_in(k) for k in node.keys):
            hit = node
        elif isinstance(node, ast.match_case) and _names_in(getattr(node.pattern, "value", None) or ast.Pass()):
            hit = node.pattern
        if hit is not None:
            text = ast.get_source_segment(source, hit) or ast.unparse(hit)
            if (rel, text) not in NOT_A_PLATFORM:
                found.append(f"{rel}:{hit.lineno}: {text.splitlines()[0][:120]}")
    return found


def test_no_platform_name_comparison_outside_platform_modules():
    found = [use for path in shared_files() for use in name_uses(path)]
    assert not found, "ask the platform's traits instead (docs/platforms.md):\n" + "\n".join(found)


def test_the_check_sees_what_it_must(tmp_path):
    """The walker catches a comparison, a membership test and a table keyed by a platform, and nothing else."""
    sample = tmp_path / "sample.py"
    sample.write_text('if platform == "eks":\n    pass\n'
                      'ok = p in ("aks", "k3s")\n'
                      'TABLE = {"gke": 1}\n'
                      'fine = name == "kube-prometheus-stack" and {"a": 1}\n')
    assert [u.split(": ", 1)[0] for u in name_uses(sample, tmp_path)] == ["sample.py:1", "sample.py:3", "sample.py:4"]


@pytest.mark.parametrize("name", sorted(NAMES))
def test_every_platform_declares_its_program(name):
    traits = platforms.get(name)
    assert traits.name == name
    assert traits.program.components == f"gpufleet.components.{name}.platform"
    assert traits.program.extra == name
