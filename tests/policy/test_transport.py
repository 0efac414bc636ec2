"""policies/transport.py's one-thread server answers every call as `grpc.server` answers it.

Each case runs against both servers, built on the same method table (the generated Analyzer table plus a
test service), through a real grpcio channel: same response, same status code, same details. The pack
itself over the wire is tests/policy/test_grpc_harness.py; the real Pulumi CLI against it is tests/e2e.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from concurrent import futures

import grpc
import pytest
from google.protobuf import empty_pb2
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc

from gpufleet.app.plan.policy_runner import analyze_request, configure_request
from gpufleet.policies import transport
from gpufleet.policies.pack import servicer
from tests.helpers import ROOT
from tests.policy import fixtures as F


class Analyzer(analyzer_pb2_grpc.AnalyzerServicer):
    """Answers Analyze with the request's URN, fails on demand, and leaves the other methods to the
    generated base class (UNIMPLEMENTED "Method not implemented!")."""

    def Analyze(self, request, context):
        if request.name == "boom":
            raise ValueError("boom")
        if request.name == "aborted":
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, "not like this")
        if request.name == "coded":
            context.set_code(grpc.StatusCode.NOT_FOUND)
            context.set_details("no such resource")
        return analyzer_pb2.AnalyzeResponse(diagnostics=[analyzer_pb2.AnalyzeDiagnostic(urn=request.urn)])


def _handlers(servicer) -> grpc.GenericRpcHandler:
    from gpufleet.policies.servicer import _HandlerRecorder

    recorder = _HandlerRecorder()
    analyzer_pb2_grpc.add_AnalyzerServicer_to_server(servicer, recorder)
    [handler] = recorder.handlers
    return handler


@pytest.fixture(scope="module")
def channels():
    """One channel to grpc.server, one to transport.Server, both serving `Analyzer`."""
    reference = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    reference.add_generic_rpc_handlers((_handlers(Analyzer()),))
    reference_port = reference.add_insecure_port("127.0.0.1:0")
    reference.start()
    ours = transport.Server(_handlers(Analyzer()))
    port = ours.add_insecure_port("127.0.0.1:0")
    ours.start()
    loop = threading.Thread(target=ours.run, daemon=True)
    loop.start()
    opened = {name: grpc.insecure_channel(f"127.0.0.1:{p}") for name, p in (("grpc.server", reference_port), ("transport", port))}
    yield opened
    for channel in opened.values():
        channel.close()
    ours.stop()
    loop.join(timeout=10)
    assert not loop.is_alive(), "stop() ends run()"
    reference.stop(0)


def _outcome(channel, method: str, request: bytes):
    call = channel.unary_unary(method)
    try:
        return ("ok", call(request, timeout=10))
    except grpc.RpcError as error:
        return (error.code(), error.details())


def _request(name: str) -> bytes:
    return analyzer_pb2.AnalyzeRequest(type="t:m:R", urn=f"urn:pulumi:dev::p::t:m:R::{name}", name=name).SerializeToString()


CASES = {
    "served": ("/pulumirpc.Analyzer/Analyze", _request("fine")),
    "raises": ("/pulumirpc.Analyzer/Analyze", _request("boom")),
    "aborts": ("/pulumirpc.Analyzer/Analyze", _request("aborted")),
    "sets a code": ("/pulumirpc.Analyzer/Analyze", _request("coded")),
    "not implemented by the servicer": ("/pulumirpc.Analyzer/Handshake", b""),
    "unknown method": ("/pulumirpc.Analyzer/Nope", b""),
    "unknown service": ("/elsewhere.Service/Call", b"\x00"),
    "undecodable request": ("/pulumirpc.Analyzer/Analyze", b"\xff\xff\xff"),
}


@pytest.mark.parametrize("case", CASES)
def test_same_answer_as_grpc_server(channels, case):
    method, request = CASES[case]
    want = _outcome(channels["grpc.server"], method, request)
    got = _outcome(channels["transport"], method, request)
    assert got == want
    if case == "served":
        assert analyzer_pb2.AnalyzeResponse.FromString(got[1]).diagnostics[0].urn.endswith("::fine")
    else:
        assert got[0] != "ok" or case == "sets a code"


def test_expected_codes(channels):
    """Spelled out, so the comparison above cannot pass on two equally wrong servers."""
    got = {case: _outcome(channels["transport"], *CASES[case])[0] for case in CASES}
    assert got == {
        "served": "ok",
        "raises": grpc.StatusCode.UNKNOWN,
        "aborts": grpc.StatusCode.FAILED_PRECONDITION,
        "sets a code": grpc.StatusCode.NOT_FOUND,
        "not implemented by the servicer": grpc.StatusCode.UNIMPLEMENTED,
        "unknown method": grpc.StatusCode.UNIMPLEMENTED,
        "unknown service": grpc.StatusCode.UNIMPLEMENTED,
        "undecodable request": grpc.StatusCode.INTERNAL,
    }
    assert _outcome(channels["transport"], *CASES["raises"])[1] == "Exception calling application: boom"


def test_concurrent_callers_each_get_their_own_answer(channels):
    """The loop serves one call at a time; calls from several threads at once all complete, each with
    the answer to its own request."""
    stub = analyzer_pb2_grpc.AnalyzerStub(channels["transport"])
    names = [f"r{i}" for i in range(200)]
    with futures.ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(lambda n: stub.Analyze(analyzer_pb2.AnalyzeRequest(urn=n, name=n), timeout=30), names))
    assert [a.diagnostics[0].urn for a in answers] == names


def test_large_request_within_the_channel_limit():
    """The channel options reach the core: a message over grpc's 4 MiB default passes with upstream's limits."""
    from pulumi_policy.policy import _GRPC_CHANNEL_OPTIONS

    server = transport.Server(_handlers(Analyzer()), options=_GRPC_CHANNEL_OPTIONS)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    loop = threading.Thread(target=server.run, daemon=True)
    loop.start()
    try:
        channel = grpc.insecure_channel(f"127.0.0.1:{port}", options=[("grpc.max_send_message_length", 64 << 20)])
        big = analyzer_pb2.AnalyzeRequest(urn="big", name="big", type="x" * (6 << 20))
        answer = analyzer_pb2_grpc.AnalyzerStub(channel).Analyze(big, timeout=30)
        assert answer.diagnostics[0].urn == "big"
        channel.close()
    finally:
        server.stop()
        loop.join(timeout=10)


def test_pack_falls_back_to_grpc_server_without_the_core_api():
    """With a grpcio that lacks the core names the loop uses, the pack still serves (grpc.server) and says so."""
    code = (
        "import gpufleet.policies.transport as t; t.available = lambda: False; "
        "from gpufleet.policies.pack import build; build()"
    )
    env = dict(os.environ, PULUMI_PROJECT="gpufleet", PULUMI_STACK="dev", PULUMI_DRY_RUN="true", PULUMI_CONFIG="{}")
    proc = subprocess.Popen([sys.executable, "-u", "-c", code], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        port = int(proc.stdout.readline())
        channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        stub = analyzer_pb2_grpc.AnalyzerStub(channel)
        stub.Configure(configure_request(), timeout=30)
        request = analyze_request(F.res("aws:eks/nodeGroup:NodeGroup", "h100", F.with_(F.NODE_GROUP_IN, "taints", [])))
        answer = stub.Analyze(request, timeout=30)
        local = servicer()
        local.Configure(configure_request(), None)
        assert answer == local.Analyze(request, None)
        assert "gpu-pool-taint" in {d.policyName for d in answer.diagnostics}
        assert stub.GetAnalyzerInfo(empty_pb2.Empty(), timeout=30).name == "gpufleet"
        channel.close()
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    assert b"serving with grpc.server" in err


@pytest.mark.parametrize("after", [0.0, 1.0])
def test_pack_exits_cleanly_on_interrupt(after):
    """Ctrl-C (SIGINT) ends the pack with exit 0 whether it comes as the port is printed or while serving:
    a started core server must shut down before the process can exit (transport.Server.close)."""
    import signal
    import time

    env = dict(os.environ, PULUMI_PROJECT="gpufleet", PULUMI_STACK="dev", PULUMI_DRY_RUN="true", PULUMI_CONFIG="{}")
    proc = subprocess.Popen(
        [sys.executable, "-u", "-m", "pulumi.policy", "127.0.0.1:1", "."], cwd=ROOT / "policies", env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        assert proc.stdout.readline().strip().isdigit()
        time.sleep(after)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err.decode()[-2000:]


def test_work_after_reply_runs_once_the_answer_is_delivered():
    """`context.after_reply` work runs after the caller has the answer: here the work waits for the
    caller to say it has it (it would wait in vain if the answer were sent after the work)."""
    got_answer = threading.Event()
    ran = []

    class Later(analyzer_pb2_grpc.AnalyzerServicer):
        def Analyze(self, request, context):
            context.after_reply(lambda name: ran.append((name, got_answer.wait(timeout=20))), request.name)
            return analyzer_pb2.AnalyzeResponse()

    server = transport.Server(_handlers(Later()))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    loop = threading.Thread(target=server.run, daemon=True)
    loop.start()
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    try:
        stub = analyzer_pb2_grpc.AnalyzerStub(channel)
        assert stub.Analyze(analyzer_pb2.AnalyzeRequest(name="first"), timeout=10) == analyzer_pb2.AnalyzeResponse()
        got_answer.set()
        stub.Analyze(analyzer_pb2.AnalyzeRequest(name="second"), timeout=30)
        assert ran[0] == ("first", True)
    finally:
        channel.close()
        server.stop()
        loop.join(timeout=10)
