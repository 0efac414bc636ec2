"""The pack's Analyzer servicer: pulumi_policy's own, converting each resource once instead of once per rule.

pulumi_policy's `_PolicyAnalyzerServicer` turns a resource's protobuf properties into Python values
(`MessageToDict`, `deserialize_properties`, `unknown_checking_proxy`) inside its loop over policies, so a
pack of ten rules converts every resource ten times; that conversion was most of the time a plan spent on
policies (bench/policy.py). This subclass converts a resource's properties at most once (the first time a
rule reads them, through policies/values.py's proxies: rules look at a few type tokens only), keeps them
for the stack analysis that follows, and hands the same read-only values to every rule; stack rules get
the resources indexed by type. Everything else (enforcement levels, config, messages, unknown-value and
not-applicable handling) is the upstream code path, so verdicts are identical (the policy tests and the
broken-stack corpus run through it).

Two callers:
- the engine, over gRPC (`serve()` starts it the way `PolicyPack(...)` starts its own). `Remediate`,
  which the engine calls on every resource before `Analyze`, answers without converting anything while
  no policy is at the `remediate` level (upstream's answer is then always empty), and, served by
  policies/transport.py, works out the Analyze that follows while the engine reads that answer;
- the offline plan, in process, with each resource's inputs as plain values (`PlainResource`,
  `analyze_plain`, `analyze_stack_plain`): the same answers as for the protobuf requests, without
  building them.

Written against pulumi_policy 1.x (pyproject pins <2): it reads the parent's private attributes by their
mangled names, which a major release may change; tests/policy/test_servicer.py compares both servicers,
and both of this one's inputs.
"""

from __future__ import annotations

import asyncio
import sys
import time
from concurrent import futures
from inspect import isawaitable
from typing import Any, Callable, Optional

import grpc
from pulumi.runtime.proto import analyzer_pb2 as proto
from pulumi.runtime.proto import analyzer_pb2_grpc
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

from gpufleet.base.spec.errors import printable
from gpufleet.policies.values import plain_props, struct_props
from gpufleet.policies.wire_depth import DepthGuard

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


_UNSET = object()


class Converted:
    """A resource's properties, converted the first time any rule reads them, then shared.

    The URN cache is consulted only then too: a resource no rule reads is never serialized or converted."""

    __slots__ = ("message", "urn", "cache", "value")

    def __init__(self, message, urn: str = "", cache: Optional["_Conversions"] = None):
        self.message = message
        self.urn = urn
        self.cache = cache
        self.value = _UNSET

    def get(self) -> Any:
        if self.value is _UNSET:
            raw = self.message.SerializeToString(deterministic=True)
            hit = self.cache.lookup(self.urn, raw) if self.cache is not None else None
            if hit is not None and hit is not self:
                self.value = hit.get()
            else:
                self.value = struct_props(self.message, raw)
                if self.cache is not None:
                    self.cache.store(self.urn, raw, self)
            self.message = self.cache = None
        return self.value


class _Later:
    """A value computed the first time it is read, then kept (resource options, provider)."""

    __slots__ = ("compute", "arg", "value")

    def __init__(self, compute: Callable[[Any], Any], arg: Any):
        self.compute = compute
        self.arg = arg
        self.value = _UNSET

    def get(self) -> Any:
        if self.value is _UNSET:
            self.value = self.compute(self.arg)
            self.compute = self.arg = None
        return self.value


class _LazyProps:
    """pulumi_policy's argument classes, with `props` (a Converted), `opts` and `provider` (_Later) computed
    on first read and then plain instance attributes (no property call on every read a rule makes): most
    rules read the props of a few resource types only, and only one rule reads any option.

    Built by `of()` with the attributes upstream's __init__ sets (tests/policy/test_servicer.py compares
    them), without running it: thousands are built per analysis."""

    @classmethod
    def of(cls, attributes: dict, pending: dict) -> Any:
        self = cls.__new__(cls)
        own = self.__dict__
        own.update(attributes)
        own["_pending"] = pending  # its own: reading an attribute pops it from here
        return self

    def __getattr__(self, name: str) -> Any:  # only reached while the attribute is not yet computed
        pending = self.__dict__.get("_pending")
        if pending and name in pending:
            value = self.__dict__[name] = pending.pop(name).get()
            return value
        raise AttributeError(name)


class LazyResourceArgs(_LazyProps, ResourceValidationArgs):
    @staticmethod
    def attributes(resource_type: str, urn: str, name: str, config: Optional[dict], stack_tags: Optional[dict]) -> dict:
        """What ResourceValidationArgs.__init__ sets, but props, opts and provider."""
        return {"resource_type": resource_type, "urn": urn, "name": name,
                "_ResourceValidationArgs__config": config if config is not None else {},
                "stack_tags": stack_tags if stack_tags is not None else {}}


class LazyPolicyResource(_LazyProps, PolicyResource):
    @staticmethod
    def attributes(resource_type: str, urn: str, name: str) -> dict:
        """What PolicyResource.__init__ sets, but props, opts and provider (parent and dependencies are wired later)."""
        return {"resource_type": resource_type, "urn": urn, "name": name, "parent": None, "dependencies": [],
                "property_dependencies": {}}


class _Conversions:
    """Converted properties by URN, so AnalyzeStack reuses what the Analyze calls of the same preview
    converted (the engine sends each resource to Analyze, then all of them to AnalyzeStack). Entries
    match on the serialized properties too, so a changed resource is converted again."""

    LIMIT = 100_000

    def __init__(self):
        self.by_urn: dict[str, tuple[bytes, Converted]] = {}

    def get(self, urn: str, properties) -> Converted:
        """The resource's properties, to be converted (or found here) when a rule first reads them."""
        return Converted(properties, urn, self)

    def lookup(self, urn: str, raw: bytes) -> Optional[Converted]:
        hit = self.by_urn.get(urn)
        return hit[1] if hit is not None and hit[0] == raw else None

    def store(self, urn: str, raw: bytes, converted: Converted) -> None:
        if len(self.by_urn) >= self.LIMIT:
            self.by_urn.clear()
        self.by_urn[urn] = (raw, converted)


def _judged_types(policy) -> Optional[frozenset]:
    """The resource types a resource policy's validation judges, when every validate function declares
    them (`judged_types`, set by gpufleet.policies.inputs' validators); None when any may judge any type."""
    validate = getattr(policy, "_ResourceValidationPolicy__validate", None)
    if not validate:
        return None
    found: set = set()
    for fn in validate if isinstance(validate, list) else [validate]:
        types = getattr(fn, "judged_types", None)
        if types is None:
            return None
        found |= types
    return frozenset(found)


class FastAnalyzerServicer(_PolicyAnalyzerServicer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._conversions = _Conversions()
        # What the configured levels decide, worked out on first use and kept until the next Configure: the
        # active policies per kind (key: the class), whether any remediates ("remediate"), and the policies
        # that judge each resource type (("judging", type)).
        self._levels: dict = {}
        self._runtime_ready = False
        # (AnalyzeRequest, its AnalyzeResponse) worked out after a Remediate answer: see `Remediate`.
        self._prepared: Optional[tuple] = None

    def Configure(self, request, _context):
        self._levels = {}
        self._runtime_ready = False
        self._prepared = None
        return super().Configure(request, _context)

    def ConfigureStack(self, request, _context):
        self._runtime_ready = False
        self._prepared = None
        return super().ConfigureStack(request, _context)

    def _runtime(self) -> None:
        """Upstream re-reads the config environment and rebuilds the runtime Settings on every call
        (with an inspect.signature each time); the process environment does not change between calls."""
        if not self._runtime_ready:
            self._configure_runtime_settings()
            self._runtime_ready = True

    def _attr(self, name: str) -> Any:
        return getattr(self, _PARENT + name)

    def _create_report_violation(self, response, policy_name, policy_description, enforcement_level, severity=None):
        """Upstream's reporter, with each message made one printable, inert line first (gpufleet.base.spec.errors
        `printable`). This is where every violation message leaves the pack, for the engine (`pulumi preview`
        prints it to a terminal or a CI log) and for `gpufleet plan`: a rule's message echoes resource inputs
        (a pool name, a label value, a reason), which any Pulumi program, not only gpufleet's checked spec, can set
        to a newline, a terminal escape or a `::error::` workflow command (issue 48)."""
        report = super()._create_report_violation(response, policy_name, policy_description, enforcement_level, severity)

        def report_violation(message: str, urn: Optional[str] = None) -> None:
            report(printable(message) if isinstance(message, str) else message, urn)

        return report_violation

    def _run(self, response, policy, level, validate_args) -> None:
        report = self._create_report_violation(response, policy.name, policy.description, level, policy.severity)
        try:
            result = policy.validate(validate_args, report)
            if result is not None and isawaitable(result):
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

    def _active(self, kind: type) -> list[tuple[Any, EnforcementLevel, Optional[frozenset]]]:
        """The enabled policies of a kind with their level, and the resource types each judges (None: any)."""
        if kind in self._levels:
            return self._levels[kind]
        out = self._levels[kind] = []
        for policy in self._attr("policies"):
            level = self._get_enforcement_level(policy)
            if level == EnforcementLevel.DISABLED or not isinstance(policy, kind):
                continue
            level = EnforcementLevel.MANDATORY if level == EnforcementLevel.REMEDIATE else level
            out.append((policy, level, _judged_types(policy)))
        return out

    def remediates(self) -> bool:
        """Whether any resource policy is at the `remediate` level under the current config (worked out
        once per Configure): only then can upstream's Remediate answer anything but an empty response."""
        if "remediate" not in self._levels:
            self._levels["remediate"] = any(
                isinstance(policy, ResourceValidationPolicy) and self._get_enforcement_level(policy) == EnforcementLevel.REMEDIATE
                for policy in self._attr("policies"))
        return self._levels["remediate"]

    def Remediate(self, request, context):
        """The engine calls Remediate on every resource, just before Analyze (pulumi/pulumi
        pkg/resource/deploy/step_generator.go, "First pass: perform remediations"). Upstream converts the
        resource's properties, options and provider before it looks for a policy at the `remediate` level;
        with none, its answer is an empty response whatever the resource. This returns that answer without
        converting anything, and otherwise takes upstream's path.

        With nothing to remediate, the Analyze call that follows carries the same resource (analyzeAll
        builds it from the same state; pkg/resource/plugin/analyzer_plugin.go marshals it the same way,
        but for the top-level internal `__` keys that only Remediate sends). Served by policies/transport.py,
        the pack works that Analyze out right after the Remediate answer has gone (`after_reply`), while
        the engine reads the answer and prepares its next call; `Analyze` then answers from it if the
        request is the same message (`_prepared`)."""
        self._runtime()
        if self.remediates():
            return super().Remediate(request, context)
        after_reply = getattr(context, "after_reply", None)
        if after_reply is not None:
            after_reply(self._prepare, request)
        return proto.RemediateResponse()

    def _prepare(self, remediate_request) -> None:
        request = remediate_request
        internal = [key for key in request.properties.fields if key.startswith("__")]
        if internal:
            request = proto.AnalyzeRequest()
            request.CopyFrom(remediate_request)
            for key in internal:
                del request.properties.fields[key]
        self._prepared = None
        try:
            self._prepared = (request, self._analyze(request))
        except Exception:  # noqa: BLE001 - nothing prepared: the Analyze call works it out again and reports the error
            pass

    def _judging(self, resource_type: str) -> list[tuple[Any, EnforcementLevel]]:
        """The enabled resource policies that judge this type, in pack order, with their level: worked out
        once per type until the next Configure, not for each resource (a rule that declares its types
        returns before reading anything for other types: no verdict to run for)."""
        key = ("judging", resource_type)
        if key not in self._levels:
            self._levels[key] = [(policy, level) for policy, level, judged in self._active(ResourceValidationPolicy)
                                 if judged is None or resource_type in judged]
        return self._levels[key]

    def Analyze(self, request, _context):
        prepared, self._prepared = self._prepared, None
        if prepared is not None and prepared[0] == request:  # the same message: the same answer
            return prepared[1]
        return self._analyze(request)

    def _analyze(self, request):
        return self._judge(request.type, request, self._request_parts)

    def analyze_plain(self, resource: PlainResource):
        """Analyze for a resource given as plain values: the response `Analyze` gives its AnalyzeRequest
        (gpufleet.app.plan.policy_runner.analyze_request), without building that request."""
        return self._judge(resource.type, resource, self._plain_parts)

    def _request_parts(self, request) -> tuple[str, str, dict]:
        urn = request.urn
        return urn, request.name, {"props": self._conversions.get(urn, request.properties),
                                   "opts": _Later(self._get_resource_options, request),
                                   "provider": _Later(self._get_provider_resource, request)}

    def _plain_parts(self, resource: PlainResource) -> tuple[str, str, dict]:
        return resource.urn, resource.name, {"props": resource.props, "opts": _Later(self._plain_options, resource),
                                             "provider": _Later(self._plain_provider, resource)}

    def _plain_options(self, resource: PlainResource):
        return self._get_resource_options(resource.request())

    def _plain_provider(self, resource: PlainResource):
        return self._get_provider_resource(resource.request())

    def _judge(self, resource_type: str, source, parts: Callable[[Any], tuple[str, str, dict]]):
        """The resource policies' verdicts on one resource; `parts(source)` gives its URN, name and the
        deferred props, options and provider, asked only if a policy judges the type."""
        self._runtime()
        response = proto.AnalyzeResponse()
        pending: Optional[dict] = None
        for policy, level in self._judging(resource_type):
            if not policy.has_validation():
                response.not_applicable.append(proto.PolicyNotApplicable(
                    policy_name=policy.name, reason="Policy does not implement validate"))
                continue
            if pending is None:  # once per resource, not once per rule; each part only when a rule reads it
                urn, name, pending = parts(source)
                stack_tags = self._attr("stack_tags")
            args = LazyResourceArgs.of(LazyResourceArgs.attributes(
                resource_type, urn, name, self._get_policy_config(policy.name), stack_tags), dict(pending))
            self._run(response, policy, level, args)
        return response

    def AnalyzeStack(self, request, _context):
        self._runtime()
        if not self._active(StackValidationPolicy):
            return proto.AnalyzeResponse()
        wiring = []
        for r in request.resources:
            urn = r.urn
            resource = LazyPolicyResource.of(LazyPolicyResource.attributes(r.type, urn, r.name), {
                "props": self._conversions.get(urn, r.properties),
                "opts": _Later(self._get_resource_options, r),
                "provider": _Later(self._get_provider_resource, r)})
            wiring.append((resource, r.parent, r.dependencies, r.propertyDependencies))
        return self._judge_stack(wiring)

    def analyze_stack_plain(self, resources: list[PlainResource]):
        """AnalyzeStack for resources given as plain values: the response `AnalyzeStack` gives their
        AnalyzeStackRequest (gpufleet.app.plan.policy_runner.stack_request: parents, no dependencies). Each
        resource's props are the ones `analyze_plain` read, so what a rule worked out there is reused."""
        self._runtime()
        if not self._active(StackValidationPolicy):
            return proto.AnalyzeResponse()
        wiring = []
        for r in resources:
            resource = LazyPolicyResource.of(LazyPolicyResource.attributes(r.type, r.urn, r.name), {
                "props": r.props, "opts": _Later(self._plain_options, r), "provider": _Later(self._plain_provider, r)})
            wiring.append((resource, r.parent, (), None))
        return self._judge_stack(wiring)

    def _judge_stack(self, wiring: list) -> Any:
        """The stack policies' verdicts on the resources of `wiring`: (resource, parent URN, dependency URNs,
        property dependencies), in stack order, wired to each other by URN as upstream wires them."""
        response = proto.AnalyzeResponse()
        by_urn: dict[str, PolicyResource] = {resource.urn: resource for resource, *_ in wiring}
        for resource, parent, dependencies, property_dependencies in wiring:  # read once, and not at all when empty
            if parent and parent in by_urn:
                resource.parent = by_urn[parent]
            if dependencies:
                resource.dependencies.extend(by_urn[d] for d in dependencies if d in by_urn)
            if property_dependencies:
                for key, deps in property_dependencies.items():
                    resource.property_dependencies[key] = [by_urn[d] for d in deps.urns if d in by_urn]
        resources = IndexedResources([resource for resource, *_ in wiring])
        for policy, level, _ in self._active(StackValidationPolicy):
            args = StackValidationArgs(resources, self._get_policy_config(policy.name), self._attr("stack_tags"))
            self._run(response, policy, level, args)
        return response


class PlainResource:
    """One resource as plain values, for a caller that holds them (the offline plan) instead of protobuf
    requests: its properties in the JSON types the engine marshals (special values by signature).
    `request` builds an AnalyzeRequest carrying its options and provider (its properties are not read
    from it), called only if a rule reads them (one rule reads `protect`); by default, none of either."""

    __slots__ = ("type", "urn", "name", "parent", "props", "request")

    def __init__(self, type: str, urn: str, name: str, properties: dict, parent: str = "",
                 request: Optional[Callable[[], Any]] = None):
        self.type, self.urn, self.name, self.parent = type, urn, name, parent
        self.props = _PlainProps(properties)
        self.request = request or proto.AnalyzeRequest


class _PlainProps:
    """A resource's plain properties as the rules read them (policies/values.py `plain_props`), built the
    first time a rule reads them, then shared by `analyze_plain` and `analyze_stack_plain` (and so by
    every rule's `memo`)."""

    __slots__ = ("values", "value")

    def __init__(self, values: dict):
        self.values = values
        self.value = None

    def get(self) -> Any:
        if self.value is None:
            self.value = plain_props(self.values)
        return self.value


def analyzer_handler(servicer) -> grpc.GenericRpcHandler:
    """The generated Analyzer method table (pulumi's analyzer_pb2_grpc) for this servicer, as one handler
    (generated code may hand it over twice, generic and by name: each holds every method), behind
    policies/wire_depth.py's guard: a request nested a few thousand levels deep would crash protobuf's parser."""
    recorder = _HandlerRecorder()
    analyzer_pb2_grpc.add_AnalyzerServicer_to_server(servicer, recorder)
    return DepthGuard(recorder.handlers[0])  # refuses requests nested too deep before protobuf parses them


class _HandlerRecorder:
    """Stands in for a grpc.Server while the generated `add_AnalyzerServicer_to_server` hands over its
    method table (as generic handlers; newer generated code also registers the methods by name)."""

    def __init__(self):
        self.handlers: list = []

    def add_generic_rpc_handlers(self, handlers) -> None:
        self.handlers.extend(handlers)

    def add_registered_method_handlers(self, service_name, method_handlers) -> None:
        self.handlers.append(grpc.method_handlers_generic_handler(service_name, method_handlers))


def serve(servicer: FastAnalyzerServicer) -> None:
    """What `PolicyPack(...)` does with its servicer: serve it on a free loopback port, print the port on
    the first stdout line (the CLI reads it), and run until interrupted. Served by the one-thread loop on
    grpcio's core (policies/transport.py) where this grpcio has it, else by `grpc.server` as upstream does."""
    from pulumi_policy.policy import _GRPC_CHANNEL_OPTIONS, _ONE_DAY_IN_SECONDS

    from gpufleet.policies import transport

    handlers = analyzer_handler(servicer)
    if transport.available():
        server = transport.Server(handlers, options=_GRPC_CHANNEL_OPTIONS)
        port = server.add_insecure_port("127.0.0.1:0")
        server.start()
        try:
            transport.announce(port)
            server.run()
        except KeyboardInterrupt:
            pass
        finally:
            server.close()
        return
    sys.stderr.write("gpufleet policy pack: this grpcio lacks the core server API policies/transport.py uses; "
                     "serving with grpc.server (slower per call)\n")
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4), options=_GRPC_CHANNEL_OPTIONS)
    server.add_generic_rpc_handlers((handlers,))
    port = server.add_insecure_port(address="127.0.0.1:0")
    server.start()
    transport.announce(port)
    try:
        while True:
            time.sleep(_ONE_DAY_IN_SECONDS)
    except KeyboardInterrupt:
        server.stop(0)
