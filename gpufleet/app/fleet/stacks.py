"""The stacks of a project as fleet commands see them: name, stack file, platform and `gpufleet:dependsOn`.

Read from the raw stack files (no validation: the offline plan validates before `up`), in the folder the project's
`Pulumi.yaml` names as `stackConfigDir` (the Pulumi CLI's own rule), else the project folder.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from gpufleet.app.input_files import InputFileError, load_yaml
from gpufleet.base.spec import ids

STACK_NAME = re.compile(ids.STACK_NAME.strip("^$"))  # Pulumi's rule (gpufleet/base/spec/ids.py), matched whole
DEPENDS_ON = "gpufleet:dependsOn"


class SelectionError(Exception):
    """Bad input to a fleet command; str() names the stack or flag, the value and what is allowed (exit 2)."""


@dataclass(frozen=True)
class FleetStack:
    name: str
    path: Path
    platform: Optional[str]
    depends_on: tuple[str, ...]


def stack_dir(project: Path) -> Path:
    """Where the project's stack files are: `stackConfigDir` of Pulumi.yaml, relative to the project."""
    try:
        doc = load_yaml(project / "Pulumi.yaml", "project file") or {}
    except InputFileError as exc:
        raise SelectionError(f"--project-dir {str(project)!r}: {exc} (a Pulumi project folder has a Pulumi.yaml)") from None
    folder = doc.get("stackConfigDir") if isinstance(doc, dict) else None
    return project / folder if isinstance(folder, str) and folder else project


def _read(name: str, path: Path) -> FleetStack:
    try:
        doc = load_yaml(path, "stack file") or {}
    except InputFileError as exc:
        raise SelectionError(f"stack '{name}': {exc}") from None
    config = doc.get("config") if isinstance(doc, dict) else None
    config = config if isinstance(config, dict) else {}
    cluster = config.get("gpufleet:cluster")
    platform = cluster.get("platform") if isinstance(cluster, dict) else None
    deps = config.get(DEPENDS_ON, [])
    if not isinstance(deps, list) or not all(isinstance(d, str) and STACK_NAME.fullmatch(d) for d in deps):
        raise SelectionError(f"stack '{name}': {DEPENDS_ON}: {deps!r} is not allowed (allowed: a list of stack names, "
                             "each [A-Za-z0-9._-]{1,100})")
    return FleetStack(name, path, platform if isinstance(platform, str) else None, tuple(deps))


def discover(project: Path) -> dict[str, FleetStack]:
    """Every `Pulumi.<name>.yaml` of the project, by name; a name that breaks Pulumi's rule is an error (the CLI could
    not select it, and a fleet run never skips a stack silently)."""
    folder = stack_dir(project)
    found = {}
    for path in sorted(folder.glob("Pulumi.*.yaml")):
        name = path.name[len("Pulumi."):-len(".yaml")]
        if not STACK_NAME.fullmatch(name):
            raise SelectionError(f"stack file {path}: the stack name {name!r} is not allowed (allowed: "
                                 "[A-Za-z0-9._-]{1,100}, Pulumi's stack name rule)")
        found[name] = _read(name, path)
    return found


def parse_shard(text: str) -> tuple[int, int]:
    """`i/n` with 1 <= i <= n."""
    match = re.fullmatch(r"(\d{1,4})/(\d{1,4})", text or "")
    if not match or not 1 <= int(match[1]) <= int(match[2]):
        raise SelectionError(f"--shard {text!r}: not allowed (allowed: I/N with 1 <= I <= N, e.g. 1/4)")
    return int(match[1]), int(match[2])


def groups(names: list[str], stacks: dict[str, FleetStack]) -> list[list[str]]:
    """The selected stacks in groups joined by `dependsOn` (within the selection), each sorted, ordered by first name."""
    parent = {n: n for n in names}

    def root(n: str) -> str:
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    for n in names:
        for d in stacks[n].depends_on:
            if d in parent:
                parent[root(n)] = root(d)
    out: dict[str, list[str]] = {}
    for n in sorted(names):
        out.setdefault(root(n), []).append(n)
    return sorted(out.values(), key=lambda g: g[0])


def shard(names: list[str], stacks: dict[str, FleetStack], index: int, count: int) -> list[str]:
    """Shard `index` of `count`: the dependency groups dealt round-robin in name order, so the split depends only
    on the selection, every stack lands in exactly one shard, and a stack always shares a shard with the stacks it
    depends on (their order can then be kept)."""
    return sorted(n for k, g in enumerate(groups(names, stacks)) if k % count == index - 1 for n in g)
