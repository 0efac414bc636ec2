"""The pack's Analyzer servicer: pulumi_policy's own, converting each resource once instead of once per rule.

pulumi_policy's `_PolicyAnalyzerServicer` turns a resource's protobuf properties into Python values
(`MessageToDict`, `deserialize_properties`, `unknown_checking_proxy`) inside its loop over policies, so a
pack of ten rules converts every resource ten times; that conversion was most of the time a plan spent on
policies (bench/policy.py). This subclass converts a resource's properties at most once (the first time a
rule reads them: rules look at a few type tokens only), keeps them for the stack analysis that follows,
and hands the same read-only values to every rule; stack rules get the resources indexed by type; everything else (enforcement levels, config, messages, unknown-value
and not-applicable handling) is the upstream code path, so verdicts are identical (the policy tests and
the broken-stack corpus run through it). `serve()` starts it the way `PolicyPack(...)` starts its own.

Written against pulumi_policy 1.x (pyproject pins <2): it reads the parent's private attributes by their
mangled names, which a major release may change; tests/policy/test_servicer.py compares both servicers.
"""

from __future__ import annotations

import asyncio
import sys
import time
from concurrent import futures
from inspect import isawaitable
from typing import Any, Optional

import grpc
from pulumi.runtime.proto import analyzer_pb2 as proto
from pulumi.runtime.proto import analyzer_pb2_grpc
from pulumi_policy.deserialize import deserialize_properties
from pulumi_policy.policy import (
    EnforcementLevel,
    PolicyResource,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
    UnknownValueError,
    _NotApplicableError,
    _PolicyAnalyzerServicer,
)
from pulumi_policy.deserialize import SPECIAL_SIG_KEY
from pulumi_policy.proxy import _DictProxy, _is_unknown, _ListProxy, UnknownValueError as _Unknown

_PARENT = "_PolicyAnalyzerServicer__"


class IndexedResources(list):
    """The stack's resources, built once per AnalyzeStack and shared by every stack rule, with an index
    by type token (`of_type`) so a rule does not scan the whole stack for the few types it reads."""

    def __init__(self, resources: list[PolicyResource]):
        super().__init__(resources)
        self.by_type: dict[str, list[PolicyResource]] = {}
        for r in resources:
            self.by_type.setdefault(r.resource_type, []).append(r)
        self.memo: dict[Any, Any] = {}  # per-analysis results rules may share (e.g. the GPU pools)

    def of_type(self, *types: str) -> list[PolicyResource]:
        """The resources of these types, in stack order (as a scan of the whole list would find them)."""
        if len(types) == 1:
            return self.by_type.get(types[0], [])
        key = ("of_type", types)
        if key not in self.memo:
            wanted = set(types)
            self.memo[key] = [r for r in self if r.resource_type in wanted]
        return self.memo[key]


def _value(value) -> Any:
    """One google.protobuf.Value as json_format.MessageToDict gives it (numbers as floats)."""
    kind = value.WhichOneof("kind")
    if kind == "struct_value":
        return {k: _value(v) for k, v in value.struct_value.fields.items()}
    if kind == "list_value":
        return [_value(v) for v in value.list_value.values]
    if kind == "null_value" or kind is None:
        return None
    return getattr(value, kind)


def _wrap(value: Any, path: list) -> Any:
    if isinstance(value, dict):
        return _LazyDict(value, path)
    if isinstance(value, list):
        return _LazyList(value, path)
    return value


class _LazyDict(_DictProxy):
    """pulumi_policy's unknown-checking dict proxy, wrapping each nested value when it is first read
    instead of the whole tree up front (same errors, same paths, same types for isinstance)."""

    def __init__(self, target: dict, path: list):
        super().__init__(target, path)
        self._path = path
        self._seen: dict = {}

    def __contains__(self, key) -> bool:
        # Mapping's own __contains__ reads the value (raising on an unknown one): so does this.
        if key not in self._DictProxy__target:
            return False
        self[key]
        return True

    def __getitem__(self, key):
        if key in self._seen:
            return self._seen[key]
        value = self._DictProxy__target[key]
        if _is_unknown(value):
            raise _Unknown(value, [*self._path, str(key)])
        value = self._seen[key] = _wrap(value, [*self._path, str(key)])
        return value


class _LazyList(_ListProxy):
    def __init__(self, target: list, path: list):
        super().__init__(target, path)
        self._path = path

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        value = self._ListProxy__target[index]
        if _is_unknown(value):
            raise _Unknown(value, [*self._path, str(index)])
        return _wrap(value, [*self._path, str(index if index >= 0 else len(self) + index)])


class _StructDict(_DictProxy):
    """The unknown-checking dict proxy read straight from a protobuf Struct: a field is converted (and
    checked for an unknown value) only when a rule reads it; what rules never read is never converted."""

    def __init__(self, fields, path: list):
        super().__init__(fields, path)
        self._path = path
        self._seen: dict = {}

    def __getitem__(self, key):
        if key in self._seen:
            return self._seen[key]
        fields = self._DictProxy__target
        if not isinstance(key, str) or key not in fields:  # fields[key] would insert a default
            raise KeyError(key)
        path = [*self._path, str(key)]
        value = self._seen[key] = _from_value(fields[key], path)
        return value

    def __contains__(self, key) -> bool:
        if not isinstance(key, str) or key not in self._DictProxy__target:
            return False
        self[key]  # an unknown value raises, as Mapping's own __contains__ does
        return True


class _StructList(_ListProxy):
    def __init__(self, values, path: list):
        super().__init__(values, path)
        self._path = path
        self._seen: dict = {}

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        values = self._ListProxy__target
        if not -len(values) <= index < len(values):
            raise IndexError(index)
        own = index if index >= 0 else len(values) + index
        if own not in self._seen:
            self._seen[own] = _from_value(values[own], [*self._path, str(index)], str(own))
        return self._seen[own]


def _from_value(value, path: list, own: Optional[str] = None) -> Any:
    """A protobuf Value as the rules see it: a proxy for a struct or list, else the scalar; an unknown
    raises UnknownValueError with the path upstream reports."""
    kind = value.WhichOneof("kind")
    if kind == "struct_value":
        return _StructDict(value.struct_value.fields, path if own is None else [*path[:-1], own])
    if kind == "list_value":
        return _StructList(value.list_value.values, path if own is None else [*path[:-1], own])
    scalar = None if kind in ("null_value", None) else getattr(value, kind)
    if _is_unknown(scalar):
        raise _Unknown(scalar, path)
    return scalar


def _props(properties, raw: bytes = b"") -> Any:
    """A resource's properties as the rules read them: what pulumi_policy's own
    `unknown_checking_proxy(deserialize_properties(MessageToDict(properties)))` gives, read lazily from
    the Struct. Properties with a special value (secret, asset, archive) take upstream's eager path:
    deserializing them needs the whole tree (tests/policy/test_servicer.py compares the two)."""
    if not raw or SPECIAL_SIG_KEY.encode() in raw:
        return _LazyDict(deserialize_properties({k: _value(v) for k, v in properties.fields.items()}), [])
    return _StructDict(properties.fields, [])


_UNSET = object()


class Converted:
    """A resource's properties, converted the first time any rule reads them, then shared."""

    __slots__ = ("message", "raw", "value")

    def __init__(self, message, raw: bytes = b""):
        self.message = message
        self.raw = raw
        self.value = _UNSET

    def get(self) -> Any:
        if self.value is _UNSET:
            self.value = _props(self.message, self.raw)
            self.message = self.raw = None
        return self.value


class _LazyProps:
    """`props` as pulumi_policy's argument classes have it, but read through a Converted when given one."""

    @property
    def props(self) -> Any:
        value = self.__dict__["_props"]
        return value.get() if isinstance(value, Converted) else value

    @props.setter
    def props(self, value: Any) -> None:
        self.__dict__["_props"] = value


class LazyResourceArgs(_LazyProps, ResourceValidationArgs):
    pass


class LazyPolicyResource(_LazyProps, PolicyResource):
    pass


class _Conversions:
    """Converted properties by URN, so AnalyzeStack reuses what the Analyze calls of the same preview
    converted (the engine sends each resource to Analyze, then all of them to AnalyzeStack). Entries
    match on the serialized properties too, so a changed resource is converted again."""

    LIMIT = 100_000

    def __init__(self):
        self.by_urn: dict[str, tuple[bytes, Converted]] = {}

    def get(self, urn: str, properties) -> Converted:
        raw = properties.SerializeToString(deterministic=True)
        hit = self.by_urn.get(urn)
        if hit is not None and hit[0] == raw:
            return hit[1]
        if len(self.by_urn) >= self.LIMIT:
            self.by_urn.clear()
        converted = Converted(properties, raw)
        self.by_urn[urn] = (raw, converted)
        return converted


class FastAnalyzerServicer(_PolicyAnalyzerServicer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._conversions = _Conversions()
        self._levels: dict[type, list] = {}  # the active policies per kind, until the next Configure
        self._runtime_ready = False

    def Configure(self, request, _context):
        self._levels = {}
        self._runtime_ready = False
        return super().Configure(request, _context)

    def ConfigureStack(self, request, _context):
        self._runtime_ready = False
        return super().ConfigureStack(request, _context)

    def _runtime(self) -> None:
        """Upstream re-reads the config environment and rebuilds the runtime Settings on every call
        (with an inspect.signature each time); the process environment does not change between calls."""
        if not self._runtime_ready:
            self._configure_runtime_settings()
            self._runtime_ready = True

    def _attr(self, name: str) -> Any:
        return getattr(self, _PARENT + name)

    def _run(self, response, policy, level, validate_args) -> None:
        report = self._create_report_violation(response, policy.name, policy.description, level, policy.severity)
        try:
            result = policy.validate(validate_args, report)
            if isawaitable(result):
                loop = asyncio.new_event_loop()
                loop.run_until_complete(asyncio.Task(result, loop=loop))
                loop.close()
        except UnknownValueError as e:
            name, version = self._attr("policy_pack_name"), self._attr("policy_pack_version")
            response.diagnostics.append(proto.AnalyzeDiagnostic(
                policyName=policy.name, policyPackName=name, policyPackVersion=version,
                message=f"can't run policy '{policy.name}' from policy pack '{name}@v{version}' during preview: {e.message}",
                urn="", description=policy.description,
                enforcementLevel=self._map_enforcement_level(EnforcementLevel.ADVISORY),
            ))
        except _NotApplicableError as e:
            response.not_applicable.append(proto.PolicyNotApplicable(policy_name=policy.name, reason=e.reason or ""))

    def _active(self, kind: type) -> list[tuple[Any, EnforcementLevel]]:
        if kind in self._levels:
            return self._levels[kind]
        out = self._levels[kind] = []
        for policy in self._attr("policies"):
            level = self._get_enforcement_level(policy)
            if level == EnforcementLevel.DISABLED or not isinstance(policy, kind):
                continue
            out.append((policy, EnforcementLevel.MANDATORY if level == EnforcementLevel.REMEDIATE else level))
        return out

    def Analyze(self, request, _context):
        self._runtime()
        response = proto.AnalyzeResponse()
        shared: Optional[tuple] = None
        for policy, level in self._active(ResourceValidationPolicy):
            if not policy.has_validation():
                response.not_applicable.append(proto.PolicyNotApplicable(
                    policy_name=policy.name, reason="Policy does not implement validate"))
                continue
            if shared is None:  # once per resource, not once per rule; props only when a rule reads them
                shared = (self._conversions.get(request.urn, request.properties), self._get_resource_options(request),
                          self._get_provider_resource(request))
            props, opts, provider = shared
            args = LazyResourceArgs(request.type, props, request.urn, request.name, opts, provider,
                                    self._get_policy_config(policy.name), self._attr("stack_tags"))
            self._run(response, policy, level, args)
        return response

    def AnalyzeStack(self, request, _context):
        self._runtime()
        response = proto.AnalyzeResponse()
        active = self._active(StackValidationPolicy)
        if not active:
            return response
        by_urn: dict[str, PolicyResource] = {}
        wiring = []
        for r in request.resources:
            resource = LazyPolicyResource(r.type, self._conversions.get(r.urn, r.properties), r.urn, r.name,
                                          self._get_resource_options(r), self._get_provider_resource(r), None, [], {})
            by_urn[r.urn] = resource
            wiring.append((resource, r))
        for resource, r in wiring:
            if r.parent and r.parent in by_urn:
                resource.parent = by_urn[r.parent]
            resource.dependencies.extend(by_urn[d] for d in r.dependencies if d in by_urn)
            for key, deps in r.propertyDependencies.items():
                resource.property_dependencies[key] = [by_urn[d] for d in deps.urns if d in by_urn]
        resources = IndexedResources([resource for resource, _ in wiring])
        for policy, level in active:
            args = StackValidationArgs(resources, self._get_policy_config(policy.name), self._attr("stack_tags"))
            self._run(response, policy, level, args)
        return response


def serve(servicer: FastAnalyzerServicer) -> None:
    """What `PolicyPack(...)` does with its servicer: serve it on a free loopback port, print the port on
    the first stdout line (the CLI reads it), and run until interrupted."""
    from pulumi_policy.policy import _GRPC_CHANNEL_OPTIONS, _ONE_DAY_IN_SECONDS

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4), options=_GRPC_CHANNEL_OPTIONS)
    analyzer_pb2_grpc.add_AnalyzerServicer_to_server(servicer, server)
    port = server.add_insecure_port(address="127.0.0.1:0")
    server.start()
    sys.stdout.buffer.write(f"{port}\n".encode())
    sys.stdout.flush()
    try:
        while True:
            time.sleep(_ONE_DAY_IN_SECONDS)
    except KeyboardInterrupt:
        server.stop(0)
