"""Reading `stacks/Pulumi.<stack>.yaml` files the way the Pulumi CLI hands their config to a program."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpufleet.app.input_files import InputFileError, load_yaml

SECRET_PLACEHOLDER = "[secret]"


@dataclass(frozen=True)
class StackFile:
    stack: str
    path: Path
    config: dict[str, Any]
    secret_keys: frozenset[str]


class StackFileError(Exception):
    """The file is missing or is not a Pulumi stack file; str() is one line naming the stack and the file."""


def stack_path(project_dir: Path, stack: str) -> Path:
    return project_dir / "stacks" / f"Pulumi.{stack}.yaml"


def read_stack_file(stack: str, path: Path) -> StackFile:
    """Config with secure values replaced by a placeholder (they cannot be decrypted offline).

    The file must be UTF-8 YAML within the stack-file limits (gpufleet.base.limits: 32 levels of nesting,
    100,000 values with aliases expanded); anything else is a StackFileError (gpufleet.app.input_files)."""
    try:
        doc = load_yaml(path, "stack file") or {}
    except InputFileError as exc:
        raise StackFileError(f"stack '{stack}': {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("config", {}), dict):
        raise StackFileError(f"stack '{stack}': {path} must be a mapping with a `config:` mapping")
    config: dict[str, Any] = {}
    secrets: set[str] = set()
    for key, value in (doc.get("config") or {}).items():
        if isinstance(value, dict) and set(value) == {"secure"}:
            secrets.add(key)
            value = SECRET_PLACEHOLDER
        config[str(key)] = value
    return StackFile(stack, path, config, frozenset(secrets))
