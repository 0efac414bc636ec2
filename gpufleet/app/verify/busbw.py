"""Reading an all-reduce's bus bandwidth from a log, and what it is compared with.

Two formats are read:
- gpufleet's own all-reduce (gpufleet/app/verify/nccl/allreduce.py), one line from rank 0:
  `all_reduce 1073741824 bytes over 16 GPUs: 11.90 ms, algbw 90.2 GB/s, busbw 169.2 GB/s`;
- NVIDIA nccl-tests `all_reduce_perf`, a table with one row per message size (src/util.cu writeResultHeader and
  writeBenchmarkLineBody at v2.19.6 a0b82b22): `size count type redop root` then time, algbw, busbw, #wrong for
  out-of-place and again for in-place (with -I, four per-iteration columns follow each #wrong). Launchers may prefix
  each line with the rank (`0: ` under srun, `[1,0]<stdout>:` under Open MPI). The out-of-place busbw is the one
  published figures quote, and the one read here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

_SCRIPT = re.compile(r"all_reduce (\d+) bytes over \d+ GPUs:.*\bbusbw ([0-9.]+) GB/s")
# size, count, type, redop, root, then out-of-place time, algbw, busbw.
_ROW = re.compile(r"^\s*(?:\S*:)?\s*(\d+)\s+(\d+)\s+[A-Za-z]\w*\s+[A-Za-z]\w*\s+-?\d+\s+(\S+)\s+(\S+)\s+(\S+)\s")


@dataclass(frozen=True)
class ExpectedBusbw:
    """What a pool's all-reduce is compared with: a published figure and the message size it was measured at
    (None: any size the check measured)."""

    gbps: float
    message_bytes: Optional[int] = None


def _number(text: str) -> Optional[float]:
    try:
        return float(text)
    except ValueError:
        return None


def read_busbw(log: str) -> dict[int, float]:
    """Message size (bytes) -> out-of-place bus bandwidth (GB/s) for every all-reduce result in the log."""
    out: dict[int, float] = {}
    for line in log.splitlines():
        if m := _SCRIPT.search(line):
            out[int(m.group(1))] = float(m.group(2))
        elif m := _ROW.match(line):
            busbw = _number(m.group(5))
            if busbw is not None and _number(m.group(3)) is not None and _number(m.group(4)) is not None:
                out[int(m.group(1))] = busbw
    return out


def busbw_at(log: str, message_bytes: Optional[int]) -> Optional[tuple[int, float]]:
    """(size, busbw) at `message_bytes`, or at the largest size measured when no size is asked for; None when the
    log has no such result."""
    results = read_busbw(log)
    if not results:
        return None
    if message_bytes is None:
        size = max(results)
        return size, results[size]
    return (message_bytes, results[message_bytes]) if message_bytes in results else None
