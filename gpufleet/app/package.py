"""gpufleet as a Pulumi component package: `GpuCluster` for TypeScript, Go, YAML, C# and Java programs.

`pulumi package add <checkout>/package` starts this module through `package/__main__.py` (the
`PulumiPlugin.yaml` there names the Python runtime and the checkout's `.venv`). The provider is the Python
SDK's component provider (`pulumi.provider.experimental`): it derives the package schema from the type
annotations below and constructs the component when another language's program declares one.

The inputs are the stack file's `gpufleet:` keys (`cluster`, `nodePools`, `gpuOperator`, `amdGpuOperator`, `workloads`,
`storage`, `addons`, `observability`, `modelCaches`, `images`, `registry`) with the same names and nesting, plus `sshPrivateKey` and
`kubeconfig` (secrets). Their types are generated from the
spec models in `gpufleet.base.spec`, so the schema cannot drift from the stack-file format. They are plain values
(`plain: true` in the schema): the spec decides which resources exist, so it must be known when the component
is constructed; validation is the stack file's (every problem at once, with its key path).

Only GpuCluster is packaged. The per-platform pool components take a ClusterAccess (a Kubernetes provider
object and Outputs) and catalog facts, which a schema cannot carry across languages; a pool is a
`nodePools` entry of GpuCluster instead.
"""

# No `from __future__ import annotations`: the SDK's analyzer reads these annotations at runtime.

import json
import sys
import types
import typing
from importlib import metadata
from typing import Any, Literal, Optional, Union, get_args, get_origin

if sys.version_info >= (3, 11):
    from typing import NotRequired, Required, TypedDict
else:  # pragma: no cover - Python 3.10: the SDK's analyzer accepts typing_extensions' markers as well
    from typing_extensions import NotRequired, Required, TypedDict

import pulumi
from pulumi.provider.experimental.component import ComponentProvider
from pydantic import BaseModel

from gpufleet.components import gpu_cluster
from gpufleet.base.spec import NAMESPACE, StackSpec
from gpufleet.base.spec.cluster import ClusterSpec
from gpufleet.base.spec.features.amd_operator import AmdGpuOperatorSpec
from gpufleet.base.spec.features.operator import GpuOperatorSpec
from gpufleet.base.spec.pools import NodePoolSpec
from gpufleet.base.spec.stack import StorageSpec, WorkloadsSpec
from gpufleet.base.spec.features.addons import AddonsSpec
from gpufleet.base.spec.features.observability import ObservabilitySpec
from gpufleet.base.spec.features.images import ImagesSpec
from gpufleet.base.spec.features.registry import RegistrySpec
from gpufleet.base.spec.features.serving import ServingSpec
from gpufleet.base.spec.features.dra import DraSpec
from gpufleet.base.spec.features.gitops import GitopsSpec
from gpufleet.base.spec.features.cold_start import ModelCacheSpec

PACKAGE = "gpufleet"
TYPE_TOKEN = f"{PACKAGE}:index:GpuCluster"

# Spec model -> the TypedDict the analyzer turns into a schema type (same name, same fields).
_GENERATED: dict[type, type] = {}


def _schema_type(annotation: Any) -> Any:
    """The analyzer's view of a spec field's type: scalars, lists, string-keyed maps and nested models as they
    are; Literal as its value type (the allowed values are in the description); anything else Any."""
    origin, args = get_origin(annotation), get_args(annotation)
    if annotation in (str, int, float, bool) or annotation is Any:
        return annotation
    if origin is typing.Annotated:
        return _schema_type(args[0])
    if origin is Literal:
        kinds = {type(a) for a in args}
        return kinds.pop() if len(kinds) == 1 and next(iter(kinds)) in (str, int, float, bool) else Any
    if origin in (Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        return _schema_type(rest[0]) if len(rest) == 1 else Any
    if origin in (list, tuple, typing.Sequence) and args:
        return list[_schema_type(args[0])]
    if origin is dict and args and args[0] is str:
        return dict[str, _schema_type(args[1])]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _typed_dict(annotation)
    return Any


def _typed_dict(model: type[BaseModel]) -> type:
    """A TypedDict mirroring a spec model: the model's field names (the schema camel-cases them back to the
    stack file's keys), required where the model has no default."""
    if model in _GENERATED:
        return _GENERATED[model]
    clash = [m for m in _GENERATED if m.__name__ == model.__name__]
    if clash:
        raise TypeError(f"two spec models named {model.__name__} ({clash[0].__module__}, {model.__module__}): the package schema has one namespace")
    fields = {}
    for name, field in model.model_fields.items():
        typ = _schema_type(field.annotation)
        fields[name] = Required[typ] if field.is_required() else NotRequired[typ]
    generated = TypedDict(model.__name__, fields, total=False)  # type: ignore[operator]
    generated.__module__ = __name__
    generated.__doc__ = (model.__doc__ or "").strip() or None
    _GENERATED[model] = generated
    return generated


_Cluster = _typed_dict(ClusterSpec)
_NodePool = _typed_dict(NodePoolSpec)
_GpuOperator = _typed_dict(GpuOperatorSpec)
_AmdGpuOperator = _typed_dict(AmdGpuOperatorSpec)
_Workloads = _typed_dict(WorkloadsSpec)
_Storage = _typed_dict(StorageSpec)
_Addons = _typed_dict(AddonsSpec)
_Observability = _typed_dict(ObservabilitySpec)
_Images = _typed_dict(ImagesSpec)
_Registry = _typed_dict(RegistrySpec)
_Serving = _typed_dict(ServingSpec)
_Dra = _typed_dict(DraSpec)
_ModelCache = _typed_dict(ModelCacheSpec)
_Gitops = _typed_dict(GitopsSpec)


class GpuClusterArgs(TypedDict, total=False):
    """A GPU cluster: the keys of a gpufleet stack file's `gpufleet:` config, as values."""

    cluster: Required[_Cluster]  # type: ignore[valid-type]
    """gpufleet:cluster: the platform (eks | gke | aks | k3s | existing), name, Kubernetes version and the platform block."""
    node_pools: list[_NodePool]  # type: ignore[valid-type]
    """gpufleet:nodePools: the GPU node pools; default: none."""
    gpu_operator: _GpuOperator  # type: ignore[valid-type]
    """gpufleet:gpuOperator: NVIDIA GPU Operator release and driver; default: the pinned release."""
    amd_gpu_operator: _AmdGpuOperator  # type: ignore[valid-type]
    """gpufleet:amdGpuOperator: AMD GPU Operator release and driver (k3s AMD pools); default: the pinned release,
    inbox driver."""
    workloads: _Workloads  # type: ignore[valid-type]
    """gpufleet:workloads: what the cluster must run (CUDA versions the driver must support); default: none."""
    storage: _Storage  # type: ignore[valid-type]
    """gpufleet:storage: k3s CSI storage (local-path, NFS, a checkpoint claim); default: local-path only."""
    addons: _Addons  # type: ignore[valid-type]
    """gpufleet:addons: the workload layer (Kueue, JobSet, trainer, Volcano, KEDA, priorities); default: none."""
    observability: _Observability  # type: ignore[valid-type]
    """gpufleet:observability: metrics pipeline, GPU alerts, dashboards, node health; default: managed on GKE, node health on."""
    dra: _Dra  # type: ignore[valid-type]
    """gpufleet:dra: ResourceClaimTemplates and ComputeDomains of the DRA pools (nodePools[*].allocation: dra); default:
    claim templates in `default`, no ComputeDomains."""
    model_caches: list[_ModelCache]  # type: ignore[valid-type]
    """gpufleet:modelCaches: shared read-only model caches on the stack's ReadWriteMany storage, each filled once by a
    prefetch Job; default: none."""
    images: _Images  # type: ignore[valid-type]
    """gpufleet:images: pinDigests writes the images gpufleet sets in chart values by digest; default: off, by tag."""
    registry: _Registry  # type: ignore[valid-type]
    """gpufleet:registry: a mirror every image is pulled from (docs/air-gapped.md); default: the public registries."""
    serving: _Serving  # type: ignore[valid-type]
    """gpufleet:serving: LeaderWorkerSet model servers behind a Gateway with the Inference Extension, scaled by KEDA on
    their own metrics (docs/inference.md); default: off."""
    gitops: _Gitops  # type: ignore[valid-type]
    """gpufleet:gitops: who applies the in-cluster layer teams own, pulumi or a GitOps engine (argocd, flux) from `gpufleet
    export` (docs/gitops.md); default: pulumi."""
    ssh_private_key: pulumi.Input[str]
    """k3s: the SSH private key for every host (pass a secret); eks and gke need none."""
    kubeconfig: pulumi.Input[str]
    """existing: the kubeconfig of the cluster gpufleet installs onto (pass a secret); other platforms need none."""


class GpuCluster(gpu_cluster.GpuCluster):
    """A whole GPU Kubernetes cluster (EKS, GKE, AKS, k3s, or an existing cluster): control plane, GPU node pools that scale to zero, the
    NVIDIA GPU Operator, sharing, RDMA, storage and the workload layer, from a gpufleet stack spec."""

    kubeconfig: pulumi.Output[str]
    """Kubeconfig of the cluster (a secret)."""
    cluster_name: pulumi.Output[str]
    """The cluster's name: the resource's name (it prefixes every child and names the cloud cluster)."""
    platform: pulumi.Output[str]
    """eks | gke | aks | k3s | existing."""
    kubernetes_version: pulumi.Output[str]
    """The Kubernetes minor version the cluster runs."""
    node_pool_names: pulumi.Output[list[str]]
    """The GPU pools, by name, in the order given."""

    def __init__(self, name: str, args: GpuClusterArgs, opts: Optional[pulumi.ResourceOptions] = None):
        values = dict(args)
        key = values.pop("ssh_private_key", None)
        kubeconfig = values.pop("kubeconfig", None)
        built = gpu_cluster.GpuClusterArgs.from_config(stack_config(values), ssh_private_key=key, kubeconfig=kubeconfig)
        spec = built.spec
        if spec.cluster.name and spec.cluster.name != name:
            # The component's name prefixes every child and names the cloud cluster (as the stack's name does
            # for a stack file): one name, given once.
            raise ValueError(
                f"{TYPE_TOKEN} '{name}': cluster.name '{spec.cluster.name}' differs from the resource name; "
                "leave cluster.name out (the resource name is the cluster's name) or make them equal"
            )
        super().__init__(name, built, opts)
        self.kubeconfig = pulumi.Output.secret(self.access.kubeconfig)
        self.cluster_name = pulumi.Output.from_input(name)
        self.platform = pulumi.Output.from_input(spec.cluster.platform)
        self.kubernetes_version = pulumi.Output.from_input(spec.cluster.kubernetes_version)
        self.node_pool_names = pulumi.Output.from_input([p.name for p in spec.node_pools])


def stack_config(values: dict) -> dict:
    """The component's inputs (Python field names, as the provider maps them) in the stack file's shape
    (`nodePools`, `kubernetesVersion`, ...), so a problem is reported at the key path the user wrote. Raises
    ValueError naming the paths that hold outputs of other resources: the spec must be known up front."""
    unknown: list[str] = []
    out = {}
    for name, value in values.items():
        field = StackSpec.model_fields[name]
        key = field.alias or name
        out[key] = _aliased(field.annotation, value, f"{NAMESPACE}:{key}", unknown)
    if unknown:
        raise ValueError(
            f"{TYPE_TOKEN} needs plain values, not outputs of other resources, at {', '.join(unknown)}: "
            "the spec decides which resources exist, so it must be known when the component is declared"
        )
    return out


def _aliased(annotation: Any, value: Any, path: str, unknown: list[str]) -> Any:
    if isinstance(value, pulumi.Output) or hasattr(value, "__await__"):
        unknown.append(path)
        return None
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is typing.Annotated:
        return _aliased(args[0], value, path, unknown)
    if origin in (Union, types.UnionType):
        models = [a for a in args if isinstance(a, type) and issubclass(a, BaseModel)]
        return _aliased(models[0], value, path, unknown) if len(models) == 1 else _aliased(None, value, path, unknown)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel) and isinstance(value, dict):
        out = {}
        for name, item in value.items():
            field = annotation.model_fields.get(name)
            key = (field.alias or name) if field else name
            out[key] = _aliased(field.annotation if field else None, item, f"{path}.{key}", unknown)
        return out
    if isinstance(value, list):
        inner = args[0] if origin in (list, tuple) and args else None
        return [_aliased(inner, item, f"{path}[{i}]", unknown) for i, item in enumerate(value)]
    if isinstance(value, dict):
        inner = args[1] if origin is dict and len(args) == 2 else None
        return {k: _aliased(inner, v, f"{path}.{k}", unknown) for k, v in value.items()}
    return value


class GpufleetProvider(ComponentProvider):
    """The SDK's component provider for GpuCluster, with each generated type's field descriptions filled in
    from the spec models (the analyzer reads docstrings from source, which generated types have none of)."""

    def __init__(self, version: Optional[str] = None):
        super().__init__([GpuCluster], PACKAGE, version=version or package_version())
        schema = json.loads(self.schema or "{}")
        for model, generated in _GENERATED.items():
            spec_type = schema.get("types", {}).get(f"{PACKAGE}:index:{generated.__name__}")
            if spec_type is None:
                continue
            for name, field in model.model_fields.items():
                prop = spec_type.get("properties", {}).get(field.alias or name)
                if prop is None:
                    continue
                text = prop.get("description") or field.description or ""
                allowed = _allowed(field.annotation)
                if allowed:
                    text = f"{text} Allowed: {' | '.join(allowed)}.".strip()
                if text:
                    prop["description"] = text
        self.schema = json.dumps(schema)


def _allowed(annotation: Any) -> list[str]:
    """The values a Literal field (or a list or Optional of one) allows; [] for any other field."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Literal:
        return [str(a) for a in args]
    if origin in (Union, types.UnionType, list, typing.Annotated):
        return [v for a in args if a is not type(None) for v in _allowed(a)]
    return []


def package_version() -> str:
    try:
        return metadata.version("gpufleet")
    except metadata.PackageNotFoundError:  # pragma: no cover - a source checkout without an install
        return "0.0.0"


def main(args: Optional[list[str]] = None) -> None:
    """Serve the provider over gRPC, as the Pulumi CLI starts a plugin (`python <plugin dir> <engine> ...`)."""
    from pulumi.provider import main as serve

    serve(GpufleetProvider(), sys.argv[1:] if args is None else args)
