"""Policy throughput on a 5,000-resource synthetic plan, in process and over the pack's gRPC server.

    .venv/bin/python bench/policy.py [--resources 5000]

The plan mixes what the rules look at (EKS/GKE GPU pools, launch templates, clusters, Helm releases,
ConfigMaps) with resources no rule reads. Prints resources/s for Analyze (every resource) plus one
AnalyzeStack, for each runner. A figure, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import grpc  # noqa: E402

from gpufleet.plan.policy_runner import analyze_request, configure_request, stack_request  # noqa: E402
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
    """Wall-clock seconds for Configure, every Analyze and one AnalyzeStack (and the diagnostics count)."""
    start = time.perf_counter()
    analyzer.Configure(configure_request())
    count = 0
    for r in resources:
        count += len(analyzer.Analyze(analyze_request(r)).diagnostics)
    count += len(analyzer.AnalyzeStack(stack_request(resources)).diagnostics)
    return time.perf_counter() - start, count


class InProcess:
    def __init__(self):
        self.s = servicer()

    def Configure(self, req):
        return self.s.Configure(req, None)

    def Analyze(self, req):
        return self.s.Analyze(req, None)

    def AnalyzeStack(self, req):
        return self.s.AnalyzeStack(req, None)


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
    channel = grpc.insecure_channel(f"127.0.0.1:{int(line[0])}", options=[("grpc.max_receive_message_length", 256 << 20), ("grpc.max_send_message_length", 256 << 20)])
    grpc.channel_ready_future(channel).result(timeout=30)
    return proc, channel, analyzer_pb2_grpc.AnalyzerStub(channel)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--resources", type=int, default=5000)
    n = p.parse_args().resources
    resources = synthetic(n)
    results = {}
    run(InProcess(), synthetic(len(KINDS) + len(SINGLETONS)))  # warm-up: the catalog loads on first use
    cpu = time.process_time()
    seconds, diags = run(InProcess(), resources)
    cpu = time.process_time() - cpu
    results["in-process"] = (seconds, diags)
    proc, channel, stub = start_pack()
    try:
        seconds, diags = run(stub, resources)
        results["grpc"] = (seconds, diags)
    finally:
        channel.close()
        proc.terminate()
        proc.wait(timeout=10)
    print(f"policy throughput on a {n:,}-resource synthetic plan ({len(KINDS) + len(SINGLETONS)} resource kinds, {n} Analyze + 1 AnalyzeStack)")
    for name, (seconds, diags) in results.items():
        print(f"  {name:<11} {seconds:7.2f} s   {n / seconds:9,.0f} resources/s   {diags} diagnostics")
    # On a busy machine wall time says little: CPU seconds of the in-process run are what one core needs.
    print(f"  in-process CPU {cpu:.2f} s = {n / cpu:,.0f} resources per CPU-second; load average {os.getloadavg()[0]:.1f}")
    print(json.dumps({k: {"seconds": round(s, 3), "resourcesPerSecond": round(n / s)} for k, (s, _) in results.items()}))


if __name__ == "__main__":
    main()
