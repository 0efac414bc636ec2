"""Install per platform (issue 47): the core carries no cloud SDK, each platform's extra brings exactly the SDK modules
its traits declare (`ProgramTraits.sdk_modules`), those are exactly what its components import, and a stack whose
platform's SDK is missing is refused on `gpufleet:cluster.platform` naming the extra (spec/checks/install_checks.py).

What the components import is read from the source (every import, also inside functions; not those under
`if TYPE_CHECKING:`, which never run), from the platform's `program.components` module through every gpufleet module
it reaches. Which distribution provides a module is asked of this venv (`importlib.metadata`), where `make test`
installed every extra. That each extra really installs alone and plans its platform's example stack is the e2e tier's
(tests/e2e/test_extras.py: fresh venvs, too slow for `make test`).
"""

from __future__ import annotations

import ast
import functools
import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path
from types import SimpleNamespace

import pytest
from packaging.requirements import Requirement

from gpufleet.base import platforms
from gpufleet.base.spec.checks import install_checks
from tests.helpers import ROOT

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
EXTRAS = PROJECT["optional-dependencies"]
# Where each installed package lives in the repository (pyproject.toml's package-dir).
SOURCES = {"gpufleet": ROOT / "gpufleet", "gpufleet.components": ROOT / "components", "gpufleet.policies": ROOT / "policies"}


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _module_files() -> dict[str, Path]:
    out = {}
    for package, folder in SOURCES.items():
        for path in folder.rglob("*.py"):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if "__pycache__" in path.parts or package == "gpufleet" and parts[0] in ("components", "policies"):
                continue
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join([package, *parts])] = path
    return out


MODULES = _module_files()


@functools.cache
def _imports(module: str) -> frozenset[str]:
    """The module names one of our files imports when it runs (relative imports resolved; `from a import b` is `a.b`
    when that is one of our modules)."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.update(f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text()))
    return frozenset(found)


def third_party_reached(start: str) -> set[str]:
    """Top-level names of every module outside gpufleet and the standard library that importing `start` can run an
    import of, through the gpufleet modules it (and each parent package on the way) imports."""
    seen: set[str] = set()
    outside: set[str] = set()
    todo = [start]
    while todo:
        parts = todo.pop().split(".")
        if parts[0] != "gpufleet":
            outside.add(parts[0])
            continue
        for i in range(1, len(parts) + 1):
            name = ".".join(parts[:i])
            if name in MODULES and name not in seen:
                seen.add(name)
                todo.extend(_imports(name))
    return {name for name in outside if name not in sys.stdlib_module_names}


def _distribution_closure(requirements: list[str]) -> set[str]:
    """The distributions these requirements install, with everything they require (no extras), from this venv."""
    out: set[str] = set()
    todo = [Requirement(r) for r in requirements]
    while todo:
        req = todo.pop()
        name = _normal(req.name)
        if name in out or req.marker and not req.marker.evaluate({"extra": ""}):
            continue
        out.add(name)
        todo.extend(Requirement(r) for r in metadata.requires(req.name) or [])
    return out


PROVIDERS = {module: {_normal(d) for d in dists} for module, dists in metadata.packages_distributions().items()}
CORE = _distribution_closure(PROJECT["dependencies"])


def core_provides(module: str) -> bool:
    return bool(PROVIDERS.get(module, set()) & CORE)


def _spec(platform: str) -> SimpleNamespace:
    """What the check reads of a StackSpec: its platform's name."""
    return SimpleNamespace(cluster=SimpleNamespace(platform=platform))


# --- the check -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("platform", platforms.names())
def test_a_platform_whose_sdk_is_installed_passes(platform):
    assert install_checks.check("s", _spec(platform), {}) == []


def test_a_missing_sdk_is_one_problem_naming_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "pulumi_aws", None)  # find_spec() answers None: not installed
    (problem,) = install_checks.check("prod", _spec("eks"), {})
    assert (problem.path, problem.message) == (
        "gpufleet:cluster.platform", "platform eks needs pulumi_aws: pip install 'gpufleet[eks]'")
    assert str(problem) == "stack 'prod': gpufleet:cluster.platform: platform eks needs pulumi_aws: pip install 'gpufleet[eks]'"


def test_every_missing_module_is_named_in_the_one_problem(monkeypatch):
    monkeypatch.setitem(sys.modules, "pulumi_command", None)
    monkeypatch.setitem(sys.modules, "pulumi_random", None)
    (problem,) = install_checks.check("dev", _spec("k3s"), {})
    assert problem.message == "platform k3s needs pulumi_command, pulumi_random: pip install 'gpufleet[k3s]'"


def test_another_platforms_missing_sdk_does_not_matter(monkeypatch):
    for sdk in ("pulumi_aws", "pulumi_gcp", "pulumi_azure_native", "pulumi_command", "pulumi_random"):
        monkeypatch.setitem(sys.modules, sdk, None)
    assert install_checks.check("c", _spec("existing"), {}) == []


def test_a_module_under_a_missing_package_counts_as_missing():
    assert install_checks.missing_modules(("no_such_package_here.sub", "json")) == ["no_such_package_here.sub"]


# --- what each extra brings ------------------------------------------------------------------------------------


@pytest.mark.parametrize("platform", platforms.names())
def test_sdk_modules_are_what_the_platforms_components_import(platform):
    """Everything outside the core that the platform's components reach is declared, and nothing more."""
    program = platforms.get(platform).program
    reached = third_party_reached(program.components)
    beyond_core = {m for m in reached if not core_provides(m)}
    assert beyond_core == set(program.sdk_modules), (
        f"{platform}'s components import {sorted(beyond_core)} beyond the core; its traits declare "
        f"{sorted(program.sdk_modules)} (gpufleet/base/platforms/{platform}/__init__.py)")


@pytest.mark.parametrize("platform", platforms.names())
def test_each_platform_extra_brings_exactly_its_sdk_modules(platform):
    program = platforms.get(platform).program
    extra = {_normal(Requirement(r).name) for r in EXTRAS[program.extra]}
    wanted = set().union(*(PROVIDERS[m] for m in program.sdk_modules)) if program.sdk_modules else set()
    assert extra == wanted


def test_the_core_brings_no_platform_sdk():
    sdks = {m for name in platforms.names() for m in platforms.get(name).program.sdk_modules}
    assert sdks and not {m for m in sdks if core_provides(m)}


@pytest.mark.parametrize("start", ["gpufleet.app.cli", "gpufleet.components.gpu_cluster", "gpufleet.policies.pack",
                                   "gpufleet.app.package"])
def test_shared_code_imports_no_platform_sdk(start):
    """Only a platform's own components import its SDK: the CLI, GpuCluster, the pack and the component package run
    on the core (a platform module is imported by name, components/platform.py, only for a stack that uses it)."""
    sdks = {m for name in platforms.names() for m in platforms.get(name).program.sdk_modules}
    assert not third_party_reached(start) & sdks


def test_all_brings_every_platform_and_dev_brings_all():
    (everything,) = [Requirement(r) for r in EXTRAS["all"]]
    assert everything.name == PROJECT["name"]
    assert everything.extras == {platforms.get(n).program.extra for n in platforms.names()}
    assert f"{PROJECT['name']}[all]" in EXTRAS["dev"]
