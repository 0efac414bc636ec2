"""The wheel installs one namespace, `gpufleet`, and every module in it imports from the installed copy; a clean
install is quiet.

The repository keeps the card's top-level `components/` and `policies/` folders; pyproject.toml maps them
to `gpufleet.components` and `gpufleet.policies`, so a user's own `components` package never collides.
Building gpufleet prints no deprecation warning (the license is an SPDX string, as setuptools >= 77 wants), and
the Makefile's install step silences setuptools' informational editable-install note. The module builds the
wheel once and every test here reads that one build.
"""

from __future__ import annotations

import re
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest

from tests.helpers import ROOT


@pytest.fixture(scope="module")
def build(tmp_path_factory) -> tuple[Path, str]:
    """`pip wheel` of the repository, not quiet and without pip's cache (as a clean install builds it): the wheel
    and everything the build printed."""
    out = tmp_path_factory.mktemp("wheel")
    run = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-cache-dir", "-w", str(out), str(ROOT)],
        capture_output=True, text=True, check=True,
    )
    (path,) = out.glob("gpufleet-*.whl")
    return path, run.stdout + run.stderr


@pytest.fixture(scope="module")
def wheel(build) -> Path:
    return build[0]


def test_building_the_package_prints_no_warning(build):
    output = build[1]
    assert not re.search(r"(?i)deprecat|BuildBackendWarning|SetuptoolsWarning", output), output


def test_the_makefile_install_drops_only_the_editable_install_note():
    recipe = (ROOT / "Makefile").read_text()
    line = next(l for l in recipe.splitlines() if "pip install -q -e" in l)
    assert line.strip().startswith('PYTHONWARNINGS="ignore:Editable installation" ')


def test_pyproject_lists_every_package_in_the_tree():
    """`packages` is explicit (package-dir maps two folders): a new subpackage must be added there."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = {"gpufleet": ROOT / "gpufleet", "gpufleet.components": ROOT / "components",
               "gpufleet.policies": ROOT / "policies"}
    assert config["package-dir"] == {k: str(v.relative_to(ROOT)) for k, v in folders.items()}
    found = set()
    for package, folder in folders.items():
        for init in folder.rglob("__init__.py"):
            parts = init.parent.relative_to(folder).parts
            found.add(".".join([package, *parts]))
    assert set(config["packages"]) == found


def test_wheel_installs_only_gpufleet(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/", 1)[0] for n in names}
    assert top == {"gpufleet", f"{wheel.name.split('-')[0]}-{wheel.name.split('-')[1]}.dist-info"}
    for data in ("gpufleet/base/catalog/gpus.yaml", "gpufleet/base/catalog/aws_instances.yaml", "gpufleet/base/catalog/gcp_machines.yaml",
                 "gpufleet/base/catalog/drivers.yaml", "gpufleet/policies/PulumiPolicy.yaml",
                 "gpufleet/components/gpu_cluster.py", "gpufleet/components/eks/node_group.py",
                 "gpufleet/policies/rules/gpu_pool_taint.py"):
        assert data in names


def test_every_module_imports_from_the_installed_wheel(wheel, tmp_path):
    """A fresh interpreter outside the repository, with the wheel unpacked as its only gpufleet and the
    dependencies from this venv (no .pth processing there, so the editable install stays out of it)."""
    target = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(target)
    modules = sorted(
        n[:-3].replace("/__init__", "").replace("/", ".")
        for n in zipfile.ZipFile(wheel).namelist() if n.endswith(".py") and not n.endswith("__main__.py")
    )
    script = f"""
import importlib, sys
sys.path[:] = [{str(target)!r}, *[p for p in sys.path if p.endswith(('.zip', 'lib-dynload')) or 'python3.' in p and 'site-packages' not in p], {sysconfig.get_paths()['purelib']!r}]
bad = []
for name in {modules!r}:
    module = importlib.import_module(name)
    if not module.__file__.startswith({str(target)!r}):
        bad.append((name, module.__file__))
from gpufleet.base import catalog
assert catalog.gpu('H100-80GB').memory_gb == 80
print(len({modules!r}), 'modules', bad)
sys.exit(1 if bad else 0)
"""
    result = subprocess.run([sys.executable, "-S", "-c", script], cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:] + result.stdout
    assert f"{len(modules)} modules []" in result.stdout
    assert len(modules) > 60
