"""A CRD's `x-kubernetes-validations` CEL rules, evaluated as the API server evaluates them on create.

    for field_path, message in failed_rules(value, schema): ...   # the rules of one schema node, `self` = value

The CEL implementation is common-expression-language (PyPI, >=0.10,<0.11), the Python binding of the Rust
cel-interpreter. Chosen over cel-python 0.5 (pure Python, brings lark, pendulum, jmespath and google-re2) and
cel-expr-python 0.1 (Google's C++ runtime, but Python >= 3.11 only, which this package's >= 3.10 excludes, and every
variable must be declared with a CEL type): it evaluates every rule of the pinned charts' CRDs
(tests/unit/test_crd_sources.py), is fast (compiled once per rule), and calls Python functions as methods
(`x.find(re)`), which the Kubernetes CEL libraries need. It brings cel-go's string, list, set and math extensions
(cel.stdlib), which Kubernetes enables; the Kubernetes-only functions those rules call (regex `find`/`findAll`,
`isURL`, `isSorted`) are below, each after k8s.io/apiserver pkg/cel/library.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Callable, Iterator, Optional
from urllib.parse import urlparse

# CEL reserved words Kubernetes escapes in property names (apiserver pkg/cel/escaping.go).
_CEL_RESERVED = {"true", "false", "null", "in", "as", "break", "const", "continue", "else", "for", "function", "if",
                 "import", "let", "loop", "package", "namespace", "return", "var", "void", "while"}


def go_pattern(pattern: str) -> str:
    """A Go RE2 pattern as Python's re reads it: RE2 takes inline flags after '^' (Kueue uses `^(?i)...`), Python's
    re only at the start."""
    return "(?i)^" + pattern[len("^(?i)"):] if pattern.startswith("^(?i)") else pattern


def escape(name: str) -> str:
    """A property name as a CEL rule spells it (`namespace` -> `__namespace__`, `a-b` -> `a__dash__b`)."""
    if name in _CEL_RESERVED:
        return f"__{name}__"
    return (name.replace("__", "__underscores__").replace(".", "__dot__").replace("-", "__dash__")
            .replace("/", "__slash__"))


def cel_value(value: Any, schema: Optional[dict]) -> Any:
    """The value as CEL sees it: declared properties under their escaped names (maps keep their keys)."""
    schema = schema or {}
    if isinstance(value, dict):
        props = schema.get("properties")
        if props is not None:
            return {escape(k) if k in props else k: cel_value(v, props.get(k)) for k, v in value.items()}
        extra = schema.get("additionalProperties")
        return {k: cel_value(v, extra if isinstance(extra, dict) else None) for k, v in value.items()}
    if isinstance(value, list):
        return [cel_value(v, schema.get("items")) for v in value]
    return value


def _find(s: str, pattern: str) -> str:
    m = re.search(go_pattern(pattern), s)
    return m.group(0) if m else ""


def _find_all(s: str, pattern: str, limit: int = -1) -> list[str]:
    found = [m.group(0) for m in re.finditer(go_pattern(pattern), s)]
    return found if limit < 0 else found[:limit]


def _is_url(s: str) -> bool:
    # library/urls.go isURL: url.Parse succeeds and the URL is absolute (has a scheme) or absolute-path.
    try:
        parsed = urlparse(s)
    except ValueError:
        return False
    return bool(parsed.scheme) or s.startswith("/")


def _is_sorted(items: list) -> bool:
    return all(a <= b for a, b in zip(items, items[1:]))


# k8s.io/apiserver pkg/cel/library: regex.go (find, findAll), urls.go (isURL), lists.go (isSorted).
KUBERNETES_FUNCTIONS: dict[str, Callable] = {"find": _find, "findAll": _find_all, "isURL": _is_url, "isSorted": _is_sorted}
# cel-go's extension libraries Kubernetes enables (strings, lists, sets, math), from cel.stdlib.
STDLIB_EXTENSIONS = ("strings", "lists", "sets", "math")


@functools.lru_cache(maxsize=1)
def functions() -> dict[str, Callable]:
    """Every function a rule may call beyond CEL's own: the cel-go extensions and the Kubernetes library above."""
    from cel.stdlib import EXTENSIONS

    out: dict[str, Callable] = {}
    for name in STDLIB_EXTENSIONS:
        out.update(EXTENSIONS[name])
    out.update(KUBERNETES_FUNCTIONS)
    return out


@functools.lru_cache(maxsize=None)
def program(rule: str):
    """The compiled rule (compiled once per process)."""
    import cel

    return cel.compile(rule)


def evaluate_rule(rule: str, self_value: Any) -> Any:
    """One CEL expression with `self` bound (raises on a runtime error, as the API server reports one)."""
    import cel

    ctx = cel.Context(variables={"self": self_value}, functions=functions())
    return program(rule).execute(ctx)


def reads_old_self(rule: str) -> bool:
    """A transition rule: it compares with the stored object, so it runs on update only (a plan creates)."""
    return re.search(r"\boldSelf\b", rule) is not None


def failed_rules(value: Any, schema: dict) -> Iterator[tuple[str, str]]:
    """(the rule's fieldPath or "", message) for each rule of this schema node that `value` fails.

    The message is the rule's `messageExpression` result, else its `message`, else the rule itself; a rule that
    cannot be evaluated fails, as on the server (cel/validation.go)."""
    for rule in schema.get("x-kubernetes-validations") or []:
        if reads_old_self(rule["rule"]):
            continue
        field_path = rule.get("fieldPath") or ""
        this = cel_value(value, schema)
        try:
            ok = evaluate_rule(rule["rule"], this)
        except Exception as exc:  # noqa: BLE001 - any runtime error of a rule fails validation on the server too
            yield field_path, f"CEL rule `{rule['rule']}` could not be evaluated: {exc}"
            continue
        if ok is True:
            continue
        message = rule.get("message") or f"failed rule: {rule['rule']}"
        if rule.get("messageExpression"):
            try:
                message = str(evaluate_rule(rule["messageExpression"], this))
            except Exception:  # noqa: BLE001 - the server falls back to `message` too
                pass
        yield field_path, message
