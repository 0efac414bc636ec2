"""Settings of a component the same stack turns off: an error naming both keys.

A stack that sets Kueue teams with Kueue off, a GPU Operator version with the operator off, or alert settings with
alerts off plans clean and deploys nothing of what it describes; the author meant one of the two keys. Each block
below has an `enabled` switch; any other key of the block the stack sets while the switch is off is refused.
"""

from __future__ import annotations

from typing import Any, Iterator

from gpufleet.base.spec.errors import Problem
from gpufleet.base.spec.stack import StackSpec

NAMESPACE = "gpufleet"

# (key path of a block with an `enabled` switch, the attribute path to it on StackSpec, what turning it off means).
BLOCKS = (
    ("gpuOperator", ("gpu_operator",), "the GPU Operator is not installed"),
    ("addons.kueue", ("addons", "kueue"), "Kueue is not installed"),
    ("addons.volcano", ("addons", "volcano"), "Volcano is not installed"),
    ("addons.priorityClasses", ("addons", "priority_classes"), "no PriorityClass is created"),
    ("observability.alerts", ("observability", "alerts"), "no alert rule is created"),
    ("observability.dashboards", ("observability", "dashboards"), "no dashboard is created"),
    ("observability.nodeHealth", ("observability", "node_health"), "node health checks are not installed"),
    ("cluster.k3s.etcdSnapshots", ("cluster", "k3s", "etcd_snapshots"), "no etcd snapshot is taken"),
)
# Keys that explain turning a block off, not settings of the block.
EXPLAINS = {"enabled", "reason"}


def _block(spec: StackSpec, attrs: tuple[str, ...]) -> Any:
    node: Any = spec
    for attr in attrs:
        node = getattr(node, attr, None)
        if node is None:
            return None
    return node


def _set_keys(block: Any) -> Iterator[str]:
    for name in sorted(block.model_fields_set - EXPLAINS):
        field = type(block).model_fields[name]
        yield field.alias or name


def check(stack: str, spec: StackSpec, config: dict) -> list[Problem]:
    problems = []
    for at, attrs, meaning in BLOCKS:
        block = _block(spec, attrs)
        if block is None or block.enabled:
            continue
        for key in _set_keys(block):
            problems.append(Problem(
                stack, f"{NAMESPACE}:{at}.{key}",
                f"set while {NAMESPACE}:{at}.enabled is false ({meaning}, so it does nothing): remove it, or turn "
                f"{at} on",
            ))
    return problems


__all__ = ["check"]
