"""Evaluate the policy pack on a plan in process, through the servicer `pulumi preview` talks to.

`PolicyPack(...)` starts a gRPC server as soon as it is built, so the plan calls the servicer that server
would wrap (gpufleet.policies.servicer): its Analyze for each resource, then its AnalyzeStack. The rules,
their argument types and their unknown-value handling are therefore exactly those of
`pulumi preview --policy-pack policies`. The plan hands it the registrations' inputs as plain values
(`analyze_plain`) rather than the protobuf requests the CLI sends (`analyze_request`, `stack_request`,
kept for the servicer's tests, the gRPC harness and the benchmark): the same answers, without building
messages only for the servicer to read them back.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Iterable, Optional

from google.protobuf import struct_pb2
from google.protobuf.internal.well_known_types import _SetStructValue as _set_struct_value
from pulumi.runtime.proto import analyzer_pb2

from gpufleet.app.plan.mocks import Registration
from gpufleet.policies.servicer import PlainResource


@dataclass
class Violation:
    """One policy finding on one resource (or on the stack), as the plan's JSON lists it."""

    policy: str
    level: str  # mandatory | advisory
    urn: str
    message: str

_LEVELS = {
    analyzer_pb2.ADVISORY: "advisory",
    analyzer_pb2.MANDATORY: "mandatory",
    analyzer_pb2.DISABLED: "disabled",
    analyzer_pb2.REMEDIATE: "mandatory",
}


def to_struct(value: dict) -> struct_pb2.Struct:
    """What `Struct().update(value)` builds, about a third faster: plain JSON types dispatch on their exact
    type, anything else (subclasses, tuples) takes protobuf's own setter."""
    struct = struct_pb2.Struct()
    _fill(struct.fields, value)
    return struct


def _fill(fields, value: dict) -> None:
    for key, item in value.items():
        kind = type(item)
        if kind is str:  # scalars inline: most values are, and a call per value is most of the cost
            fields[key].string_value = item
        elif kind is bool:
            fields[key].bool_value = item
        elif kind is float or kind is int:
            fields[key].number_value = item
        else:
            _set(fields[key], item)


def _set(target: struct_pb2.Value, value) -> None:
    kind = type(value)
    if kind is str:
        target.string_value = value
    elif kind is bool:
        target.bool_value = value
    elif kind is float or kind is int:
        target.number_value = value
    elif kind is dict:
        struct = target.struct_value
        struct.SetInParent()  # an empty map is still a struct, as update() leaves it
        _fill(struct.fields, value)
    elif kind is list:
        values = target.list_value
        values.SetInParent()
        add = values.values.add
        for item in value:
            _set(add(), item)
    elif value is None:
        target.null_value = struct_pb2.NULL_VALUE
    else:
        _set_struct_value(target, value)


def analyzer_options(r: Registration) -> analyzer_pb2.AnalyzerResourceOptions:
    """The resource options the engine sends an analyzer (pkg/resource/plugin/analyzer_plugin.go): the rules read
    `protect` from them."""
    return analyzer_pb2.AnalyzerResourceOptions(
        parent=r.parent or "",
        protect=r.protect,
        ignoreChanges=list(r.ignore_changes),
        deleteBeforeReplace=bool(r.delete_before_replace),
        deleteBeforeReplaceDefined=r.delete_before_replace is not None,
    )


_REQUESTS: dict[int, tuple] = {}  # id(registration) -> (registration, its AnalyzeRequest)


def analyze_request(r: Registration) -> analyzer_pb2.AnalyzeRequest:
    """The registration's AnalyzeRequest, built once (stack_request reuses its properties and options).

    The inputs are written straight into the request's own Struct: building a separate Struct and passing
    it in would copy it (protobuf copies a message given as a field value), and that copy was about a
    quarter of the request's cost. Callers only read the request."""
    hit = _REQUESTS.get(id(r))
    if hit is None or hit[0] is not r:
        if len(_REQUESTS) > 50_000:
            _REQUESTS.clear()
        request = analyzer_pb2.AnalyzeRequest(type=r.type, urn=r.urn, name=r.name, options=analyzer_options(r))
        request.properties.SetInParent()  # empty inputs are still a Struct, as to_struct() leaves them
        _fill(request.properties.fields, r.inputs)
        hit = _REQUESTS[id(r)] = (r, request)
    return hit[1]


def stack_request(resources: Iterable[Registration]) -> analyzer_pb2.AnalyzeStackRequest:
    out = analyzer_pb2.AnalyzeStackRequest()
    add = out.resources.add
    for r in resources:
        request = analyze_request(r)
        add(type=r.type, properties=request.properties, urn=r.urn, name=r.name, parent=r.parent or "", options=request.options)
    return out


def configure_request(config: Optional[dict] = None) -> analyzer_pb2.ConfigureAnalyzerRequest:
    """Every policy's enforcement level sent explicitly (the CLI always sends one)."""
    from gpufleet.policies.pack import POLICIES

    config = config or {}
    policy_config = {}
    for policy in POLICIES:
        own = dict(config.get(policy.name, {}))
        level = own.pop("enforcementLevel", policy.enforcement_level.value)
        policy_config[policy.name] = analyzer_pb2.PolicyConfig(
            enforcementLevel=getattr(analyzer_pb2, level.upper()), properties=to_struct(own)
        )
    return analyzer_pb2.ConfigureAnalyzerRequest(policyConfig=policy_config)


def diagnostics_to_violations(diagnostics) -> list[Violation]:
    return [
        Violation(policy=d.policyName, level=_LEVELS.get(d.enforcementLevel, "advisory"), urn=d.urn, message=d.message)
        for d in diagnostics
    ]


def plain_resource(r: Registration) -> PlainResource:
    """The registration as the servicer's plain input: what analyze_request(r) carries, without building it
    (its options are built only if a rule reads them)."""
    return PlainResource(r.type, r.urn, r.name, r.inputs, r.parent or "", partial(_options_request, r))


def _options_request(r: Registration) -> analyzer_pb2.AnalyzeRequest:
    """What a rule reads of analyze_request(r) besides the properties: the options (and the provider, unset
    in both), without the properties."""
    return analyzer_pb2.AnalyzeRequest(type=r.type, urn=r.urn, name=r.name, options=analyzer_options(r))


def evaluate(resources: list[Registration], stack: str, config: Optional[dict] = None) -> list[Violation]:
    """The pack's verdicts on a plan, as `pulumi preview --policy-pack policies` gives them: the servicer's
    Analyze for each resource, then its AnalyzeStack, each on the plain inputs (`analyze_plain`: the same
    answers as for the protobuf requests, compared in tests/policy/test_servicer.py)."""
    from gpufleet.policies.pack import servicer

    analyzer = servicer()
    analyzer.Configure(configure_request(config), None)
    plain = [plain_resource(r) for r in resources]
    diagnostics = []
    for r in plain:
        for d in analyzer.analyze_plain(r).diagnostics:
            if not d.urn:  # the servicer leaves it to the engine; the review joins findings by URN
                d.urn = r.urn
            diagnostics.append(d)
    diagnostics += analyzer.analyze_stack_plain(plain).diagnostics
    return sorted(diagnostics_to_violations(diagnostics), key=lambda v: (v.level != "mandatory", v.policy, v.urn))
