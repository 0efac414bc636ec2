"""The pack over the real Analyzer protocol, started exactly as the Pulumi CLI starts a Python pack.

`python -u -m pulumi.policy <engine-address> .` in policies/ (PulumiPolicy.yaml's virtualenv is ../.venv,
where gpufleet is installed editable, so `gpufleet.policies.pack` imports), with PULUMI_PROJECT / PULUMI_STACK /
PULUMI_DRY_RUN / PULUMI_CONFIG set; the port comes on the first stdout line. The engine address is a tiny
Engine servicer started here, which records any log the pack sends.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from concurrent import futures
from pathlib import Path

import grpc
import pytest
from google.protobuf import empty_pb2
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc, engine_pb2_grpc

from gpufleet.app.plan.mocks import Registration
from gpufleet.app.plan.policy_runner import analyze_request, configure_request, diagnostics_to_violations, evaluate, stack_request
from gpufleet.policies.pack import PACK_NAME, PACK_VERSION, POLICIES
from tests.helpers import ROOT
from tests.policy import fixtures as F

BROKEN = ROOT / "tests" / "fixtures" / "broken_stacks"


class Engine(engine_pb2_grpc.EngineServicer):
    def __init__(self):
        self.logs = []

    def Log(self, request, context):
        self.logs.append((request.severity, request.message))
        return empty_pb2.Empty()

    def GetRootResource(self, request, context):
        from pulumi.runtime.proto import engine_pb2

        return engine_pb2.GetRootResourceResponse(urn="")

    def SetRootResource(self, request, context):
        from pulumi.runtime.proto import engine_pb2

        return engine_pb2.SetRootResourceResponse()


@pytest.fixture(scope="module")
def analyzer():
    engine = Engine()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    engine_pb2_grpc.add_EngineServicer_to_server(engine, server)
    engine_port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    env = dict(
        os.environ,
        PULUMI_PROJECT="gpufleet",
        PULUMI_STACK="dev",
        PULUMI_DRY_RUN="true",
        PULUMI_CONFIG=json.dumps({"gpufleet:cluster": "{}"}),
    )
    proc = subprocess.Popen(
        [sys.executable, "-u", "-m", "pulumi.policy", f"127.0.0.1:{engine_port}", "."],
        cwd=ROOT / "policies",
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        line: list[bytes] = []
        reader = threading.Thread(target=lambda: line.append(proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(timeout=60)
        if not line or not line[0].strip().isdigit():
            proc.kill()
            pytest.fail(f"pack did not print its port: {line!r}\nstderr: {proc.stderr.read().decode()[-2000:]}")
        channel = grpc.insecure_channel(f"127.0.0.1:{int(line[0])}")
        grpc.channel_ready_future(channel).result(timeout=30)
        engine.channel = channel  # for tests that send raw bytes (test_request_depth.py)
        yield analyzer_pb2_grpc.AnalyzerStub(channel), engine
        channel.close()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        server.stop(0)


def over_grpc(stub, resources: list[Registration], config: dict | None = None) -> list:
    stub.Configure(configure_request(config))
    diagnostics = []
    for r in resources:
        diagnostics += stub.Analyze(analyze_request(r)).diagnostics
    diagnostics += stub.AnalyzeStack(stack_request(resources)).diagnostics
    return sorted(diagnostics_to_violations(diagnostics), key=lambda v: (v.level != "mandatory", v.policy, v.urn, v.message))


def as_dicts(violations) -> list[dict]:
    return sorted(
        ({"policy": v.policy, "level": v.level, "urn": v.urn, "message": v.message} for v in violations),
        key=lambda v: (v["level"] != "mandatory", v["policy"], v["urn"], v["message"]),
    )


def test_analyzer_info_lists_every_policy_with_its_level(analyzer):
    stub, _ = analyzer
    info = stub.GetAnalyzerInfo(empty_pb2.Empty())
    assert (info.name, info.version, info.supportsConfig) == (PACK_NAME, PACK_VERSION, True)
    got = {p.name: p.enforcementLevel for p in info.policies}
    assert got == {
        p.name: (analyzer_pb2.ADVISORY if p.enforcement_level.value == "advisory" else analyzer_pb2.MANDATORY) for p in POLICIES
    }
    assert "exemptions" in info.policies[0].configSchema.properties
    assert stub.GetPluginInfo(empty_pb2.Empty()).version


def plan_json(stack: str, config: Path | None = None) -> tuple[int, dict]:
    cmd = [sys.executable, "-m", "gpufleet.app.cli", "plan", stack, "--format", "json"]
    if config:
        cmd += ["--config", str(config)]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
    return done.returncode, json.loads(done.stdout)


@pytest.mark.parametrize("stack,config", [("dev", None), ("broken", BROKEN / "operator-driver-branch-550-on-v26.7.0.yaml"), ("broken", BROKEN / "cuda-13.0-on-preinstalled-575.yaml")])
def test_whole_plan_over_grpc_matches_gpufleet_plan(analyzer, stack, config):
    stub, engine = analyzer
    code, plan = plan_json(stack, config)
    resources = [
        Registration(
            urn=r["urn"], type=r["type"], name=r["name"], parent=r["parent"], custom=True, inputs=r["inputs"],
            protect=r["options"]["protect"], ignore_changes=r["options"]["ignoreChanges"],
        )
        for r in plan["resources"]
    ]
    assert len(resources) > 10
    got = as_dicts(over_grpc(stub, resources))
    assert got == as_dicts(F_violations(plan))
    assert (code == 1) == any(v["level"] == "mandatory" for v in got)
    if config:
        assert got, "a broken stack must produce violations"
    assert [m for sev, m in engine.logs if sev >= 3] == []  # no errors logged by the pack


def F_violations(plan: dict):
    from gpufleet.app.plan.policy_runner import Violation

    return [Violation(**v) for v in plan["violations"]]


def test_fixture_stack_over_grpc_matches_in_process_with_config(analyzer):
    """Configure's levels and properties behave the same over the wire: a lowered level, an exemption."""
    stub, _ = analyzer
    resources = [
        F.res("aws:eks/nodeGroup:NodeGroup", "h100", F.with_(F.SPOT_NODE_GROUP_IN, "scalingConfig.minSize", 2.0)),
        F.res("aws:eks/cluster:Cluster", "prod", F.with_(F.EKS_CLUSTER_IN, "vpcConfig.publicAccessCidrs", ["0.0.0.0/0"])),
        F.res("kubernetes:helm.sh/v3:Release", "gpu-operator", F.OPERATOR_IN),
    ]
    config = {"secure-defaults": {"enforcementLevel": "advisory"}, "gpu-pool-taint": {"exemptions": {"h100": "test"}}}
    wire = as_dicts(over_grpc(stub, resources, config))
    assert wire == as_dicts(evaluate(resources, stack="dev", config=config))
    assert {(v["policy"], v["level"]) for v in wire} == {
        ("gpu-pool-scale-to-zero", "mandatory"),
        ("gpu-operator-driver-conflict", "mandatory"),
        ("secure-defaults", "advisory"),
        ("gpu-observability", "advisory"),  # GPU pools and no metrics pipeline in this fixture stack
    }


def test_inline_gpu_pools_over_grpc_match_in_process(analyzer):
    """GPU pools declared inline in clusters (issue 50) reach the pack's server as nested maps of the cluster's Struct:
    the same findings, on the cluster, naming the pool, as in process; an exemption by the inline pool's name."""
    from tests.policy.test_inline_pools import BAD, INLINE_NODE_POOL_IN, aks, aks_classic, gke

    stub, _ = analyzer
    other = {**BAD, "name": "h200", "nodeTaints": []}
    resources = aks(BAD, other) + aks_classic()[:1] + gke(F.with_(INLINE_NODE_POOL_IN, "autoscaling.minNodeCount", 1.0))[:1]
    resources[-2] = F.res(resources[-2].type, "classic", resources[-2].inputs)
    resources[-1] = F.res(resources[-1].type, "gke", resources[-1].inputs)
    config = {"gpu-pool-scale-to-zero": {"exemptions": {"prod/agentPoolProfiles[1] (h100)": "always-on"}}}
    wire = as_dicts(over_grpc(stub, resources, config))
    assert wire == as_dicts(evaluate(resources, stack="dev", config=config))
    pools = {(v["policy"], v["urn"].rsplit("::", 1)[-1], v["message"].split("\n")[-1].split("'")[1]) for v in wire
             if v["policy"] in ("gpu-pool-scale-to-zero", "gpu-pool-taint")}
    assert pools == {("gpu-pool-scale-to-zero", "prod", "prod/agentPoolProfiles[2] (h200)"),
                     ("gpu-pool-taint", "prod", "prod/agentPoolProfiles[2] (h200)"),
                     ("gpu-pool-taint", "classic", "classic/defaultNodePool (h100)"),
                     ("gpu-pool-scale-to-zero", "gke", "gke/nodePools[1] (h100)")}


def test_remediate_and_the_analyze_after_it_answer_as_upstream(analyzer):
    """The engine calls Remediate on every resource, then Analyze on the same resource (pulumi/pulumi
    pkg/resource/deploy/step_generator.go). With no policy at the remediate level the pack answers
    Remediate with upstream's empty response and works the Analyze out after that answer has gone
    (policies/servicer.py `Remediate`); whatever Analyze then receives (the same resource, the same one
    without the internal `__` keys only Remediate carries, another resource) is answered exactly as
    pulumi_policy's own servicer answers it. Once Configure puts a policy at the remediate level,
    Remediate takes upstream's path and answers what upstream answers."""
    from gpufleet.policies.pack import upstream_servicer

    stub, _ = analyzer
    local = upstream_servicer()
    local.Configure(configure_request(), None)
    stub.Configure(configure_request())
    untainted = analyze_request(F.res("aws:eks/nodeGroup:NodeGroup", "h100", F.with_(F.NODE_GROUP_IN, "taints", [])))
    other = analyze_request(F.res("aws:eks/nodeGroup:NodeGroup", "a100", F.NODE_GROUP_IN))
    with_internal = analyzer_pb2.AnalyzeRequest()
    with_internal.CopyFrom(untainted)
    with_internal.properties.fields["__defaults"].list_value.SetInParent()
    for remediated, analyzed in [(untainted, untainted), (with_internal, untainted), (untainted, other), (other, untainted)]:
        assert stub.Remediate(remediated) == analyzer_pb2.RemediateResponse() == local.Remediate(remediated, None)
        answer = stub.Analyze(analyzed)
        assert answer == local.Analyze(analyzed, None)
    assert "gpu-pool-taint" in {d.policyName for d in stub.Analyze(untainted).diagnostics}  # the comparison judged a verdict
    config = {"gpu-pool-taint": {"enforcementLevel": "remediate"}}
    try:
        stub.Configure(configure_request(config))
        served = stub.Remediate(untainted)
        upstream = upstream_servicer()
        upstream.Configure(configure_request(config), None)
        assert served == upstream.Remediate(untainted, None)
        assert [n.policy_name for n in served.not_applicable] == ["gpu-pool-taint"]
        assert stub.Analyze(untainted) == upstream.Analyze(untainted, None)
    finally:
        stub.Configure(configure_request())
