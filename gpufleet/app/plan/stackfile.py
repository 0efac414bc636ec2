"""Reading `stacks/Pulumi.<stack>.yaml` files the way the Pulumi CLI hands their config to a program."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from gpufleet.app.input_files import InputFileError, load_yaml
from gpufleet.base.spec import SpecError
from gpufleet.base.spec.checks import stack_keys

SECRET_PLACEHOLDER = "[secret]"


@dataclass(frozen=True)
class StackFile:
    stack: str
    path: Path
    config: dict[str, Any]
    secret_keys: frozenset[str]
    settings: dict[str, Any] = field(default_factory=dict)
    """The file's top-level keys other than `config` (secretsprovider, encryptedkey, encryptionsalt), as written."""
    secure: dict[str, str] = field(default_factory=dict)
    """Config key -> the ciphertext of its `secure:` value (as public as the file; never decrypted)."""

    def review_record(self) -> dict[str, Any]:
        """What the review compares between two plans of this stack (the plan JSON's `stackFile`): the config keys
        outside `gpufleet:` with their values (each passed its shape check), and a fingerprint of every `secure:` value
        and of each secrets setting, never a value (gpufleet/app/review/config.py)."""
        return {
            "config": {k: v for k, v in sorted(self.config.items()) if not k.startswith(f"{stack_keys.NAMESPACE}:")
                       and k not in self.secret_keys},
            "secure": {k: fingerprint(v) for k, v in sorted(self.secure.items())},
            "settings": {k: fingerprint(str(v)) for k, v in sorted(self.settings.items())},
        }


def fingerprint(text: str) -> str:
    """A short digest that says whether a value changed without saying what it is."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


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
    secure: dict[str, str] = {}
    for key, value in (doc.get("config") or {}).items():
        if isinstance(value, dict) and set(value) == {"secure"}:
            secrets.add(str(key))
            secure[str(key)] = str(value["secure"])
            value = SECRET_PLACEHOLDER
        config[str(key)] = value
    settings = {str(k): v for k, v in doc.items() if k != "config"}
    problems = stack_keys.settings_problems(stack, settings, sibling_settings(path, settings))
    if problems:  # with the config keys outside `gpufleet:`, so one run names every key the file must lose
        raise SpecError(stack, problems + stack_keys.config_problems(stack, config, secrets))
    return StackFile(stack, path, config, frozenset(secrets), settings, secure)


# A top-level `encryptionsalt:` or `encryptedkey:` line as the Pulumi CLI writes it (one plain scalar per line).
_SETTING_LINE = re.compile(r"^(encryptionsalt|encryptedkey):[ \t]*(\S+)[ \t]*$", re.MULTILINE)


def sibling_settings(path: Path, settings: Mapping[str, Any]) -> dict[str, dict[str, str]]:
    """The salts and data keys of the other stack files in `path`'s folder (stack -> {key: value}), read only when
    this file has one: a copied salt or data key is refused (checks/stack_keys.py). Read by a line scan, not as YAML:
    only the lines the CLI writes matter, and a plan of one stack reads every file of the folder."""
    if not any(k in settings for k in ("encryptionsalt", "encryptedkey")):
        return {}
    out = {}
    for other in sorted(path.parent.glob("Pulumi.*.yaml")):
        if other.resolve() == path.resolve():
            continue
        try:
            text = other.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        out[other.name[len("Pulumi."):-len(".yaml")]] = dict(_SETTING_LINE.findall(text))
    return out
