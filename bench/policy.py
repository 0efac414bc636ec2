"""Policy throughput on a 5,000-resource synthetic plan, in process and over the pack's gRPC server.

    .venv/bin/python bench/policy.py [--resources 5000] [--profile]

`--profile` prints where one run of gpufleet plan's path spends its time (pyinstrument, from the dev extra) instead.

Over gRPC it runs two clients against the pack server, one after the other: this Python process (the
generated grpcio stub), and, when a Go toolchain is on PATH, `bench/engine_client` (built once into
~/.cache/gpufleet-bench), which sends the same requests through the generated Go client the Pulumi engine
itself uses. The engine is a Go program, so the second line is what `pulumi preview` waits for; a Python
client adds its own per-call cost to the wall time.

In process it runs two paths: `in-process` is what `gpufleet plan` runs (policy_runner.evaluate, the
servicer reading the registrations' plain inputs); `in-process-protobuf` feeds the same servicer the
engine's protobuf requests, built here, with no transport between (what the pack itself costs per call
under `pulumi preview`, less gRPC).

The plan mixes what the rules look at (EKS/GKE GPU pools, launch templates, clusters, Helm releases,
ConfigMaps) with resources no rule reads. Prints resources/s for a whole stack analysis, for each runner,
twice: by wall time, and by CPU seconds (time.process_time of this process; for gRPC also the pack server's
own CPU from /proc/<pid>/stat). Building the requests (what the engine does for the pack) is counted in
both. On a shared machine wall time depends on what else runs; CPU seconds say what the evaluation costs.
A figure, not a test.

The calls are the ones the Pulumi engine makes (pulumi/pulumi at 1b5949891b, v3.259.0+14):
- for each resource, one after the other, `Remediate` then `Analyze` with the same resource
  (pkg/resource/deploy/step_generator.go: "First pass: perform remediations sequentially", then
  "Second pass" `analyzeAll`, which runs the analyzers (packs) of one resource in parallel, not
  resources); registrations reach the step generator one event at a time
  (pkg/resource/deploy/deployment_executor.go, `handleSingleEvent` in one loop). Each is a unary call
  (pkg/resource/plugin/analyzer_plugin.go); `GetAnalyzerInfo` is cached there after the first call;
- then one `AnalyzeStack` with every resource (step_generator.go `AnalyzeResources`).
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import grpc  # noqa: E402

from gpufleet.app.plan.policy_runner import analyze_request, configure_request, evaluate, stack_request  # noqa: E402
from gpufleet.policies.pack import servicer  # noqa: E402
from tests.policy import fixtures as F  # noqa: E402

# One control plane, one GPU Operator and one autoscaler, as in a real stack; the rest repeats.
SINGLETONS = [
    ("aws:eks/cluster:Cluster", F.EKS_CLUSTER_IN),
    ("kubernetes:helm.sh/v3:Release", F.OPERATOR_IN),
    ("kubernetes:helm.sh/v3:Release", F.AUTOSCALER_IN),
    ("kubernetes:core/v1:Namespace", F.namespace({"gpufleet.io/cuda-versions": "12.8"})),
]
KINDS = [
    ("aws:eks/nodeGroup:NodeGroup", F.NODE_GROUP_IN),
    ("aws:eks/nodeGroup:NodeGroup", F.SPOT_NODE_GROUP_IN),
    ("aws:ec2/launchTemplate:LaunchTemplate", F.LAUNCH_TEMPLATE_IN),
    ("gcp:container/nodePool:NodePool", F.NODE_POOL_IN),
    ("kubernetes:core/v1:ConfigMap", F.device_plugin_config_map("version: v1\nsharing: {timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: 4}]}}\n")),
    ("command:remote:Command", F.K3S_COMMAND_IN),
    ("aws:iam/role:Role", {"assumeRolePolicy": "{}", "tags": {"team": "ml"}}),
    ("aws:ec2/securityGroup:SecurityGroup", {"vpcId": "vpc-1", "ingress": [{"self": True, "protocol": "-1"}]}),
]


def synthetic(n: int) -> list:
    out = [F.res(t, f"s{i}", inputs) for i, (t, inputs) in enumerate(SINGLETONS)]
    return out + [F.res(KINDS[i % len(KINDS)][0], f"r{i}", KINDS[i % len(KINDS)][1]) for i in range(n - len(out))]


def run(analyzer, resources) -> tuple[float, int]:
    """Wall-clock seconds for Configure, Remediate and Analyze of every resource in turn (as the engine
    calls them) and one AnalyzeStack (and the diagnostics count)."""
    start = time.perf_counter()
    analyzer.Configure(configure_request())
    count = 0
    for r in resources:
        request = analyze_request(r)
        analyzer.Remediate(request)
        count += len(analyzer.Analyze(request).diagnostics)
    count += len(analyzer.AnalyzeStack(stack_request(resources)).diagnostics)
    return time.perf_counter() - start, count


def run_plan_path(resources) -> tuple[float, int]:
    """Wall-clock seconds for what `gpufleet plan` runs (gpufleet.app.plan.policy_runner.evaluate: Configure,
    each resource's Analyze, one AnalyzeStack, on the registrations' plain inputs), and the violations count."""
    start = time.perf_counter()
    found = evaluate(resources, stack="bench")
    return time.perf_counter() - start, len(found)


class InProcess:
    def __init__(self):
        self.s = servicer()

    def Configure(self, req):
        return self.s.Configure(req, None)

    def Remediate(self, req):
        return self.s.Remediate(req, None)

    def Analyze(self, req):
        return self.s.Analyze(req, None)

    def AnalyzeStack(self, req):
        return self.s.AnalyzeStack(req, None)


class EngineLikeStub:
    """The generated stub, with `Remediate` handled as the engine handles it: UNIMPLEMENTED is an empty
    answer (pkg/resource/plugin/analyzer_plugin.go `Remediate`)."""

    def __init__(self, stub):
        self.stub = stub
        self.Configure, self.Analyze, self.AnalyzeStack = stub.Configure, stub.Analyze, stub.AnalyzeStack

    def Remediate(self, req):
        from pulumi.runtime.proto import analyzer_pb2

        try:
            return self.stub.Remediate(req)
        except grpc.RpcError as e:
            if e.code() != grpc.StatusCode.UNIMPLEMENTED:
                raise
            return analyzer_pb2.RemediateResponse()


def start_pack():
    from pulumi.runtime.proto import analyzer_pb2_grpc

    env = dict(os.environ, PULUMI_PROJECT="gpufleet", PULUMI_STACK="bench", PULUMI_DRY_RUN="true", PULUMI_CONFIG="{}")
    proc = subprocess.Popen(
        [sys.executable, "-u", "-m", "pulumi.policy", "127.0.0.1:1", "."],
        cwd=ROOT / "policies", env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )
    line: list[bytes] = []
    t = threading.Thread(target=lambda: line.append(proc.stdout.readline()), daemon=True)
    t.start()
    t.join(60)
    if not line or not line[0].strip().isdigit():
        proc.kill()
        raise SystemExit("policy pack did not start")
    port = int(line[0])
    channel = grpc.insecure_channel(f"127.0.0.1:{port}", options=[("grpc.max_receive_message_length", 256 << 20), ("grpc.max_send_message_length", 256 << 20)])
    grpc.channel_ready_future(channel).result(timeout=30)
    return proc, channel, analyzer_pb2_grpc.AnalyzerStub(channel), port


def machine_speed() -> float:
    """Seconds for a fixed pure-Python loop (best of 3): the same code's figures from two runs compare only
    as far as this does (a shared VM's speed changes from day to day)."""
    def loop() -> float:
        start = time.perf_counter()
        table: dict = {}
        for i in range(1_000_000):
            table[i & 1023] = table.get(i & 511, 0) + i
        return time.perf_counter() - start

    return min(loop() for _ in range(3))


def engine_client() -> Path | None:
    """bench/engine_client built (once per source hash) into ~/.cache/gpufleet-bench, or None without Go."""
    go = shutil.which("go")
    if go is None:
        return None
    src = ROOT / "bench" / "engine_client"
    digest = hashlib.sha256(b"".join((src / f).read_bytes() for f in ("go.mod", "go.sum", "main.go"))).hexdigest()[:16]
    binary = Path.home() / ".cache" / "gpufleet-bench" / f"engine_client-{digest}"
    if not binary.exists():
        binary.parent.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ, GOTOOLCHAIN=os.environ.get("GOTOOLCHAIN", "local"), GOFLAGS="-buildvcs=false -trimpath")
        subprocess.run([go, "build", "-o", str(binary), "."], cwd=src, env=env, check=True)
    return binary


def engine_requests(resources, path: Path) -> None:
    """What engine_client sends, length-prefixed: Configure, every resource's AnalyzeRequest, AnalyzeStack."""
    with path.open("wb") as out:
        for message in [configure_request(), *(analyze_request(r) for r in resources), stack_request(resources)]:
            data = message.SerializeToString()
            out.write(struct.pack(">I", len(data)) + data)


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system) a process has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def profile(resources) -> None:
    """One in-process run of gpufleet plan's path under pyinstrument (after the warm-up), as a call tree."""
    from pyinstrument import Profiler

    run_plan_path(synthetic(len(KINDS) + len(SINGLETONS)))
    profiler = Profiler(interval=0.0005)
    profiler.start()
    run_plan_path(resources)
    profiler.stop()
    print(profiler.output_text(unicode=False, color=False))


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--resources", type=int, default=5000)
    p.add_argument("--repeat", type=int, default=3, help="in-process runs; the one with the least CPU is reported")
    p.add_argument("--profile", action="store_true", help="print a pyinstrument profile of one in-process run, then stop")
    args = p.parse_args()
    n = args.resources
    resources = synthetic(n)
    if args.profile:
        profile(resources)
        return
    results = {}
    load = os.getloadavg()[0]
    speed = machine_speed()
    run(InProcess(), synthetic(len(KINDS) + len(SINGLETONS)))  # warm-up: the catalog loads on first use
    for attempt in range(args.repeat):  # the best of a few: on a shared machine a run is only ever slowed down
        for name, runner in (("in-process", run_plan_path), ("in-process-protobuf", lambda rs: run(InProcess(), rs))):
            resources = synthetic(n)  # fresh registrations: nothing cached from the previous run
            gc.collect()  # not the previous run's garbage
            cpu = time.process_time()
            seconds, diags = runner(resources)
            cpu = time.process_time() - cpu
            if name not in results or cpu < results[name][1]:
                results[name] = (seconds, cpu, diags)
    proc, channel, stub, port = start_pack()
    stub = EngineLikeStub(stub)
    go_client = engine_client()
    try:
        run(stub, synthetic(len(KINDS) + len(SINGLETONS)))  # the server's warm-up too
        resources = synthetic(n)  # fresh registrations: nothing cached from the in-process run
        gc.collect()
        cpu, server = time.process_time(), process_cpu(proc.pid)
        seconds, diags = run(stub, resources)
        client, server = time.process_time() - cpu, process_cpu(proc.pid) - server
        results["grpc"] = (seconds, client + server, diags)
        servers = {"grpc": server}
        if go_client is not None:
            requests = Path(os.environ.get("TMPDIR", "/tmp")) / f"gpufleet-bench-requests-{os.getpid()}.bin"
            try:
                # A fresh pack server's view: restart it so nothing is cached from the Python client's run.
                channel.close()
                proc.terminate()
                proc.wait(timeout=10)
                proc, channel, stub, port = start_pack()
                stub = EngineLikeStub(stub)
                run(stub, synthetic(len(KINDS) + len(SINGLETONS)))
                engine_requests(synthetic(n), requests)
                server = process_cpu(proc.pid)
                done = subprocess.run([str(go_client), str(port), str(requests)], capture_output=True, text=True, check=True)
                server = process_cpu(proc.pid) - server
                answer = json.loads(done.stdout)
                results["grpc-engine"] = (answer["seconds"], server, answer["diagnostics"])
                servers["grpc-engine"] = server
            finally:
                requests.unlink(missing_ok=True)
    finally:
        channel.close()
        proc.terminate()
        proc.wait(timeout=10)
    print(f"policy throughput on a {n:,}-resource synthetic plan ({len(KINDS) + len(SINGLETONS)} resource kinds, {n} Analyze + 1 AnalyzeStack, "
          f"and {n} Remediate but on gpufleet plan's path; in process: best of {args.repeat} runs)")
    print(f"  load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end (2 cores: wall time is shared); "
          f"reference loop {speed * 1000:.0f} ms (machine speed: compare runs only as far as this agrees)")
    who = {"in-process": "this process: gpufleet plan's path, plain inputs",
           "in-process-protobuf": "this process: the engine's protobuf requests, no transport",
           "grpc": "Python client + pack server", "grpc-engine": "pack server; Go client not counted"}
    for name, (seconds, cpu, diags) in results.items():
        print(f"  {name:<19} wall {seconds:6.2f} s = {n / seconds:7,.0f} resources/s   CPU {cpu:6.2f} s = "
              f"{n / cpu:7,.0f} resources per CPU-second ({who[name]})   {diags} diagnostics")
    # The Pulumi engine (Go) is the real client: the pack's own cost is its server's CPU.
    for name, server in servers.items():
        print(f"  {name} pack server alone: CPU {server:.2f} s = {n / server:,.0f} resources per CPU-second")
    if "grpc-engine" not in results:
        print("  (no Go toolchain on PATH: the engine-side client did not run)")
    print(json.dumps({"referenceLoopSeconds": round(speed, 4)} | {k: {"seconds": round(s, 3), "resourcesPerSecond": round(n / s), "cpuSeconds": round(c, 3),
                          "resourcesPerCpuSecond": round(n / c)} for k, (s, c, _) in results.items()}))


if __name__ == "__main__":
    main()
