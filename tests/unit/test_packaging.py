"""The wheel installs one namespace, `gpufleet`, and every module in it imports from the installed copy; a clean
install is quiet.

The repository keeps the card's top-level `components/` and `policies/` folders; pyproject.toml maps them
to `gpufleet.components` and `gpufleet.policies`, so a user's own `components` package never collides.
Building gpufleet prints no deprecation warning (the license is an SPDX string, as setuptools >= 77 wants), and
the Makefile's install step silences setuptools' informational editable-install note. The module builds the
wheel once and every test here reads that one build.

The core installs no cloud SDK: the wheel declares an extra per platform, `make plan` on a fresh machine installs only
the stack's platform and `make test` installs dev, which brings them all (tests/unit/test_install_extras.py checks what
each extra brings; tests/e2e/test_extras.py installs each one alone).
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


def test_the_makefile_install_drops_only_the_editable_install_note(tmp_path):
    # Every install a fresh machine runs (dev for `make test`, a platform's extra for `make plan`) keeps it quiet the
    # same way, as `make -n` prints it (the recipes share the uv install command, Makefile UV_PIP).
    installs = [c for target, extra in (("test", {}), ("plan", {"STACK": "prod-eks"}))
                for c in _make_dry_run(target, tmp_path / target, **extra) if "pip install -q -e " in c]
    assert len(installs) == 2
    for line in installs:
        assert line.strip().startswith('PYTHONWARNINGS="ignore:Editable installation" ')


def _make_dry_run(target: str, venv: Path, **variables: str) -> list[str]:
    """The commands `make -n TARGET` would run with this VENV (and variables): what a fresh machine runs."""
    args = [f"VENV={venv}", *(f"{k}={v}" for k, v in variables.items())]
    run = subprocess.run(["make", "-n", "-s", target, *args], cwd=ROOT, capture_output=True, text=True, check=True)
    return run.stdout.splitlines()


def _installs(commands: list[str]) -> list[str]:
    return [c.split("pip install -q -e ", 1)[1] for c in commands if "pip install -q -e " in c]


@pytest.mark.parametrize("stack, extra", [("dev", "k3s"), ("prod-eks", "eks"), ("existing-coreweave", "existing")])
def test_make_plan_on_a_fresh_machine_installs_only_the_stacks_platform(tmp_path, stack, extra):
    commands = _make_dry_run("plan", tmp_path / "venv", STACK=stack)
    assert _installs(commands) == [f"'.[{extra}]'"]
    assert commands[-1].endswith(f"/bin/gpufleet plan {stack}")


def test_make_plan_in_the_test_venv_installs_nothing_more(tmp_path):
    """A .venv that `make test` set up (dev brings every platform) plans any stack as it is."""
    venv = tmp_path / "venv"
    venv.mkdir()
    (venv / ".installed").touch()  # newer than pyproject.toml
    assert _installs(_make_dry_run("plan", venv, STACK="prod-gke")) == []


def test_make_test_installs_dev_with_every_platform(tmp_path):
    assert _installs(_make_dry_run("test", tmp_path / "venv")) == ["'.[dev]'"]
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert "gpufleet[all]" in extras["dev"]


def test_the_wheel_declares_a_core_without_cloud_sdks_and_an_extra_per_platform(wheel):
    from gpufleet.base import platforms

    meta = next(n for n in zipfile.ZipFile(wheel).namelist() if n.endswith(".dist-info/METADATA"))
    lines = zipfile.ZipFile(wheel).read(meta).decode().splitlines()
    extras = {l.split(": ", 1)[1] for l in lines if l.startswith("Provides-Extra: ")}
    assert {platforms.get(n).program.extra for n in platforms.names()} | {"all"} <= extras
    core = {re.split(r"[^A-Za-z0-9._-]", l.split(": ", 1)[1])[0].replace("_", "-").lower()
            for l in lines if l.startswith("Requires-Dist: ") and "extra ==" not in l}
    sdks = {m.replace("_", "-") for n in platforms.names() for m in platforms.get(n).program.sdk_modules}
    assert "pulumi-kubernetes" in core and not core & sdks, core


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
                 "gpufleet/policies/rules/gpu_pool_taint.py",
                 # A user's tests import gpufleet.testing; type checkers read the annotations (PEP 561 marker).
                 "gpufleet/testing.py", "gpufleet/py.typed"):
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
