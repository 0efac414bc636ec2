"""The kubeconfig `gpufleet verify` connects with: checked as a document first, then loaded by the official client.

The Kubernetes client (kubernetes/config/kube_config.py) reads every file of the path list it is given
(`--kubeconfig`, else $KUBECONFIG, else ~/.kube/config; entries separated by ':', ';' on Windows; missing files
skipped) with `yaml.safe_load` and walks it assuming the kubeconfig v1 shape: a file that is not YAML, nests
a few thousand levels deep, or holds a number where a map belongs ends in a YAMLError, a RecursionError or an
AttributeError (a traceback, exit 1). Each file is read here first (gpufleet.app.input_files: UTF-8 YAML within
the stack-file limits) and its shape checked against the kubeconfig v1 reference
(https://kubernetes.io/docs/reference/config-api/kubeconfig.v1/): `clusters`, `contexts` and `users` are lists of
maps, each with a string `name` and a map under `cluster`, `context` or `user`; `current-context` is a string; a
user's `token`, `password` and `username` are one line (a token pasted with its newline ends in http.client's
"Invalid header value b'Bearer <the token>\\n'", which would print the token).

A kubeconfig is code, not data: a user's `exec` runs a command (client.authentication.k8s.io, "client-go credential
plugins") and `auth-provider` runs one too (the gcp provider's `cmd-path`); `tokenFile` and the `*-file` keys read
any file. Use a kubeconfig you would run. `gpufleet verify --no-exec-plugins` (`allow_exec=False`) refuses a
kubeconfig with `exec` or `auth-provider` in any user before the client reads it.

No message from here or from the client carries a credential: `redact` removes every token and password of the
kubeconfig (and anything after `Bearer `) from the one line gpufleet prints.
"""

from __future__ import annotations

import os
import re
from typing import Any, Iterable, Optional

from gpufleet.app import input_files
from gpufleet.base.spec.text import CONTROL

DEFAULT = "the default kubeconfig ($KUBECONFIG or ~/.kube/config)"
# kubeconfig v1: list key -> the map each named entry holds.
_NAMED = {"clusters": "cluster", "contexts": "context", "users": "user"}
# A user's credentials sent in a header: each must be one line.
_ONE_LINE = ("token", "password", "username")
# A user's ways of running a command to get a credential.
_RUNS_COMMANDS = ("exec", "auth-provider")
# A credential after its scheme: RFC 6750 2.1 b64token (ALPHA DIGIT - . _ ~ + / then =), which Basic's base64 fits.
_BEARER = re.compile(r"\b(Bearer|Basic)\s+[A-Za-z0-9._~+/-]+=*", re.IGNORECASE)
REDACTED = "[redacted]"


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


def check(path: str, allow_exec: bool = True) -> Any:
    """The document, or KubeconfigError unless `path` is a readable kubeconfig document of the v1 shape (and, with
    `allow_exec` False, whose users run no command)."""
    try:
        doc = input_files.load_yaml(path, "kubeconfig")
    except input_files.InputFileError as exc:
        raise KubeconfigError(str(exc)) from None
    problem = shape_problem(doc) or (None if allow_exec else exec_problem(doc))
    if problem:
        raise KubeconfigError(f"kubeconfig {path}: {problem}")
    return doc


def exec_problem(doc: Any) -> Optional[str]:
    """The first user of `doc` (a kubeconfig of the v1 shape) that runs a command, or None."""
    for i, entry in enumerate((doc or {}).get("users") or []):
        for key in _RUNS_COMMANDS:
            if key in entry["user"]:
                return (f"users[{i}] ({entry['name']}) has `{key}`, which runs a command to get a credential, and "
                        "--no-exec-plugins refuses it: use a kubeconfig with a token or a client certificate")
    return None


def _users(doc: Any) -> Iterable[dict]:
    for entry in (doc or {}).get("users") or [] if isinstance(doc, dict) else []:
        if isinstance(entry, dict) and isinstance(entry.get("user"), dict):
            yield entry["user"]


def secrets_of(docs: Iterable[Any]) -> set[str]:
    """Every token and password in the kubeconfig documents, as written and stripped."""
    out = set()
    for doc in docs:
        for user in _users(doc):
            for key in ("token", "password", "client-key-data"):
                value = user.get(key)
                if isinstance(value, str) and value.strip():
                    out |= {value, value.strip()}
    return out


def client_secrets(api_client: Any) -> set[str]:
    """The credentials the client's configuration holds (the header values it sends)."""
    config = getattr(api_client, "configuration", None)
    out = set()
    for value in list((getattr(config, "api_key", None) or {}).values()) + [getattr(config, "password", None)]:
        if isinstance(value, str) and value.strip():
            out |= {value, value.strip(), _BEARER.sub("", value).strip()}
    return {v for v in out if v}


def redact(message: str, secrets: Iterable[str]) -> str:
    """`message` as one line without any of `secrets` (nor their repr, as a bytes or str repr shows them) and without
    what follows `Bearer ` or `Basic `."""
    for secret in sorted(set(secrets), key=len, reverse=True):
        if len(secret) < 4:
            continue
        for form in (secret, repr(secret)[1:-1], repr(secret.encode("utf-8", "replace"))[2:-1]):
            message = message.replace(form, REDACTED)
    message = _BEARER.sub(lambda m: f"{m.group(1)} {REDACTED}", message)
    return " ".join(CONTROL.sub("\ufffd", message).split())


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
    for i, entry in enumerate(doc.get("users") or []):
        for field in _ONE_LINE:
            value = entry["user"].get(field)
            if value is not None and (not isinstance(value, str) or CONTROL.search(value)):
                return (f"users[{i}].user.{field} must be one line of text (it holds a control character, such as a "
                        "newline at its end, or is not a string); its value is not shown")
    return None


def _kind(value: Any) -> str:
    return {dict: "map", list: "list", str: "string", bool: "boolean", int: "number", float: "number",
            type(None): "null"}.get(type(value), type(value).__name__)


def api_client(config_file: Optional[str], context: Optional[str], allow_exec: bool = True) -> Any:
    """The client's ApiClient for the kubeconfig and context, or KubeconfigError with one line (no credential in it).
    `allow_exec` False: a kubeconfig whose users run a command is refused first (`exec_problem`)."""
    import yaml
    from kubernetes import config as kube_config

    docs = [check(path, allow_exec) for path in paths(config_file)]
    try:
        return kube_config.new_client_from_config(config_file=config_file, context=context)
    except Exception as exc:  # noqa: BLE001 - whatever the client raises is one line, credentials removed
        # The shape is checked above; what the client still refuses (a missing context, a bad server URL or
        # certificate, a failing exec plugin) comes as ConfigException, OSError, ValueError, ..., the reason first.
        where = config_file or DEFAULT
        text = str(exc) if not isinstance(exc, yaml.YAMLError) else " ".join(str(exc).split())
        reason = redact(text.splitlines()[0] if text.strip() else type(exc).__name__, secrets_of(docs))
        raise KubeconfigError(f"cannot load {where}: {reason}") from None
