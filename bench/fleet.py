"""Fleet planning: N synthetic stacks (a mix of k3s, EKS and GKE) planned with `gpufleet plan --all` and as
N separate `gpufleet plan STACK` processes, both with the same number of jobs running at once.

    .venv/bin/python bench/fleet.py [--stacks 100] [--jobs 2]

The stacks are the example stacks under new names (each a cluster of its own), so both runs plan the
same programs. Prints, for each, wall seconds and CPU seconds (user + system of every process it started:
the CLI, its workers, the separate processes; from getrusage(RUSAGE_CHILDREN)) and the speed-up by each. On a
shared machine wall time depends on what else runs; CPU seconds say what the work costs. A figure, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = ["dev", "prod-eks", "prod-gke", "lab", "teams-eks", "ha", "teams"]


def write_stacks(folder: Path, n: int) -> list[str]:
    (folder / "stacks").mkdir(parents=True)
    names = []
    for i in range(n):
        template = TEMPLATES[i % len(TEMPLATES)]
        doc = yaml.safe_load((ROOT / "stacks" / f"Pulumi.{template}.yaml").read_text())
        name = f"{template}-{i:03d}"
        cluster = doc["config"].setdefault("gpufleet:cluster", {})
        cluster["name"] = f"c{i:03d}-{template}"[:30]
        (folder / "stacks" / f"Pulumi.{name}.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
        names.append(name)
    return names


def children_cpu() -> float:
    """CPU seconds (user + system) of every finished child process so far, grandchildren included."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cli() -> list[str]:
    return [sys.executable, "-m", "gpufleet.app.cli"]


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--stacks", type=int, default=100)
    p.add_argument("--jobs", type=int, default=2)
    args = p.parse_args()
    load = os.getloadavg()[0]
    folder = Path(tempfile.mkdtemp(prefix="gpufleet-fleet-"))
    try:
        names = write_stacks(folder, args.stacks)
        cpu, start = children_cpu(), time.perf_counter()
        fleet = subprocess.run([*cli(), "plan", "--all", "--jobs", str(args.jobs), "--format", "json"],
                               cwd=folder, capture_output=True, text=True)
        fleet_s, fleet_cpu = time.perf_counter() - start, children_cpu() - cpu
        doc = json.loads(fleet.stdout)
        statuses = {r["status"] for r in doc["fleet"]["summary"]}

        def one(name: str) -> int:
            return subprocess.run([*cli(), "plan", name, "--format", "json"], cwd=folder,
                                  capture_output=True, text=True).returncode

        cpu, start = children_cpu(), time.perf_counter()
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            codes = list(pool.map(one, names))
        separate_s, separate_cpu = time.perf_counter() - start, children_cpu() - cpu
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"fleet of {args.stacks} stacks ({', '.join(TEMPLATES)} as templates), {args.jobs} jobs at once, "
          f"load average at the start {load:.1f}")
    print(f"  plan --all           wall {fleet_s:7.1f} s   CPU {fleet_cpu:7.1f} s   exit {fleet.returncode}, statuses {sorted(statuses)}")
    print(f"  separate processes   wall {separate_s:7.1f} s   CPU {separate_cpu:7.1f} s   exits {sorted(set(codes))}")
    print(f"  speed-up             wall {separate_s / fleet_s:7.1f} x   CPU {separate_cpu / fleet_cpu:7.1f} x   "
          f"(load average now {os.getloadavg()[0]:.1f})")
    print(json.dumps({"stacks": args.stacks, "jobs": args.jobs, "fleetSeconds": round(fleet_s, 2),
                      "separateSeconds": round(separate_s, 2), "speedup": round(separate_s / fleet_s, 2),
                      "fleetCpuSeconds": round(fleet_cpu, 2), "separateCpuSeconds": round(separate_cpu, 2),
                      "cpuSpeedup": round(separate_cpu / fleet_cpu, 2)}))


if __name__ == "__main__":
    main()
