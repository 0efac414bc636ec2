"""Benchmark: wall time, peak memory and imported modules of `gpufleet plan` per stack.

Each measurement runs in a fresh subprocess (so import cost and peak RSS are those a user sees):
every example stack in stacks/, synthetic k3s stacks with 10, 100 and 500 GPU agents, a synthetic
EKS stack with 50 GPU pools (the prod-eks stack's cluster with 50 pools of four GPU shapes), and a synthetic
Karpenter stack with 50 NodePools (the karpenter-eks stack's cluster; spot, on-demand, capacity-block and EFA
shapes).
Prints figures; asserts nothing about speed (not a timed test).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
PROBE = r"""
import io, json, resource, sys, time
from contextlib import redirect_stdout
start = time.perf_counter()
from gpufleet.app import cli
with redirect_stdout(io.StringIO()):
    code = cli.main(["plan", sys.argv[1], "--format", "json"] + sys.argv[2:])
elapsed = time.perf_counter() - start
print(json.dumps({
    "code": code, "seconds": elapsed, "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "modules": len(sys.modules), "aws": "pulumi_aws" in sys.modules, "gcp": "pulumi_gcp" in sys.modules,
}))
"""


def synthetic_k3s(agents: int) -> dict:
    """One server and `agents` GPU hosts spread over pools of up to 50 hosts each."""
    def address(i: int) -> str:
        return f"10.{i // 65536}.{(i // 256) % 256}.{i % 256}"

    pools, i = [], 1
    for p in range((agents + 49) // 50):
        size = min(50, agents - p * 50)
        hosts = [{"name": f"gpu-{i + j}", "address": address(i + j)} for j in range(size)]
        i += size
        pools.append({"name": f"pool-{p}", "gpu": "H100-80GB", "gpusPerNode": 8, "pricePerNodeHour": 24.0, "hosts": hosts})
    return {"config": {
        "gpufleet:cluster": {"platform": "k3s", "k3s": {"servers": [{"name": "cp-1", "address": "10.255.0.1"}]}},
        "gpufleet:nodePools": pools,
        "gpufleet:sshPrivateKey": {"secure": "v1:placeholder"},
    }}


EKS_SHAPES = [
    {"instanceTypes": ["g6.xlarge", "g6.2xlarge"], "capacity": "spot"},
    {"instanceType": "g6e.12xlarge", "capacity": "on-demand"},
    {"instanceType": "p5.48xlarge", "capacity": "spot", "rdma": True, "availabilityZone": "us-east-1a"},
    {"instanceType": "p4d.24xlarge", "capacity": "on-demand", "rdma": True, "availabilityZone": "us-east-1b"},
]


def synthetic_eks(pools: int) -> dict:
    doc = yaml.safe_load((ROOT / "stacks" / "Pulumi.prod-eks.yaml").read_text())
    doc["config"]["gpufleet:nodePools"] = [
        {"name": f"pool-{i:03d}", "minNodes": 0, "maxNodes": 4, **EKS_SHAPES[i % len(EKS_SHAPES)]} for i in range(pools)
    ]
    return doc


KARPENTER_SHAPES = [
    {"instanceTypes": ["g6.xlarge", "g6.2xlarge", "g6.4xlarge", "gr6.4xlarge"], "capacity": "spot"},
    {"instanceType": "g6e.12xlarge", "capacity": "on-demand"},
    {"instanceType": "p5.48xlarge", "capacity": "reserved", "rdma": True, "maxNodes": 2,
     "reservation": {"type": "capacity-block", "id": "cr-0123456789abcdef0", "zone": "us-east-1b", "instanceCount": 2}},
    {"instanceType": "p4d.24xlarge", "capacity": "spot", "rdma": True, "availabilityZone": "us-east-1a"},
]


def synthetic_karpenter(pools: int) -> dict:
    doc = yaml.safe_load((ROOT / "stacks" / "Pulumi.karpenter-eks.yaml").read_text())
    doc["config"]["gpufleet:nodePools"] = [
        {"name": f"pool-{i:03d}", "maxNodes": 4, **KARPENTER_SHAPES[i % len(KARPENTER_SHAPES)]} for i in range(pools)
    ]
    return doc


def measure(stack: str, extra: list[str]) -> dict:
    run = subprocess.run([sys.executable, "-c", PROBE, stack, *extra], capture_output=True, text=True, cwd=ROOT)
    if run.returncode != 0:
        raise SystemExit(f"{stack}: probe failed\n{run.stderr}")
    return json.loads(run.stdout.splitlines()[-1])


def main() -> None:
    rows = []
    for path in sorted((ROOT / "stacks").glob("Pulumi.*.yaml")):
        stack = path.name[len("Pulumi."):-len(".yaml")]
        rows.append((stack, measure(stack, [])))
    with tempfile.TemporaryDirectory() as tmp:
        for agents in (10, 100, 500):
            file = Path(tmp) / f"Pulumi.k3s-{agents}.yaml"
            file.write_text(yaml.safe_dump(synthetic_k3s(agents)))
            rows.append((f"k3s-{agents}-gpu-agents", measure(f"k3s-{agents}", ["--config", str(file)])))
        file = Path(tmp) / "Pulumi.eks-50.yaml"
        file.write_text(yaml.safe_dump(synthetic_eks(50)))
        rows.append(("eks-50-gpu-pools", measure("eks-50", ["--config", str(file)])))
        file = Path(tmp) / "Pulumi.karpenter-50.yaml"
        file.write_text(yaml.safe_dump(synthetic_karpenter(50)))
        rows.append(("karpenter-50-nodepools", measure("karpenter-50", ["--config", str(file)])))
    print(f"{'stack':<24} {'exit':>4} {'seconds':>8} {'peak MiB':>9} {'modules':>8}  cloud SDKs")
    for stack, m in rows:
        sdks = ",".join(n for n in ("aws", "gcp") if m[n]) or "-"
        print(f"{stack:<24} {m['code']:>4} {m['seconds']:>8.2f} {m['peak_mib']:>9.1f} {m['modules']:>8}  {sdks}")


if __name__ == "__main__":
    main()
