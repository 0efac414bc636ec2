"""Fleet planning: N synthetic stacks (a mix of k3s, EKS and GKE) planned with `gpufleet plan --all` and as
N separate `gpufleet plan STACK` processes, both with the same number of jobs running at once.

    .venv/bin/python bench/fleet.py [--stacks 100] [--jobs 2]

The stacks are the example stacks under new names (each a cluster of its own), so both runs plan the
same programs. Prints seconds for each and the speed-up. A figure, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
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


def cli() -> list[str]:
    return [sys.executable, "-m", "gpufleet.cli"]


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--stacks", type=int, default=100)
    p.add_argument("--jobs", type=int, default=2)
    args = p.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="gpufleet-fleet-"))
    try:
        names = write_stacks(folder, args.stacks)
        start = time.perf_counter()
        fleet = subprocess.run([*cli(), "plan", "--all", "--jobs", str(args.jobs), "--format", "json"],
                               cwd=folder, capture_output=True, text=True)
        fleet_s = time.perf_counter() - start
        doc = json.loads(fleet.stdout)
        statuses = {r["status"] for r in doc["fleet"]["summary"]}

        def one(name: str) -> int:
            return subprocess.run([*cli(), "plan", name, "--format", "json"], cwd=folder,
                                  capture_output=True, text=True).returncode

        start = time.perf_counter()
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            codes = list(pool.map(one, names))
        separate_s = time.perf_counter() - start
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"fleet of {args.stacks} stacks ({', '.join(TEMPLATES)} as templates), {args.jobs} jobs at once, "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"  plan --all           {fleet_s:8.1f} s   exit {fleet.returncode}, statuses {sorted(statuses)}")
    print(f"  separate processes   {separate_s:8.1f} s   exits {sorted(set(codes))}")
    print(f"  speed-up             {separate_s / fleet_s:8.1f} x")
    print(json.dumps({"stacks": args.stacks, "jobs": args.jobs, "fleetSeconds": round(fleet_s, 2),
                      "separateSeconds": round(separate_s, 2), "speedup": round(separate_s / fleet_s, 2)}))


if __name__ == "__main__":
    main()
