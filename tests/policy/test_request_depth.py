"""The pack refuses a request nested deeper than any real resource, and keeps serving (issue 31).

protobuf's parser (upb) decodes nested messages recursively with no depth limit: an AnalyzeRequest whose
properties nest ~5,000 maps deep killed the pack with SIGSEGV before any of its code ran. The pack now reads the
wire format first (policies/wire_depth.py) and answers INVALID_ARGUMENT past
gpufleet.base.limits.POLICY_REQUEST_MAX_DEPTH (128 levels of maps and lists in a resource's properties,
counting the properties map, as `limits.depth` counts them).
"""

from __future__ import annotations

import grpc
import pytest
from google.protobuf import empty_pb2
from hypothesis import given, settings
from hypothesis import strategies as st
from pulumi.runtime.proto import analyzer_pb2

from gpufleet.app.plan.mocks import Registration
from gpufleet.app.plan.policy_runner import analyze_request, configure_request, stack_request
from gpufleet.base import limits
from gpufleet.policies import wire_depth
from tests.helpers import REFERENCE, load_yaml
from tests.policy import fixtures as F
from tests.policy.test_grpc_harness import analyzer  # noqa: F401 - the pack, started as the Pulumi CLI starts it

LIMIT = limits.POLICY_REQUEST_MAX_DEPTH
METHODS = {"Analyze": analyzer_pb2.AnalyzeRequest, "Remediate": analyzer_pb2.AnalyzeRequest,
           "AnalyzeStack": analyzer_pb2.AnalyzeStackRequest}


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def deep_request(levels: int, stack: bool = False) -> bytes:
    """An EKS cluster whose `vpcConfig` nests `levels` maps (so its properties nest levels + 1), written straight
    in the wire format: the Python protobuf library cannot build one this deep itself."""
    value = _field(3, b"leaf")  # Value.string_value
    for _ in range(levels):
        value = _field(5, _field(1, _field(1, b"x") + _field(2, value)))  # Value.struct_value{fields{x: value}}
    typ = F.res("aws:eks/cluster:Cluster", "deep", {}).type.encode()
    request = (_field(1, typ) + _field(2, _field(1, _field(1, b"vpcConfig") + _field(2, value)))
               + _field(3, b"urn:pulumi:dev::gpufleet::aws:eks/cluster:Cluster::deep") + _field(4, b"deep"))
    return _field(1, request) if stack else request  # AnalyzeStackRequest.resources[0] has the same fields 1-4


def _call(channel, method: str, data: bytes):
    call = channel.unary_unary(f"/pulumirpc.Analyzer/{method}", request_serializer=lambda b: b,
                               response_deserializer=analyzer_pb2.AnalyzeResponse.FromString)
    try:
        return call(data, timeout=60)
    except grpc.RpcError as error:
        return error.code(), error.details()


@pytest.fixture(scope="module")
def pack(analyzer):  # noqa: F811
    """The pack over gRPC, its raw channel, and the same servicer in process (for the answers to compare)."""
    from gpufleet.policies.pack import servicer

    stub, engine = analyzer
    stub.Configure(configure_request())
    local = servicer()
    local.Configure(configure_request(), None)
    return stub, engine, local


@pytest.mark.parametrize("method", sorted(METHODS))
@pytest.mark.parametrize("levels", [LIMIT, 5_000, 20_000])
def test_too_deep_is_refused_and_the_pack_keeps_serving(pack, method, levels):
    stub, engine, local = pack
    got = _call(engine.channel, method, deep_request(levels, stack=method == "AnalyzeStack"))
    assert got == (grpc.StatusCode.INVALID_ARGUMENT,
                   f"gpufleet policy pack: request refused: maps and lists nest deeper than {LIMIT} levels; no real "
                   "resource does (gpufleet.base.limits.POLICY_REQUEST_MAX_DEPTH)")
    assert stub.GetAnalyzerInfo(empty_pb2.Empty()).name  # still serving, and judging as before
    fine = analyze_request(F.res("aws:eks/cluster:Cluster", "prod", F.with_(F.EKS_CLUSTER_IN, "encryptionConfig", [])))
    answer = stub.Analyze(fine)
    assert answer == local.Analyze(fine, None) and "secure-defaults" in {d.policyName for d in answer.diagnostics}
    assert [m for sev, m in engine.logs if sev >= 3] == []


@pytest.mark.parametrize("method", sorted(METHODS))
def test_the_limit_itself_is_answered(pack, method):
    stub, engine, local = pack
    data = deep_request(LIMIT - 1, stack=method == "AnalyzeStack")
    got = _call(engine.channel, method, data)
    if method == "Remediate":
        assert isinstance(got, analyzer_pb2.AnalyzeResponse)  # (its answer read as an AnalyzeResponse: no error)
        return
    message = METHODS[method].FromString(data)
    assert got == getattr(local, method)(message, None)
    assert got.diagnostics or method == "AnalyzeStack"  # judged (no encryption); one resource breaks no stack rule


def test_the_deepest_upstream_crd_is_judged_not_refused(pack):
    """Kubeflow Trainer's TrainJob CRD nests 47 levels: a program may register it as a resource."""
    path = REFERENCE / "crds" / "trainer" / "trainer.kubeflow.org_trainjobs.yaml"
    if not path.exists():
        pytest.skip(f"reference data absent: {path}")
    crd = load_yaml(path.read_text())
    assert limits.depth(crd) == 47
    stub, _, local = pack
    request = analyze_request(F.res("kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition", "trainjobs", crd))
    assert stub.Analyze(request) == local.Analyze(request, None)


def _nested(draw, levels: int):
    value = draw(st.sampled_from(["x", 1.0, True, None]))
    for _ in range(levels):
        value = draw(st.sampled_from([lambda v: [v], lambda v: {"k": v}, lambda v: [1.0, v, "y"], lambda v: {"a": 2.0, "b": v}]))(value)
    return value


@settings(max_examples=150, deadline=None)
@given(st.data(), st.integers(0, LIMIT + 3), st.integers(0, LIMIT + 3))
def test_the_wire_scan_counts_as_limits_depth(data, one, other):
    """The scan of the wire format refuses exactly the requests whose properties `limits.depth` finds too deep
    (maps and lists alike), for Analyze and AnalyzeStack requests."""
    props = {"a": _nested(data.draw, one), "b": [_nested(data.draw, other)]}
    resource = Registration(urn="urn:pulumi:dev::p::t:m:R::r", type="t:m:R", name="r", parent="", custom=True, inputs=props)
    too_deep = limits.depth(props) > LIMIT
    for request, message in ((analyze_request(resource), analyzer_pb2.AnalyzeRequest),
                             (stack_request([resource]), analyzer_pb2.AnalyzeStackRequest)):
        problem = wire_depth.nesting_problem(request.SerializeToString(), message.DESCRIPTOR)
        assert (problem is not None) == too_deep, (limits.depth(props), problem)
