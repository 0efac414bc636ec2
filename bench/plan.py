"""Benchmark: wall time, peak memory and imported modules of `gpufleet plan` per stack, and its overhead over
the Pulumi SDK floor.

    .venv/bin/python bench/plan.py [--floor-only] [--runs 7]
    .venv/bin/python bench/plan.py --profile STACK

Each measurement runs in a fresh subprocess (so import cost and peak RSS are those a user sees):
every example stack in stacks/, synthetic k3s stacks with 10, 100 and 500 GPU agents, a synthetic
EKS stack with 50 GPU pools (the prod-eks stack's cluster with 50 pools of four GPU shapes), and a synthetic
Karpenter stack with 50 NodePools (the karpenter-eks stack's cluster; spot, on-demand, capacity-block and EFA
shapes).

The floor: what the Pulumi SDK alone costs for the same resources. A fresh interpreter imports the Pulumi SDK
modules the plan imported (`pulumi*` in its sys.modules) and registers every resource the plan registered, in the
same order, with the same type, name, parent and inputs, through the SDK's generic CustomResource,
ComponentResource and ProviderResource, under plain mocks (Pulumi's MockMonitor; the mocks echo the inputs). No
spec, no components, no policies, no cost, no rendering: everything `gpufleet plan STACK --format json` does beyond
that (including the policy evaluation) is its overhead. Each figure is the whole process, interpreter start
included, the best of `--runs` runs (the machine is shared: the best run is the least disturbed); the ratio is
`plan CPU / floor CPU` (user + system seconds), which a busy neighbour moves less than wall time.
`--profile STACK` prints where one in-process plan spends its time (pyinstrument, from the dev extra).
Prints figures; asserts nothing about speed (not a timed test).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
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


# Records what a plan registers, for the floor: type, name, parent, inputs, and the Pulumi SDK modules it imported.
RECORD = r"""
import json, sys
from gpufleet.app.plan.engine import register
from gpufleet.app.plan.stackfile import read_stack_file, stack_path
from pathlib import Path
stack, config, out = sys.argv[1], sys.argv[2], sys.argv[3]
sf = read_stack_file(stack, Path(config) if config else stack_path(Path.cwd(), stack))
spec, monitor = register(sf)
modules = sorted(m for m in sys.modules if m.split(".")[0].startswith("pulumi") and not m.startswith("pulumi_policy"))
resources = [{"urn": r.urn, "type": r.type, "name": r.name, "parent": r.parent, "custom": r.custom,
              "inputs": r.inputs} for r in monitor.registrations if r.type != "pulumi:pulumi:Stack"]
Path(out).write_text(json.dumps({"stack": stack, "modules": modules, "resources": resources}))
"""

# The floor: the same registrations straight through the SDK under plain mocks.
FLOOR = r"""
import importlib, json, sys
data = json.load(open(sys.argv[1]))
for name in data["modules"]:
    try:
        importlib.import_module(name)
    except Exception:
        pass  # a module the plan's interpreter had but that imports only as a side effect of another
import pulumi
from pulumi.runtime import settings
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

class Echo(pulumi.runtime.Mocks):
    def new_resource(self, args):
        return args.name + "_id", args.inputs
    def call(self, args):
        return {}

def program():
    made = {}
    for r in data["resources"]:
        opts = pulumi.ResourceOptions(parent=made.get(r["parent"]))
        if r["type"].startswith("pulumi:providers:"):
            made[r["urn"]] = pulumi.ProviderResource(r["type"].split(":")[2], r["name"], r["inputs"], opts)
        elif r["custom"]:
            made[r["urn"]] = pulumi.CustomResource(r["type"], r["name"], r["inputs"], opts)
        else:
            made[r["urn"]] = pulumi.ComponentResource(r["type"], r["name"], None, opts)

settings.ROOT.set(None)
pulumi.runtime.set_mocks(Echo(), project="gpufleet", stack=data["stack"], preview=False)
_sync_await(run_pulumi_func(program))
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


def timed(argv: list[str]) -> tuple[float, float]:
    """Wall time and CPU time (user + system) of one fresh interpreter running `argv` (exit status checked)."""
    before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    run = subprocess.run([sys.executable, *argv], capture_output=True, text=True, cwd=ROOT)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if run.returncode not in (0, 1):
        raise SystemExit(f"{argv[:3]}: failed\n{run.stderr}")
    return time.perf_counter() - start, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def best_of(argvs: list[list[str]], runs: int) -> list[tuple[float, float]]:
    """The best wall and CPU time of each command over `runs` rounds, the commands taking turns within a round so that
    a disturbance of the shared machine falls on both sides alike."""
    best = [(float("inf"), float("inf"))] * len(argvs)
    for _ in range(runs):
        for i, argv in enumerate(argvs):
            wall, cpu = timed(argv)
            best[i] = (min(best[i][0], wall), min(best[i][1], cpu))
    return best


def floor_rows(runs: int) -> None:
    """Per example stack: the plan's wall time, the SDK floor's, and their ratio."""
    print(f"{'stack':<16} {'resources':>9} {'plan wall':>9} {'floor wall':>10} {'plan CPU':>8} {'floor CPU':>9} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        for path in sorted((ROOT / "stacks").glob("Pulumi.*.yaml")):
            stack = path.name[len("Pulumi."):-len(".yaml")]
            record = Path(tmp) / f"{stack}.json"
            subprocess.run([sys.executable, "-c", RECORD, stack, "", str(record)], check=True, cwd=ROOT,
                           capture_output=True)
            count = len(json.loads(record.read_text())["resources"])
            plan, floor = best_of([["-m", "gpufleet.app.cli", "plan", stack, "--format", "json"],
                                   ["-c", FLOOR, str(record)]], runs)
            print(f"{stack:<16} {count:>9} {plan[0]:>9.2f} {floor[0]:>10.2f} {plan[1]:>8.2f} {floor[1]:>9.2f} "
                  f"{plan[1] / floor[1]:>6.2f}", flush=True)


def profile(stack: str) -> None:
    from pyinstrument import Profiler

    from gpufleet.app import cli

    profiler = Profiler(interval=0.0005)
    profiler.start()
    cli.main(["plan", stack, "--format", "json", "--output", "/dev/null"])
    profiler.stop()
    print(profiler.output_text(unicode=False, color=False, show_all=False))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", metavar="STACK", help="where one plan of STACK spends its time")
    parser.add_argument("--floor-only", action="store_true", help="only the plan / SDK floor table")
    parser.add_argument("--runs", type=int, default=7, help="runs per figure of the floor table (the best counts)")
    args = parser.parse_args()
    if args.profile:
        return profile(args.profile)
    floor_rows(args.runs)
    if args.floor_only:
        return
    print()
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
