"""Benchmark: `gpufleet plan` per example stack against the Pulumi SDK floor, then wall time, peak memory and
imported modules per stack and for synthetic stacks.

    .venv/bin/python bench/plan.py [--runs N] [--floor-only] [STACK ...]   # both tables (--floor-only: the first)
    .venv/bin/python bench/plan.py --profile STACK                         # where one plan of STACK spends its time

The first table, plan overhead against the SDK floor, per example stack in stacks/ (or the STACKs named):
- plan: a fresh interpreter running `python -m gpufleet.app.cli plan STACK --format json` (stdout to a pipe), nothing
  subtracted: the interpreter's start, every import, reading and validating the stack file, the program under
  gpufleet's mocks, the policy pack, capacity and cost, rendering the JSON, the exit.
- floor: a fresh interpreter running a plain Python program that registers the very same resources straight
  through the Pulumi SDK, and nothing of gpufleet (no spec, no components, no policies, no cost, no rendering):
  - it loads the Pulumi SDK modules the plan's program loaded (`pulumi`, `pulumi_kubernetes.helm.v3`,
    `pulumi_aws.eks`, ...; the SDKs register submodules lazily, and those the program never touched stay unloaded
    in both; not `pulumi_policy`, which only the policies need);
  - it makes the program's data-source calls (`pulumi.runtime.invoke`) and registers each resource the plan
    registered, in the same order, with `pulumi.CustomResource`, `ProviderResource` or `ComponentResource`: the same
    type token, name, parent, provider, depends_on and inputs (plain values, secrets revealed), and each
    component's `register_outputs`. The generic classes skip what the SDK's typed classes do on first use (reading
    their type hints), so the floor is a little below what any program of these resources pays;
  - under the SDK's own `MockMonitor` and mocks that echo a resource's inputs as its outputs
    (`pulumi.runtime.set_mocks`, preview=False), not gpufleet's PlanMocks and RecordingMonitor: those are
    gpufleet's code (the recording monitor turns each registration into the plan's JSON-safe values), so what they
    cost is part of the overhead measured;
  - the registrations are recorded once beforehand from the plan itself; the floor checks that it registered as
    many resources and loaded as many SDK modules as the plan did.
- lean: the same floor program run as the `gpufleet` command runs (gpufleet/app/cli.py `run`): without the cyclic
  garbage collector, ending without the interpreter's teardown. plan / floor is what a user gains or pays over a
  plain SDK program; plan / lean is gpufleet's own overhead, like for like.
- ratio: the plan's time over the floor's; wall time and CPU time (user + system, steadier on a shared machine).
Each figure is the best of --runs runs, the three commands taking turns so that a disturbance falls on all alike,
after one untimed run of each. All run with compiled bytecode, as an installed gpufleet has it (pip compiles a
wheel's modules): they share one private PYTHONPYCACHEPREFIX, without PYTHONDONTWRITEBYTECODE, so none pays for
compiling source.

The second table: each measurement runs in a fresh subprocess (so import cost and peak RSS are those a user sees):
every example stack in stacks/, synthetic k3s stacks with 10, 100 and 500 GPU agents, a synthetic
EKS stack with 50 GPU pools (the prod-eks stack's cluster with 50 pools of four GPU shapes), and a synthetic
Karpenter stack with 50 NodePools (the karpenter-eks stack's cluster; spot, on-demand, capacity-block and EFA
shapes).
Prints figures; asserts nothing about speed (not a timed test).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
PROBE = r"""
import gc, io, json, resource, sys, time
from contextlib import redirect_stdout
gc.disable()  # as the gpufleet command runs (gpufleet.app.cli.run)
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

# Records what one plan registers, in registration order, and which Pulumi SDK modules it imported.
RECORD = r"""
import json, sys
from gpufleet.app.plan.engine import register
from gpufleet.app.plan.stackfile import read_stack_file, stack_path
from pathlib import Path
stack, out = sys.argv[1], sys.argv[2]
_, monitor = register(read_stack_file(stack, stack_path(Path.cwd(), stack)))
from pulumi._utils import _LazyModule  # the SDKs register submodules unloaded until an attribute is read
modules = sorted(name for name, module in list(sys.modules.items())
                 if (name.split(".")[0] == "pulumi" or name.startswith("pulumi_"))
                 and not isinstance(module, _LazyModule))
resources = [
    {"urn": r.urn, "type": r.type, "name": r.name, "parent": r.parent, "custom": r.custom, "provider": r.provider,
     "dependencies": r.dependencies, "inputs": r.revealed}
    for r in monitor.registrations
]
with open(out, "w") as f:
    json.dump({"stack": stack, "modules": [m for m in modules if not m.startswith("pulumi_policy")],
               "invokes": monitor.invokes, "resources": resources}, f)
"""

# The floor: the same registrations straight through the SDK, under its own mock monitor and echoing mocks.
FLOOR = r"""
import gc, importlib, json, os, sys
lean = sys.argv[2:] == ["--lean"]
if lean:
    gc.disable()
data = json.load(open(sys.argv[1]))
from pulumi._utils import _LazyModule
for name in data["modules"]:
    module = importlib.import_module(name)
    if isinstance(module, _LazyModule):
        getattr(module, "loaded_as_the_plan_loaded_it", None)  # any attribute but __name__ & co. loads it
import pulumi
from pulumi.runtime import settings
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await


class Echo(pulumi.runtime.Mocks):
    def new_resource(self, args):
        return args.name + "-id", args.inputs

    def call(self, args):
        return {}


def program():
    for token, args in data["invokes"]:
        pulumi.runtime.invoke(token, args)
    made, components = {}, []
    for r in data["resources"]:
        opts = pulumi.ResourceOptions(
            parent=made.get(r["parent"]),
            depends_on=[made[urn] for urn in r["dependencies"] if urn in made],
            provider=made.get(r["provider"].rsplit("::", 1)[0]) if r["provider"] else None,
        )
        if r["type"].startswith("pulumi:providers:"):
            made[r["urn"]] = pulumi.ProviderResource(r["type"].split(":")[2], r["name"], r["inputs"], opts)
        elif r["custom"]:
            made[r["urn"]] = pulumi.CustomResource(r["type"], r["name"], r["inputs"], opts)
        else:
            made[r["urn"]] = pulumi.ComponentResource(r["type"], r["name"], None, opts)
            components.append(made[r["urn"]])
    for component in components:
        component.register_outputs({})


settings.ROOT.set(None)
monitor = pulumi.runtime.mocks.MockMonitor(Echo())
pulumi.runtime.set_mocks(Echo(), project="gpufleet", stack=data["stack"], preview=False, monitor=monitor)
_sync_await(run_pulumi_func(program))
loaded = [name for name in data["modules"] if not isinstance(sys.modules[name], _LazyModule)]
print(json.dumps({"registered": len(monitor.resources), "loaded": len(loaded)}), flush=True)
if lean:
    os._exit(0)
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


def bytecode_env(cache: str) -> dict:
    """The environment of both timed interpreters: compiled bytecode kept in `cache`, as an install has it."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPYCACHEPREFIX": cache}


def run(argv: list[str], env: dict) -> tuple[float, float, str]:
    """Wall time, CPU time (user + system) and stdout of one fresh interpreter running `argv` (exit status
    checked; 1 is a plan with a mandatory violation)."""
    before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    done = subprocess.run([sys.executable, *argv], capture_output=True, text=True, cwd=ROOT, env=env)
    wall, after = time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{argv[:4]}: failed\n{done.stderr}")
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, done.stdout


def best_of(argvs: list[list[str]], runs: int, env: dict) -> list[tuple[float, float]]:
    """The best wall and CPU time of each command over `runs` rounds, the commands taking turns within a round."""
    best = [(float("inf"), float("inf"))] * len(argvs)
    for _ in range(runs):
        for i, argv in enumerate(argvs):
            wall, cpu, _ = run(argv, env)
            best[i] = (min(best[i][0], wall), min(best[i][1], cpu))
    return best


def example_stacks() -> list[str]:
    return [path.name[len("Pulumi."):-len(".yaml")] for path in sorted((ROOT / "stacks").glob("Pulumi.*.yaml"))]


def floor_table(stacks: list[str], runs: int) -> None:
    """Per stack: the plan's wall and CPU time, the SDK floor's and the lean floor's, and the plan's ratio to each."""
    print(f"{'':<16} {'':>9} {'wall seconds':-^32}  {'CPU seconds':-^32}")
    print(f"{'stack':<16} {'resources':>9} " + f"{'plan':>6} {'floor':>6} {'ratio':>5} {'lean':>6} {'ratio':>5}  " * 2)
    with tempfile.TemporaryDirectory() as tmp:
        env = bytecode_env(str(Path(tmp) / "pycache"))
        for stack in stacks:
            record = Path(tmp) / f"{stack}.json"
            subprocess.run([sys.executable, "-c", RECORD, stack, str(record)], check=True, cwd=ROOT, env=env)
            recorded = json.loads(record.read_text())
            count = len(recorded["resources"])
            commands = [["-m", "gpufleet.app.cli", "plan", stack, "--format", "json"], ["-c", FLOOR, str(record)],
                        ["-c", FLOOR, str(record), "--lean"]]
            for command in commands:  # an untimed round, which also compiles the bytecode; the floors check themselves
                out = run(command, env)[2]
                if command[0] == "-c" and json.loads(out) != {"registered": count, "loaded": len(recorded["modules"])}:
                    raise SystemExit(f"{stack}: the floor registered or loaded other than the plan: {out.strip()}, "
                                     f"{count} resources and {len(recorded['modules'])} modules recorded")
            plan, floor, lean = best_of(commands, runs, env)
            print(f"{stack:<16} {count:>9} " + "  ".join(
                f"{plan[i]:>6.2f} {floor[i]:>6.2f} {plan[i] / floor[i]:>5.2f} {lean[i]:>6.2f} {plan[i] / lean[i]:>5.2f}"
                for i in (0, 1)), flush=True)


def profile(stack: str) -> None:
    """pyinstrument's call tree of one plan of `stack` in this interpreter, imports included, run as the gpufleet
    command runs it (without the cyclic garbage collector)."""
    import gc

    from pyinstrument import Profiler

    gc.disable()
    profiler = Profiler(interval=0.0005)
    profiler.start()
    from gpufleet.app import cli

    cli.main(["plan", stack, "--format", "json", "--output", os.devnull])
    profiler.stop()
    print(profiler.output_text(unicode=False, color=False, show_all=False))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", metavar="STACK", help="print where one plan of STACK spends its time")
    parser.add_argument("--floor-only", action="store_true", help="print only the plan / SDK floor table")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per figure of the floor table (the best counts)")
    parser.add_argument("stacks", nargs="*", help="the floor table's stacks (default: every stack in stacks/)")
    args = parser.parse_args()
    if args.profile:
        return profile(args.profile)
    floor_table(args.stacks or example_stacks(), args.runs)
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
