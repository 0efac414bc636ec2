"""Defensive readers over plain resource inputs, shared by the rules.

Rules see inputs as pulumi_policy hands them: camelCase keys, numbers as floats, mappings and lists
wrapped in proxies (`Mapping` / `Sequence`, not dict / list) that raise `UnknownValueError` when a
preview-time unknown is read. These helpers never raise on a missing key or an unexpected type; an
unknown value still raises, so the SDK reports "can't be known during preview" for that policy.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional

from pulumi_policy import PolicyConfigSchema
from pulumi_policy.proxy import UnknownValueError

from gpufleet.base import labels, platforms
from gpufleet.base.catalog import aws
from gpufleet.base.platforms.contract.policy import GpuPoolType, GpuShape, Inline
from gpufleet.base.versions import chart_name_of

# Pulumi type tokens the pack judges.
EKS_CLUSTER = "aws:eks/cluster:Cluster"
EKS_NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
EC2_LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
EC2_PLACEMENT_GROUP = "aws:ec2/placementGroup:PlacementGroup"
EC2_SECURITY_GROUP = "aws:ec2/securityGroup:SecurityGroup"
EC2_SECURITY_GROUP_RULE = "aws:ec2/securityGroupRule:SecurityGroupRule"
VPC_INGRESS_RULE = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
GCE_FIREWALL = "gcp:compute/firewall:Firewall"
ASG = "aws:autoscaling/group:Group"
GKE_CLUSTER = "gcp:container/cluster:Cluster"
GKE_NODE_POOL = "gcp:container/nodePool:NodePool"
# AKS on pulumi-azure-native (issue 53, what gpufleet registers): the AKS REST API's ManagedCluster and AgentPool
# properties; and on the classic pulumi-azure, which users' own programs still run: terraform-provider-azurerm's names.
# The rules read either through one adapter per type (AKS_CLUSTERS below; pools: gpufleet/base/platforms/aks/policy.py).
AKS_CLUSTER = "azure-native:containerservice:ManagedCluster"
AKS_NODE_POOL = "azure-native:containerservice:AgentPool"
AKS_CLASSIC_CLUSTER = "azure:containerservice/kubernetesCluster:KubernetesCluster"
AKS_CLASSIC_NODE_POOL = "azure:containerservice/kubernetesClusterNodePool:KubernetesClusterNodePool"
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
CONFIG_MAP = "kubernetes:core/v1:ConfigMap"
REMOTE_COMMAND = "command:remote:Command"

GPU_OPERATOR_CHART = "gpu-operator"
AUTOSCALER_CHARTS = ("cluster-autoscaler",)
INTERRUPTION_CHARTS = ("aws-node-termination-handler", "karpenter")

# Declarations gpufleet writes on a Kubernetes object (the GPU Operator's namespace) so the pack
# judges what the stack runs without policy config: comma-separated CUDA versions, and the driver
# version preinstalled hosts run.
CUDA_VERSIONS_ANNOTATION = labels.CUDA_VERSIONS_ANNOTATION
PREINSTALLED_DRIVER_ANNOTATION = labels.PREINSTALLED_DRIVER_ANNOTATION


def known(read, default: Any = None) -> Any:
    """read(), or default when it touches a preview-time unknown. Only for links between resources in a
    stack policy, where one unknown reference must not stop the policy judging everything else."""
    try:
        return read()
    except UnknownValueError:
        return default


_KINDS: dict[type, int] = {}  # type -> _MAP | _SEQ | 0: the abc isinstance checks, once per type
_MAP, _SEQ = 1, 2


def _kind(value: Any) -> int:
    t = type(value)
    kind = _KINDS.get(t)
    if kind is None:
        kind = _KINDS[t] = _MAP if isinstance(value, Mapping) else _SEQ if isinstance(value, Sequence) and not isinstance(value, str) else 0
    return kind


def get(value: Any, *path: Any, default: Any = None) -> Any:
    """value[path[0]][path[1]]..., or default when a step is missing or of the wrong kind."""
    for step in path:
        kind = _KINDS.get(type(value))
        if kind is None:
            kind = _kind(value)
        if kind == _MAP and type(step) is str:
            try:  # one lookup, not `in` then `[]`; an unknown value raises either way
                value = value[step]
            except KeyError:
                return default
        elif isinstance(step, int):
            if kind == _SEQ and -len(value) <= step < len(value):
                value = value[step]
            else:
                return default
        elif kind == _MAP:
            try:
                value = value[step]
            except KeyError:
                return default
        else:
            return default
    return default if value is None else value


_MEMO: dict[tuple[int, str], tuple] = {}  # (id(props), what) -> (props, value), for props that cannot remember


def memo(props: Any, what: str, compute: Callable[[Any], Any]) -> Any:
    """compute(props), once per resource however many rules (and runs: Analyze, then AnalyzeStack) ask.
    The servicer hands every rule the same props object for a resource, and its props keep the facts
    themselves (`remember`, policies/values.py), so they go when the resource does. Other props (upstream's
    proxies, in tests) are keyed by identity here (the entry holds the object, so the id cannot be reused
    while cached). A preview-time unknown raises every time, as compute() would. Callers must not mutate
    what it returns."""
    remember = getattr(props, "remember", None)
    if remember is not None:
        return remember(what, compute)
    key = (id(props), what)
    hit = _MEMO.get(key)
    if hit is None or hit[0] is not props:
        if len(_MEMO) > 100_000:
            _MEMO.clear()
        hit = _MEMO[key] = (props, compute(props))
    return hit[1]


def items(value: Any) -> list:
    """A list input as a Python list ([] when absent or not a list), in one pass when the servicer's list can."""
    if (_KINDS.get(type(value)) or _kind(value)) == _SEQ:
        fast = getattr(value, "elements", None)
        return fast() if fast is not None else [value[i] for i in range(len(value))]
    return []


def column(value: Any, key: str) -> list:
    """[get(element, key) for element in items(value)], in one pass when the servicer's list can (`column`)."""
    fast = getattr(value, "column", None)
    if fast is not None and (_KINDS.get(type(value)) or _kind(value)) == _SEQ:
        return fast(key)
    return [get(element, key) for element in items(value)]


def mapping(value: Any) -> dict:
    """A map input as a plain dict of its top level ({} when absent or not a map)."""
    if (_KINDS.get(type(value)) or _kind(value)) == _MAP:
        return {k: value[k] for k in value}
    return {}


def number(value: Any) -> Optional[float]:
    """A number input (floats on the wire), or None when absent or not a number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def text(value: Any) -> Optional[str]:
    return value if isinstance(value, str) else None


def truthy(value: Any) -> bool:
    """true / "true" (EC2 block devices spell booleans as strings)."""
    return value is True or (isinstance(value, str) and value.lower() == "true")


def minor(version: Any) -> Optional[str]:
    """'1.33', '1.33.5-gke.100', 'v1.30.2+k3s2' -> '1.33' / '1.30'; None when not a version."""
    if not isinstance(version, str):
        return None
    parts = version.lstrip("v").split(".")
    if len(parts) >= 2 and parts[0].isdigit() and parts[1].split("-")[0].split("+")[0].isdigit():
        return f"{parts[0]}.{parts[1].split('-')[0].split('+')[0]}"
    return None


# --- exemptions ----------------------------------------------------------------------------------

# Where a resource carries labels/tags/annotations a user can put the exemption on.
_CARRIERS = (
    ("tags",),
    ("labels",),
    ("resourceLabels",),
    ("nodeConfig", "labels"),
    ("nodeConfig", "resourceLabels"),
    ("nodeLabels",),
    ("metadata", "labels"),
    ("metadata", "annotations"),
)


def exemption(policy: str, name: str, urn: str, props: Any, config: Optional[Mapping]) -> Optional[str]:
    """The reason a resource is exempt from `policy`, or None.

    Two visible ways: the resource carries `gpufleet.io/exempt-<policy>: "<reason>"` as a tag, label or
    annotation; or the policy's config lists it: `exemptions: {"<resource name or URN>": "<reason>"}`.
    An empty reason does not exempt.
    """
    found = _exemption_labels(props)
    reason = found.get(labels.exempt_key(policy)) if found else None
    if reason:
        return reason
    listed = get(config, "exemptions")
    if listed is None:  # most policies list none: no copy to make
        return None
    listed = mapping(listed)
    for ref in (urn, name):
        reason = listed.get(ref)
        if isinstance(reason, str) and reason.strip():
            return reason.strip()
    return None


def _exemption_labels(props: Any) -> dict[str, str]:
    """Every non-empty `gpufleet.io/exempt-*` tag, label or annotation on the resource (the first carrier
    in _CARRIERS order wins), read once per resource however many rules ask."""
    return memo(props, "exemptions", _find_exemption_labels)


_EXEMPT_PREFIX = labels.exempt_key("")


def _find_exemption_labels(props: Any) -> dict[str, str]:
    # The servicer's props can tell cheaply that no carrier holds such a key (policies/values.py).
    may_hold = getattr(props, "may_hold_key", None)
    if may_hold is not None and not may_hold(_EXEMPT_PREFIX, _CARRIERS):
        return {}
    found: dict[str, str] = {}
    prefix = _EXEMPT_PREFIX
    for path in _CARRIERS:
        carrier = get(props, *path)
        if _kind(carrier) != _MAP:
            continue
        # By name: a map's order does not survive the wire (a Struct is a hash map), and the first unknown reason
        # read is the one reported, so plain and Struct reads must meet the keys in one order.
        for key in sorted(k for k in carrier if isinstance(k, str)):
            if key.startswith(prefix) and key not in found:
                reason = carrier[key]
                if isinstance(reason, str) and reason.strip():
                    found[key] = reason.strip()
    return found


def config_of(args: Any) -> Mapping:
    return args.get_config() or {}


# --- policy wiring: what every rule's POLICY is built from ------------------------------------------

def exemptions_property(description: Optional[str] = None) -> dict:
    """The JSON schema of policy config `exemptions`: resource name or URN -> reason (see exemption())."""
    described = {"description": description} if description else {}
    return {"type": "object", **described, "additionalProperties": {"type": "string", "minLength": 1}}


def exemptions_schema(description: Optional[str] = None) -> PolicyConfigSchema:
    """The config schema of a rule whose only setting is `exemptions`."""
    return PolicyConfigSchema(properties={"exemptions": exemptions_property(description)})


def stack_validator(check: Callable[[list, Mapping], Iterable[tuple[str, str]]]) -> Callable:
    """A StackValidationPolicy `validate` that reports every (urn, message) of check(resources, config)."""

    def validate(args, report_violation) -> None:
        for urn, message in check(args.resources, config_of(args)):
            report_violation(message, urn)

    return validate


def resource_validator(policy: str, check: Callable[[str, Any], Iterable[str]], types: Optional[Iterable[str]] = None) -> Callable:
    """A ResourceValidationPolicy `validate` that reports check(resource_type, props) for every resource not
    exempt from `policy`; with `types`, other resource types are skipped before anything is read. A GPU pool declared
    inline in another resource whose map has the shape of one of `types` (its pool type's `shaped_as`) is judged too,
    as check(shaped_as, its map), its messages naming it, on the enclosing resource's URN."""
    judged = None if types is None else frozenset(types)

    def validate(args, report_violation) -> None:
        if judged is None or args.resource_type in judged:
            if not exemption(policy, args.name, args.urn, args.props, config_of(args)):
                for message in check(args.resource_type, args.props):
                    report_violation(message, args.urn)
        if judged is None:
            return
        entries = inline_pool_types().get(args.resource_type)
        if entries and any(kind.shaped_as in judged for _, kind in entries):  # else its props are not read for this
            _judge_inline(args, report_violation)

    def _judge_inline(args, report_violation) -> None:
        for pool in inline_pools(args):
            if pool.kind.shaped_as in judged and not pool_exemption(policy, pool, config_of(args)):
                for message in check(pool.kind.shaped_as, pool.props):
                    report_violation(f"{pool.kind.kind_name} '{pool.name}': {message}", args.urn)

    if judged is None:
        return validate

    def judged_types() -> frozenset:
        """`types`, and the enclosing types of inline pools shaped like one of them (asked again on every Configure)."""
        return judged | frozenset(token for token, entries in inline_pool_types().items()
                                  if any(kind.shaped_as in judged for _, kind in entries))

    return Judging(validate, judged_types)  # the servicer skips other types without calling it (same verdicts)


class Judging:
    """A `validate` that judges only some resource types: `judged_types` (asked again on every Configure, so a platform
    registered later counts) lets the servicer skip the others without calling it, with the same verdicts."""

    def __init__(self, validate: Callable, types: Callable[[], frozenset]):
        self.validate = validate
        self.types = types

    def __call__(self, args, report_violation) -> None:
        self.validate(args, report_violation)

    @property
    def judged_types(self) -> frozenset:
        return self.types()


def pool_validator(policy: str, check: Callable[["Pool"], Iterable[str]]) -> Callable:
    """A ResourceValidationPolicy `validate` that reports check(pool) for every GPU pool not exempt from
    `policy` (other resources are not judged): the resource itself when it is a pool, and each GPU pool it declares
    inline, whose messages name it (the finding is on the enclosing resource, which may declare several)."""

    def validate(args, report_violation) -> None:
        _, own, inline, _ = _pool_views()  # the registry asked once per call, as before inline pools
        found = own.get(args.resource_type)
        if found is not None:
            pool = _own_pool(args, *found)
            if pool is not None and not exemption(policy, args.name, args.urn, args.props, config_of(args)):
                for message in check(pool):
                    report_violation(message, args.urn)
        if args.resource_type not in inline:
            return
        for pool in inline_pools(args):
            if not pool_exemption(policy, pool, config_of(args)):
                for message in check(pool):
                    report_violation(f"{pool.kind.kind_name} '{pool.name}': {message}", args.urn)

    return Judging(validate, pool_type_tokens)  # gpu_pools_of() is [] for any other type


# --- GPU pools: every registered platform's declared pool types (gpufleet/base/platforms/contract/policy.py) ------


class PropsInputs:
    """A resource's props read defensively with get() and friends: the `Inputs` a platform's pool type reads
    (contract/policy.py). A preview-time unknown still raises."""

    __slots__ = ("props",)

    def __init__(self, props: Any):
        self.props = props

    def get(self, *path: Any, default: Any = None) -> Any:
        return get(self.props, *path, default=default)

    def text(self, *path: Any) -> Optional[str]:
        return text(get(self.props, *path))

    def number(self, *path: Any) -> Optional[float]:
        return number(get(self.props, *path))

    def truthy(self, *path: Any) -> bool:
        return truthy(get(self.props, *path))

    def items(self, *path: Any) -> list:
        return items(get(self.props, *path))

    def mapping(self, *path: Any) -> dict:
        return mapping(get(self.props, *path))

    def each(self, *path: Any) -> list["PropsInputs"]:
        return [PropsInputs(e) for e in items(get(self.props, *path)) if isinstance(e, Mapping)]


_POOL_TYPES: list = [(), {}, {}, frozenset()]  # [the registered platforms it was worked out for, the views], one entry


def _pool_views() -> list:
    """[platforms, pool_types(), inline_pool_types(), pool_type_tokens()], worked out again when a platform is
    registered or removed."""
    registered = tuple(platforms.get(name) for name in platforms.names())
    known = _POOL_TYPES[0]
    if len(known) != len(registered) or any(a is not b for a, b in zip(known, registered)):
        declared = [(traits.name, t) for traits in registered for t in traits.policy.pool_types]
        own = {t.token: (name, t) for name, t in declared if t.inline is None}
        inline: dict[str, tuple[tuple[str, GpuPoolType], ...]] = {}
        for name, t in declared:
            if t.inline is not None:
                inline[t.token] = inline.get(t.token, ()) + ((name, t),)
        _POOL_TYPES[:] = [registered, own, inline, frozenset(own) | frozenset(inline)]
    return _POOL_TYPES


def pool_types() -> dict[str, tuple[str, GpuPoolType]]:
    """Type token -> (platform name, pool type) for every GPU pool type a registered platform declares
    (`PolicyTraits.pool_types`) whose resources are pools of their own."""
    return _pool_views()[1]


def inline_pool_types() -> dict[str, tuple[tuple[str, GpuPoolType], ...]]:
    """Type token of an enclosing resource -> ((platform name, pool type), ...) of the pools declared inside it
    (pool types with `inline`, contract/policy.py), in the platforms' declaration order."""
    return _pool_views()[2]


def every_pool_type() -> list[tuple[str, GpuPoolType]]:
    """(platform name, pool type) of every pool type, its own resource or inline."""
    return list(pool_types().values()) + [entry for entries in inline_pool_types().values() for entry in entries]


def pool_type_tokens() -> frozenset:
    """The resource types gpu_pools_of() can return a pool for: pools, and resources declaring pools inline."""
    return _pool_views()[3]


class Pool:
    """A GPU node pool as the rules see it, whatever the resource type: what its platform's pool type reads. A pool
    declared inline in another resource (`kind.inline`) has its own inputs (`props`: the nested map) and name
    (`<resource>/agentPoolProfiles[1] (gpu)`), and the enclosing resource's URN, where its findings are reported."""

    def __init__(self, resource: Any, platform: str, kind: GpuPoolType, shape: Optional[GpuShape], instance_types: list[str],
                 props: Any = None, name: Optional[str] = None):
        self.resource = resource
        self.platform = platform  # the platform's name, for catalog lookups keyed by it (never compared)
        self.kind = kind  # how the pack reads this resource type (its platform's declaration)
        self.shape = shape
        self.instance_types = instance_types
        self.inline = name is not None  # declared inside `resource`, not the resource itself
        self._props = resource.props if props is None else props
        self._name = name
        self.inputs = PropsInputs(self._props)

    @property
    def props(self) -> Any:
        return self._props

    @property
    def urn(self) -> str:
        return self.resource.urn

    @property
    def name(self) -> str:
        return self.resource.name if self._name is None else self._name

    def labels(self) -> dict:
        """The labels the pool puts on its nodes."""
        return self.kind.labels(self.inputs)

    def taints(self) -> list[tuple[str, str, str]]:
        """(key, value, effect) of the pool's taints, effects in Kubernetes spelling; read once per resource."""
        return list(memo(self.props, "taints", lambda props: tuple(self.kind.taints(PropsInputs(props)))))

    def spot(self) -> bool:
        return self.kind.spot(self.inputs)


def gpu_pool(resource: Any) -> Optional[Pool]:
    """The resource as a GPU pool, or None when it is not one. The servicer hands every rule the same
    props object for a resource, so its shape is computed once (keyed by identity, holding the object)."""
    found = pool_types().get(resource.resource_type)
    if found is None:
        return None  # before reading props: the servicer converts them only when a rule reads them
    return _own_pool(resource, *found)


def _own_pool(resource: Any, platform: str, kind: GpuPoolType) -> Optional[Pool]:
    """The resource as a GPU pool of `kind` (its type's pool type), or None when it is not a GPU pool."""
    shape = memo(resource.props, "pool-" + kind.token, lambda props: kind.gpu_pool(PropsInputs(props)))
    return None if shape is None else Pool(resource, platform, kind, *shape)


def gpu_pools_of(resource: Any) -> list[Pool]:
    """Every GPU pool the resource is or declares inline: itself when it is a pool (gpu_pool), then each GPU pool
    nested in its inputs, in the platforms' declaration order and the list's order."""
    pool = gpu_pool(resource)
    own = [pool] if pool is not None else []
    if resource.resource_type not in inline_pool_types():
        return own
    return own + inline_pools(resource)


def inline_pools(resource: Any) -> list[Pool]:
    """The GPU pools declared inside the resource (none when its type declares none), found once per resource."""
    declared = inline_pool_types().get(resource.resource_type)
    if not declared:
        return []
    found = memo(resource.props, "inline-pools", lambda props: _inline_pools(props, declared))
    return [Pool(resource, platform, kind, shape, types, props, _inline_name(resource.name, kind.inline, index, props))
            for platform, kind, index, props, shape, types in found]


def _inline_pools(props: Any, declared: tuple[tuple[str, GpuPoolType], ...]) -> tuple:
    out = []
    for platform, kind in declared:
        inline: Inline = kind.inline  # type: ignore[assignment]
        if not kind.declares_pool(PropsInputs(props)):
            continue
        if not inline.path:
            nested = [(None, props)]
        elif inline.listed:
            nested = [(i, e) for i, e in enumerate(items(get(props, *inline.path))) if _kind(e) == _MAP]
        else:
            one = get(props, *inline.path)
            nested = [(None, one)] if _kind(one) == _MAP else []
        for index, pool_props in nested:
            shape = kind.gpu_pool(PropsInputs(pool_props))
            if shape is not None:
                out.append((platform, kind, index, pool_props, *shape))
    return tuple(out)


def _inline_name(resource_name: str, inline: Inline, index: Optional[int], props: Any) -> str:
    """`<resource>/<where> (<its own name>)`: `prod/agentPoolProfiles[1] (gpu)`, `prod/nodeConfig (default pool)`."""
    own = (text(get(props, inline.name_key)) if inline.name_key else None) or inline.unnamed
    return f"{resource_name}/{inline.where(index)}" + (f" ({own})" if own else "")


def pool_exemption(policy: str, pool: Pool, config: Optional[Mapping]) -> Optional[str]:
    """exemption() of a pool: a pool of its own as any resource; an inline pool by its own labels or tags, its name
    (`prod/agentPoolProfiles[1] (gpu)`) in the policy's `exemptions`, or anything that exempts its enclosing resource
    (a tag or label on it, its name or URN in `exemptions`)."""
    if not pool.inline:
        return exemption(policy, pool.name, pool.urn, pool.props, config)
    resource = pool.resource
    return (exemption(policy, pool.name, pool.urn, pool.props, config)
            or exemption(policy, resource.name, resource.urn, resource.props, config))


# --- provider resources some rules judge by type token whether or not they are GPU pools ------------------------


def eks_instance_types(props: Any) -> list[str]:
    """An EKS node group's instance types."""
    return [t for t in items(get(props, "instanceTypes")) if isinstance(t, str)]


def gke_accelerators(props: Any) -> list:
    """A GKE node pool's guest accelerators (the maps among them)."""
    return [a for a in items(get(props, "nodeConfig", "guestAccelerators")) if isinstance(a, Mapping)]


def gpu_pools(resources: Iterable[Any]) -> list[Pool]:
    """Every GPU pool of the stack; computed once per stack analysis when the servicer shares its index."""
    memo = getattr(resources, "memo", None)
    if memo is not None and "gpu_pools" in memo:
        return memo["gpu_pools"]
    pools = [p for r in of_type(resources, *pool_types(), *inline_pool_types()) for p in gpu_pools_of(r)]
    if memo is not None:
        memo["gpu_pools"] = pools
    return pools


def listed(resources: Iterable[Any]) -> list[Any]:
    """The stack's resources as a list, keeping the servicer's index when they come with one."""
    return resources if isinstance(resources, list) else list(resources)


def of_type(resources: Iterable[Any], *types: str) -> list[Any]:
    """The resources of these type tokens, from the servicer's index when it has one."""
    index = getattr(resources, "of_type", None)
    if index is not None:
        return index(*types)
    wanted = set(types)
    return [r for r in resources if r.resource_type in wanted]


def of_types_where(resources: Iterable[Any], accept: Callable[[str], bool]) -> list[Any]:
    """The resources whose type token passes accept(), in stack order. With the servicer's index only the
    stack's distinct type tokens are tested, not every resource."""
    by_type = getattr(resources, "by_type", None)
    if by_type is None:
        return [r for r in resources if accept(r.resource_type)]
    types = [t for t in by_type if accept(t)]
    return of_type(resources, *types) if types else []


def shared(resources: Iterable[Any], key: Any, compute: Callable[[], Any]) -> Any:
    """compute(), once per stack analysis when the servicer's index shares its `memo` (every stack rule gets
    the same index), else on every call. Only for facts that do not depend on a policy's config; a
    preview-time unknown raises every time, as compute() would (nothing is kept). Callers must not mutate
    what it returns."""
    memo = getattr(resources, "memo", None)
    if memo is None:
        return compute()
    if key not in memo:
        memo[key] = compute()
    return memo[key]


def helm_charts(resources: Iterable[Any]) -> list[Any]:
    return of_type(resources, HELM_RELEASE)


def chart_of(props: Any) -> str:
    """A Helm release's chart name ('nvidia/gpu-operator', OCI paths and archive URLs reduced to the name)."""
    return chart_name_of(text(get(props, "chart")) or "", text(get(props, "version")) or "")


def operator_releases(resources: Iterable[Any]) -> list[Any]:
    return [r for r in helm_charts(resources) if chart_of(r.props) == GPU_OPERATOR_CHART]


def annotations(resources: Iterable[Any], key: str) -> list[tuple[Any, str]]:
    """(resource, value) for every Kubernetes object carrying the annotation (found once per stack analysis)."""
    return shared(resources, ("annotations", key), lambda: _annotated(resources, key))


def _is_kubernetes(resource_type: str) -> bool:
    return resource_type.startswith("kubernetes:")


def _annotated(resources: Iterable[Any], key: str) -> list[tuple[Any, str]]:
    out = []
    for r in of_types_where(resources, _is_kubernetes):
        value = get(r.props, "metadata", "annotations", key)
        if isinstance(value, str) and value.strip():
            out.append((r, value.strip()))
    return out


def money(value: float) -> str:
    return f"${value:,.2f}/h"


# --- AKS clusters: one adapter per provider's type -------------------------------------------------------------


InputPath = tuple[str, ...]  # keys into a resource's inputs


@dataclass(frozen=True)
class AksClusterType:
    """Where one AKS cluster resource type keeps what the rules ask (secure-defaults, gpu-operator-version-support,
    stateful-resource-protection), as paths into its inputs; messages name the field by its path as the program spells
    it. A rule asks `AKS_CLUSTERS[resource_type]`, never the type token itself."""

    token: str
    kubernetes_version: InputPath
    private: InputPath
    """true: the API server has no public endpoint."""
    authorized_ranges: tuple[InputPath, ...]
    """Lists of CIDR blocks a public API server admits; the first one set counts (the first is named when none is)."""
    entra: InputPath
    """A map: Microsoft Entra ID integration."""
    local_accounts_disabled: InputPath
    """true: no local accounts (the cluster-admin certificate)."""
    rbac: InputPath
    """false: Kubernetes RBAC off (only an explicit false is judged; the classic provider documents "Defaults to true")."""

    @staticmethod
    def named(path: InputPath) -> str:
        return ".".join(path)

    def ranges(self, props: Any) -> tuple[str, list]:
        """(the field, its CIDR blocks) of the first authorized-ranges field the cluster sets, else (the first field, [])."""
        for path in self.authorized_ranges:
            listed = items(get(props, *path))
            if listed:
                return self.named(path), listed
        return self.named(self.authorized_ranges[0]), []


AKS_CLUSTERS: dict[str, AksClusterType] = {t.token: t for t in (
    # pulumi-azure-native ManagedCluster: the AKS REST API's properties (API 2025-09-01).
    AksClusterType(
        AKS_CLUSTER, kubernetes_version=("kubernetesVersion",), private=("apiServerAccessProfile", "enablePrivateCluster"),
        authorized_ranges=(("apiServerAccessProfile", "authorizedIPRanges"),), entra=("aadProfile",),
        local_accounts_disabled=("disableLocalAccounts",), rbac=("enableRBAC",)),
    # Classic pulumi-azure KubernetesCluster (pulumi/pulumi-azure sdk/python/pulumi_azure/containerservice/
    # kubernetes_cluster.py and _inputs.py @v6.39.0, as in the 6.40.1 wheel): private_cluster_enabled ("Defaults to
    # false"), api_server_access_profile.authorized_ip_ranges, azure_active_directory_role_based_access_control,
    # local_account_disabled, role_based_access_control_enabled ("Defaults to true"). @v5.89.3 also the top-level
    # api_server_authorized_ip_ranges, deprecated there ("renamed to authorized_ip_ranges within the
    # api_server_access_profile block") and gone in v6: read second, so pulumi-azure 5 programs are judged.
    AksClusterType(
        AKS_CLASSIC_CLUSTER, kubernetes_version=("kubernetesVersion",), private=("privateClusterEnabled",),
        authorized_ranges=(("apiServerAccessProfile", "authorizedIpRanges"), ("apiServerAuthorizedIpRanges",)),
        entra=("azureActiveDirectoryRoleBasedAccessControl",), local_accounts_disabled=("localAccountDisabled",),
        rbac=("roleBasedAccessControlEnabled",)),
)}


# --- Karpenter (NodePool / EC2NodeClass custom resources, its Helm release) -------------------------

KARPENTER_CHART = "karpenter"
CAPACITY_TYPE_KEY = "karpenter.sh/capacity-type"
INSTANCE_TYPE_KEY = "node.kubernetes.io/instance-type"
ZONE_KEY = "topology.kubernetes.io/zone"


def is_karpenter_node_pool_type(resource_type: str) -> bool:
    """A karpenter.sh NodePool's type token (any served version)."""
    return resource_type.startswith("kubernetes:karpenter.sh/") and resource_type.endswith(":NodePool")


def nodepool_requirement(props: Any, key: str) -> list[str]:
    """The values an `In` requirement of the NodePool's template gives `key` ([] when it does not constrain it)."""
    for req in items(get(props, "spec", "template", "spec", "requirements")):
        if get(req, "key") == key and get(req, "operator") == "In":
            return [v for v in items(get(req, "values")) if isinstance(v, str)]
    return []


def nodepool_is_gpu(props: Any) -> bool:
    """A NodePool for GPU nodes: GPU instance types, a GPU limit, or gpufleet's GPU label."""
    if any(aws.is_gpu_type(t) for t in nodepool_requirement(props, INSTANCE_TYPE_KEY)):
        return True
    if labels.GPU_RESOURCE in mapping(get(props, "spec", "limits")):
        return True
    return get(props, "spec", "template", "metadata", "labels", labels.GPU_NODE_LABEL) == "true"


def karpenter_node_pools(resources: Iterable[Any]) -> list[Any]:
    """GPU NodePools of the stack."""
    return [r for r in of_types_where(resources, is_karpenter_node_pool_type) if nodepool_is_gpu(r.props)]


def karpenter_releases(resources: Iterable[Any]) -> list[Any]:
    return [r for r in helm_charts(resources) if chart_of(r.props) == KARPENTER_CHART]


def nodepool_taints(props: Any) -> list[tuple[str, str, str]]:
    return [(text(get(t, "key")) or "", text(get(t, "value")) or "", text(get(t, "effect")) or "")
            for t in items(get(props, "spec", "template", "spec", "taints"))]


def nodepool_labels(props: Any) -> dict:
    return mapping(get(props, "spec", "template", "metadata", "labels"))


# A remote command that installs k3s as a server: gpufleet's script (INSTALL_K3S_EXEC='server') or a hand-written
# `k3s server` command line.
_K3S_SERVER = re.compile(r"INSTALL_K3S_EXEC=['\"]?server\b|\bk3s server\b")


def command_texts(props) -> list[str]:
    """The plain texts of a remote command: its scripts, and stdin when it is not a secret."""
    return [t for t in (text(get(props, k)) for k in ("create", "update", "stdin")) if t and t != "[secret]"]


def is_k3s_server(props) -> bool:
    return any(_K3S_SERVER.search(t) for t in command_texts(props))


def script_exemption(props, policy_name: str) -> Optional[str]:
    """A remote command has no labels: its exemption from a policy is a comment line of its script,
    `# gpufleet.io/exempt-<policy>: <reason>` (the reason, or None). The reason is on that line: blanks after the
    colon are spaces or tabs, never a line break, or a blank reason would take the script's next line as its reason."""
    line = re.compile(rf"^#[ \t]*{re.escape(labels.exempt_key(policy_name))}:[ \t]*(\S.*)$", re.MULTILINE)
    for t in command_texts(props):
        found = line.search(t)
        if found:
            return found.group(1).strip()
    return None
