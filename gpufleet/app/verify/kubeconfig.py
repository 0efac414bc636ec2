"""The kubeconfig `gpufleet verify` connects with: checked as a document first, then loaded by the official client.

The Kubernetes client (kubernetes/config/kube_config.py) reads every file of the path list it is given
(`--kubeconfig`, else $KUBECONFIG, else ~/.kube/config; entries separated by ':', ';' on Windows; missing files
skipped) with `yaml.safe_load` and walks it assuming the kubeconfig v1 shape: a file that is not YAML, nests
a few thousand levels deep, or holds a number where a map belongs ends in a YAMLError, a RecursionError or an
AttributeError (a traceback, exit 1). Each file is read here first (gpufleet.app.input_files: UTF-8 YAML within
the stack-file limits) and its shape checked against the kubeconfig v1 reference
(https://kubernetes.io/docs/reference/config-api/kubeconfig.v1/): `clusters`, `contexts` and `users` are lists of
maps, each with a string `name` and a map under `cluster`, `context` or `user`; `current-context` is a string.
"""

from __future__ import annotations

import os
from typing import Any, Optional

from gpufleet.app import input_files

DEFAULT = "the default kubeconfig ($KUBECONFIG or ~/.kube/config)"
# kubeconfig v1: list key -> the map each named entry holds.
_NAMED = {"clusters": "cluster", "contexts": "context", "users": "user"}


class KubeconfigError(Exception):
    """A kubeconfig that cannot be used; str() is one line naming the file (exit 2)."""


def paths(config_file: Optional[str]) -> list[str]:
    """The files the client reads for `config_file` (None: its default location), as its KubeConfigMerger
    picks them: every non-empty entry of the path list, `~` expanded, that exists (an explicit single file is
    kept even when missing, so its error names it)."""
    from kubernetes.config import kube_config

    given = config_file if config_file is not None else kube_config.KUBE_CONFIG_DEFAULT_LOCATION
    entries = [os.path.expanduser(p) for p in given.split(kube_config.ENV_KUBECONFIG_PATH_SEPARATOR) if p]
    if config_file is not None and len(entries) == 1:
        return entries
    return [p for p in entries if os.path.exists(p)]


def check(path: str) -> None:
    """Raise KubeconfigError unless `path` is a readable kubeconfig document of the v1 shape."""
    try:
        doc = input_files.load_yaml(path, "kubeconfig")
    except input_files.InputFileError as exc:
        raise KubeconfigError(str(exc)) from None
    problem = shape_problem(doc)
    if problem:
        raise KubeconfigError(f"kubeconfig {path}: {problem}")


def shape_problem(doc: Any) -> Optional[str]:
    """What in `doc` is not of the kubeconfig v1 shape the client walks, or None."""
    if doc is None:
        return None  # an empty file: the client says which context is missing
    if not isinstance(doc, dict):
        return f"must be a map (kind: Config), not a {_kind(doc)}"
    current = doc.get("current-context")
    if current is not None and not isinstance(current, str):
        return f"current-context must be a string, not a {_kind(current)}"
    for key, inner in _NAMED.items():
        entries = doc.get(key)
        if entries is None:
            continue
        if not isinstance(entries, list):
            return f"{key} must be a list of named {inner}s, not a {_kind(entries)}"
        for i, entry in enumerate(entries):
            if not isinstance(entry, dict):
                return f"{key}[{i}] must be a map with `name` and `{inner}`, not a {_kind(entry)}"
            if not isinstance(entry.get("name"), str):
                return f"{key}[{i}].name must be a string"
            if not isinstance(entry.get(inner), dict):
                return f"{key}[{i}].{inner} must be a map, not a {_kind(entry.get(inner))}"
    return None


def _kind(value: Any) -> str:
    return {dict: "map", list: "list", str: "string", bool: "boolean", int: "number", float: "number",
            type(None): "null"}.get(type(value), type(value).__name__)


def api_client(config_file: Optional[str], context: Optional[str]) -> Any:
    """The client's ApiClient for the kubeconfig and context, or KubeconfigError with one line."""
    import yaml
    from kubernetes import config as kube_config

    for path in paths(config_file):
        check(path)
    try:
        return kube_config.new_client_from_config(config_file=config_file, context=context)
    except (kube_config.ConfigException, OSError, ValueError, TypeError, AttributeError, KeyError, IndexError,
            yaml.YAMLError) as exc:
        # The shape is checked above; what the client still refuses (a missing context, a bad server URL or
        # certificate) comes as one of these, the reason in its first line.
        where = config_file or DEFAULT
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise KubeconfigError(f"cannot load {where}: {reason}") from None
