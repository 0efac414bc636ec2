"""The components' public API: what each package exports, typed args with a docstring beside every field, and
every public name documented in docs/components.md. Everything else in the modules is internal."""

import ast
import dataclasses
import importlib
import inspect
import re
import sys

import pulumi
import pytest

from tests.helpers import ROOT

PACKAGES = [
    "gpufleet.components",
    "gpufleet.components.eks",
    "gpufleet.components.gke",
    "gpufleet.components.aks",
    "gpufleet.components.k3s",
    "gpufleet.components.gpu_stack",
    "gpufleet.components.workloads",
    "gpufleet.components.observability",
    "gpufleet.components.gitops",
]
DOC = (ROOT / "docs" / "components.md").read_text()


def public(package: str) -> dict:
    module = importlib.import_module(package)
    return {name: getattr(module, name) for name in module.__all__}


def field_docs(cls: type) -> dict[str, str]:
    """Field -> the docstring right below it in the class body."""
    tree = ast.parse(inspect.getsource(cls)).body[0]
    out, body = {}, tree.body
    for node, after in zip(body, body[1:] + [None]):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant) and isinstance(after.value.value, str):
                out[node.target.id] = after.value.value
    return out


@pytest.mark.parametrize("package", PACKAGES)
def test_every_exported_name_loads_and_is_documented(package):
    names = public(package)
    assert names, package
    missing = sorted(n for n in names if not re.search(rf"\b{n}\b", DOC))
    assert not missing, f"{package}: not in docs/components.md: {missing}"


@pytest.mark.parametrize("package", PACKAGES)
def test_components_take_typed_args_with_a_docstring_beside_every_field(package):
    for name, obj in public(package).items():
        if not (inspect.isclass(obj) and issubclass(obj, pulumi.ComponentResource)):
            continue
        params = inspect.signature(obj.__init__).parameters
        assert list(params)[:2] == ["self", "name"] and "opts" in params, name
        args = params.get("args")
        if args is None:
            continue  # takes only the cluster (e.g. EbsStorage)
        assert args.annotation in (f"{name}Args", f"'{name}Args'") or getattr(args.annotation, "__name__", "") == f"{name}Args", name
        args_cls = getattr(sys.modules[obj.__module__], f"{name}Args")
        assert dataclasses.is_dataclass(args_cls) and args_cls.__dataclass_params__.frozen, f"{name}Args"
        docs = field_docs(args_cls)
        undocumented = [f.name for f in dataclasses.fields(args_cls) if not docs.get(f.name)]
        assert not undocumented, f"{name}Args fields without a docstring: {undocumented}"
        assert name in public(package) and f"{name}Args" in public(package)


def test_every_component_class_says_what_it_builds():
    """help(EksNodeGroup) and an editor's hover show what a component registers: each component in the source tree,
    public or not, has a class docstring naming its type token."""
    import pathlib

    missing = []
    for path in sorted((ROOT / "components").rglob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef) and any("ComponentResource" in ast.unparse(b) for b in node.bases):
                tokens = re.findall(r'super\(\).__init__\("([^"]+)"', ast.unparse(node))
                doc = ast.get_docstring(node) or ""
                if not doc or (tokens and tokens[0] not in doc and node.name != "GpuCluster"):
                    missing.append(f"{pathlib.Path(path).relative_to(ROOT)}:{node.name}")
    assert missing == []


def test_from_config_is_typed_with_the_stack_files_keys():
    """GpuClusterArgs.from_config takes a StackConfig (a TypedDict): its keys are the spec's top-level keys and the
    provider keys it reads, so a type checker names a misspelt key; the package ships py.typed (PEP 561)."""
    from gpufleet.base.spec import StackSpec
    from gpufleet.components.gpu_cluster import PROVIDER_CONFIG_KEYS, GpuClusterArgs, StackConfig

    annotation = inspect.signature(GpuClusterArgs.from_config).parameters["config"].annotation
    assert annotation == "Union[StackConfig, Mapping[str, Any]]"
    assert set(StackConfig.__annotations__) == {f.alias or n for n, f in StackSpec.model_fields.items()} | set(
        PROVIDER_CONFIG_KEYS)
    assert StackConfig.__total__ is False
    assert (ROOT / "gpufleet" / "py.typed").is_file()


def test_gpu_cluster_is_buildable_from_a_spec_or_a_plain_dict():
    from gpufleet.components import GpuClusterArgs, GpuClusterConfigError
    from gpufleet.base.spec import SpecError

    assert callable(GpuClusterArgs.from_config)
    assert issubclass(GpuClusterConfigError, SpecError) and issubclass(GpuClusterConfigError, pulumi.RunError)
    assert [f.name for f in dataclasses.fields(GpuClusterArgs)] == [
        "spec", "ssh_private_key", "etcd_s3_access_key", "etcd_s3_secret_key", "registry_password", "kubeconfig",
    ]


def test_a_platforms_sdk_loads_only_when_its_components_are_used():
    import subprocess

    code = (
        "import sys, gpufleet.components as c, gpufleet.components.eks as e, gpufleet.components.gke as g;"
        "print('pulumi_aws' in sys.modules, 'pulumi_gcp' in sys.modules);"
        "e.EksNodeGroup; print('pulumi_aws' in sys.modules, 'pulumi_gcp' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[:2] == ["False False", "True False"]


@pytest.mark.parametrize("package", PACKAGES)
def test_every_args_field_is_in_its_table_in_docs(package):
    """docs/components.md lists each Args class's fields under `<Component>Args`: the table follows the code."""
    for name, obj in public(package).items():
        args_cls = getattr(sys.modules[getattr(obj, "__module__", "")], f"{name}Args", None) if inspect.isclass(obj) else None
        if args_cls is None or not dataclasses.is_dataclass(args_cls):
            continue
        match = re.search(rf"`{name}Args`.*?\n\n(\|.*?)(?:\n\n|\Z)", DOC, re.S)
        assert match, f"docs/components.md has no `{name}Args` table"
        documented = set(re.findall(r"^\| `(\w+)` \|", match.group(1), re.M))
        assert documented == {f.name for f in dataclasses.fields(args_cls)}, f"{name}Args"
