"""Benchmark (not a test): offline plan time and memory of the EKS example stack and of a synthetic EKS
stack with 50 GPU pools. Prints figures; run with `.venv/bin/python bench/eks_plan.py`."""

from __future__ import annotations

import copy
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gpufleet.plan.engine import plan  # noqa: E402
from tests.helpers import example, example_config, stack_file  # noqa: E402

SHAPES = [
    {"instanceTypes": ["g6.xlarge", "g6.2xlarge"], "capacity": "spot"},
    {"instanceType": "g6e.12xlarge", "capacity": "on-demand"},
    {"instanceType": "p5.48xlarge", "capacity": "spot", "rdma": True, "availabilityZone": "us-east-1a"},
    {"instanceType": "p4d.24xlarge", "capacity": "on-demand", "rdma": True, "availabilityZone": "us-east-1b"},
]


def synthetic(pools: int) -> dict:
    cfg = copy.deepcopy(example_config("prod-eks"))
    cfg["gpufleet:nodePools"] = [
        {"name": f"pool-{i:03d}", "minNodes": 0, "maxNodes": 4, **SHAPES[i % len(SHAPES)]} for i in range(pools)
    ]
    return cfg


def timed(label: str, stack) -> None:
    start = time.perf_counter()
    p = plan(stack)
    seconds = time.perf_counter() - start
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{label:<28} {len(p.resources):>5} resources  {seconds:6.2f} s  peak RSS {peak_mib:6.0f} MiB  "
          f"{len(p.violations)} findings")


def main() -> None:
    timed("prod-eks (first, imports)", example("prod-eks"))
    timed("prod-eks (warm)", example("prod-eks"))
    timed("synthetic eks, 50 GPU pools", stack_file(synthetic(50), "bench-eks-50"))


if __name__ == "__main__":
    main()
