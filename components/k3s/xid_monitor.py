"""node-problem-detector's GPU check: a system-log-monitor config that reads NVIDIA XID errors from the kernel log.

The NVIDIA driver reports each XID to the kernel log as `NVRM: Xid (<device>): <xid>, <details>` (NVIDIA, "XID
Errors", docs.nvidia.com/deploy/xid-errors/, "Viewing Xid Error Messages": `NVRM: Xid (0000:03:00): 14, Channel
00000001`; current drivers write the device as `PCI:0000:01:00`, with ` GPU-I:05` added under MIG, e.g.
`NVRM: Xid (PCI:0000:01:00): 94, pid=7062, Contained: ...`, NVIDIA/open-gpu-kernel-modules
src/nvidia/src/kernel/gpu/arch/ampere/kern_gpu_error_cont_ga100.c, `_gpuGenerateErrorLog`). The rules match any
device form, so one config serves old and new drivers.

Which XIDs mean a broken GPU is NVIDIA's immediate action for each, from gpufleet's XID catalog
(gpufleet/base/catalog/xid.yaml, read through gpufleet.base.catalog): an XID whose action is a GPU reset, a machine restart or a
workflow that ends in one (the buckets gpufleet's alerts page on: severity critical) sets the permanent node condition
`GpuUnhealthy` (reason per class, e.g. `GpuXidMemory`); every other XID (RESTART_APP, IGNORE, the NVLink 5 decode
workflow) only emits an event with its class's reason: XID 94, a contained ECC error, needs only the application
restarted, so it must not mark the node broken.

Format: kubernetes/node-problem-detector v1.36.0, pkg/systemlogmonitor/config.go (plugin, logPath, lookback,
bufferSize, source, conditions, rules, metricsReporting) and types/types.go (rule type, condition, reason,
pattern); the kmsg settings mirror config/kernel-monitor.json at that tag. NPD compiles each pattern with Go's
regexp (RE2) and appends `\\z` (pkg/systemlogmonitor/log_buffer.go, `Match`), searching the last `bufferSize` lines
joined by newlines: a rule matches when the newest line ends a match. The patterns keep to the subset RE2 and
Python's `re` read alike (literals, escaped parentheses, character classes, non-capturing alternation, `.*`; no
look-around, no backreferences), so tests check them with Python's `re` under NPD's own matching rule.
"""

from __future__ import annotations

import json

from gpufleet.base import catalog, labels

CONDITION = labels.GPU_UNHEALTHY_CONDITION
HEALTHY_REASON = "NoGpuXidErrors"
SOURCE = "gpu-xid-monitor"
CONFIG_KEY = "gpu-xid-monitor.json"


def reason(xid_class: str) -> str:
    """The rule's reason for an XID class: GpuXidMemory, GpuXidBus, GpuXidNvlink, GpuXidGsp, GpuXidApplication."""
    return f"GpuXid{xid_class.capitalize()}"


def pattern(xids: tuple[int, ...]) -> str:
    """A kernel-log line reporting one of `xids` (RE2 and Python `re` alike)."""
    codes = "|".join(str(x) for x in sorted(xids))
    return rf"NVRM: Xid \([^)]*\): (?:{codes}),.*"


def breaks_gpu(xid: catalog.Xid) -> bool:
    """NVIDIA's immediate action for the XID is a GPU reset, a machine restart or a workflow that ends in one."""
    return xid.action.severity == "critical"


def rules() -> list[dict]:
    """Per class: a permanent rule for its XIDs that break the GPU, a temporary (event) rule for the others."""
    out = []
    for cls in catalog.xid_classes().values():
        broken = tuple(x for x in cls.xids if breaks_gpu(catalog.xids()[x]))
        others = tuple(x for x in cls.xids if x not in broken)
        if broken:
            out.append({"type": "permanent", "condition": CONDITION, "reason": reason(cls.name), "pattern": pattern(broken)})
        if others:
            out.append({"type": "temporary", "reason": reason(cls.name), "pattern": pattern(others)})
    return out


def monitor_config() -> dict:
    """The system-log-monitor config (kmsg, as upstream's config/kernel-monitor.json reads the kernel log)."""
    return {
        "plugin": "kmsg",
        "logPath": "/dev/kmsg",
        "lookback": "5m",
        "bufferSize": 10,
        "source": SOURCE,
        "metricsReporting": True,
        "conditions": [{"type": CONDITION, "reason": HEALTHY_REASON,
                        "message": "no XID NVIDIA says needs a GPU reset or a machine restart in the kernel log"}],
        "rules": rules(),
    }


def monitor_json() -> str:
    return json.dumps(monitor_config(), indent=2, sort_keys=True) + "\n"
