"""Published NCCL all-reduce bus bandwidth per instance/machine type (gpufleet/base/catalog/nccl_busbw.yaml): the figures
`gpufleet verify` compares an RDMA pool's two-node all-reduce with."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from gpufleet.base.catalog._files import _load


@dataclass(frozen=True)
class BusBandwidth:
    """A measured two-node NCCL all-reduce bus bandwidth, with the message size it was measured at."""

    instance_type: str
    busbw_gbps: float  # nccl-tests busbw column, GB/s (1e9 bytes/s), out-of-place
    message_bytes: int  # the all_reduce_perf row's size: verify measures at this size
    nodes: int
    gpus_per_node: int
    sources: tuple[str, ...]  # full text of each source (URL, commit, what was read, date)
    note: str = ""


@functools.cache
def busbw_figures() -> dict[str, BusBandwidth]:
    """Instance/machine type -> its published two-node all-reduce bus bandwidth. Types without a sourced figure
    are absent (callers report the comparison as skipped)."""
    data = _load("nccl_busbw.yaml")
    return {t: BusBandwidth(t, float(r["busbw_gbps"]), int(r["message_bytes"]), int(r["nodes"]),
                            int(r["gpus_per_node"]), tuple(data["sources"][s] for s in r["sources"]), r.get("note", ""))
            for t, r in data["figures"].items()}
