"""Plan time and peak memory as `gpufleet:nodePools` grows to its limit (issue 48), and past it for the curve.

    .venv/bin/python bench/scale.py [--pools 25,50,100] [--beyond 200,400] [--kinds eks,k3s]

Each figure is one `gpufleet plan --format json` of a synthetic stack in a fresh interpreter (imports included, as a
user runs it): wall seconds, CPU seconds (user + system), peak RSS, resources registered, and seconds per pool
beyond the stack's fixed part (the difference to the smallest size, per added pool), which stays flat when planning
is linear in the pools. `eks`: the prod-eks cluster with N pools of four GPU shapes (bench/plan.py `synthetic_eks`);
`k3s`: one server and N one-host GPU pools. `--beyond` sizes are over limits.NODE_POOLS_MAX, which the stack file
refuses (exit 2): they are planned with the limit raised inside the measuring process only, to show the curve past
it. Prints figures; asserts nothing about speed (not a timed test).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from plan import synthetic_eks  # noqa: E402

PROBE = r"""
import io, json, resource, sys, time
start = time.perf_counter()
from gpufleet.base import limits
limits.NODE_POOLS_MAX = int(sys.argv[3])
from gpufleet.app.cli import main
out = io.StringIO()
stdout, sys.stdout = sys.stdout, out
code = main(["plan", sys.argv[1], "--config", sys.argv[2], "--format", "json"])
sys.stdout = stdout
wall = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_SELF)
resources = len(json.loads(out.getvalue())["resources"]) if code in (0, 1) else 0
print(json.dumps({"code": code, "wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
                  "peak_mib": usage.ru_maxrss / 1024, "resources": resources}))
"""


def synthetic_k3s_pools(pools: int) -> dict:
    """One server and `pools` GPU pools of one host each."""
    return {"config": {
        "gpufleet:cluster": {"platform": "k3s", "k3s": {"servers": [{"name": "cp-1", "address": "10.255.0.1"}]}},
        "gpufleet:nodePools": [
            {"name": f"pool-{i:03d}", "gpu": "H100-80GB", "gpusPerNode": 8, "pricePerNodeHour": 24.0,
             "hosts": [{"name": f"gpu-{i:03d}", "address": f"10.1.{i // 250}.{i % 250 + 1}"}]} for i in range(pools)],
        "gpufleet:sshPrivateKey": {"secure": "v1:placeholder"},
    }}


def measure(kind: str, pools: int, folder: Path, limit: int) -> dict:
    doc = synthetic_eks(pools) if kind == "eks" else synthetic_k3s_pools(pools)
    path = folder / f"Pulumi.{kind}-{pools}.yaml"
    path.write_text(yaml.safe_dump(doc))
    done = subprocess.run([sys.executable, "-c", PROBE, f"{kind}-{pools}", str(path), str(limit)],
                          capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"{kind}-{pools}: probe failed\n{done.stderr}")
    return json.loads(done.stdout.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pools", default="25,50,100", help="pool counts within the limit (comma-separated)")
    parser.add_argument("--beyond", default="", help="pool counts past the limit, planned with it raised (e.g. 200,400)")
    parser.add_argument("--kinds", default="eks,k3s", help="synthetic stacks: eks, k3s")
    args = parser.parse_args()
    from gpufleet.base import limits

    sizes = [int(n) for n in args.pools.split(",") if n] + [int(n) for n in args.beyond.split(",") if n]
    print(f"{'stack':<10} {'pools':>5} {'exit':>4} {'resources':>9} {'wall s':>7} {'CPU s':>7} {'peak MiB':>9} "
          f"{'CPU s/pool*':>11}")
    with tempfile.TemporaryDirectory() as tmp:
        for kind in args.kinds.split(","):
            first = None
            for n in sizes:
                m = measure(kind, n, Path(tmp), max(limits.NODE_POOLS_MAX, n))
                first = first or (n, m)
                per_pool = (m["cpu"] - first[1]["cpu"]) / (n - first[0]) if n > first[0] else float("nan")
                print(f"{kind:<10} {n:>5} {m['code']:>4} {m['resources']:>9} {m['wall']:>7.2f} {m['cpu']:>7.2f} "
                      f"{m['peak_mib']:>9.1f} {per_pool:>11.3f}")
    print("* CPU seconds per pool added since the smallest size: flat when the plan is linear in the pools")


if __name__ == "__main__":
    main()
