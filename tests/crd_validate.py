"""Validate custom resources against the upstream CRDs' openAPIV3Schema in ../shared/reference/crds/.

    schema = crd_schema("kueue.x-k8s.io", "ClusterQueue", "v1beta2")   # None when the CRD is absent
    errors = validate_cr(obj)                                            # [] when valid

Strict like `kubectl apply --validate=strict`: a field the schema does not declare is an error (the API
server would silently prune it), unless the schema says `x-kubernetes-preserve-unknown-fields`.
Not checked: CEL rules (`x-kubernetes-validations`) and formats, which need an API server.
Where upstream patches a CRD before release (KEDA's kustomize patches in `<dir>/kustomize-patches/
<kind>_patch.yaml`), the patches are applied first, so we check what the release installs.
"""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Optional

import jsonschema
import pytest

from tests.helpers import REFERENCE, load_yaml, load_yaml_all

CRDS = REFERENCE / "crds"


@functools.lru_cache(maxsize=None)
def _crd_index() -> dict[tuple[str, str], Path]:
    """(group, kind) -> CRD file (the first in sorted order when two copies exist)."""
    index: dict[tuple[str, str], Path] = {}
    for path in sorted(CRDS.glob("*/*.yaml")):
        for doc in load_yaml_all(path.read_text()):
            if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                key = (doc["spec"]["group"], doc["spec"]["names"]["kind"])
                index.setdefault(key, path)
    return index


def _pointer(path: str) -> list[str]:
    return [p.replace("~1", "/").replace("~0", "~") for p in path.lstrip("/").split("/")]


def apply_json_patch(doc: dict, ops: list[dict]) -> dict:
    """RFC 6902 add/remove/replace (what KEDA's kustomize patches use)."""
    doc = copy.deepcopy(doc)
    for op in ops:
        *parents, last = _pointer(op["path"])
        target = doc
        for part in parents:
            target = target[int(part)] if isinstance(target, list) else target[part]
        if op["op"] == "remove":
            del target[int(last) if isinstance(target, list) else last]
        elif isinstance(target, list):
            if last == "-":
                target.append(op["value"])
            else:
                target.insert(int(last), op["value"])
        elif op["op"] in ("add", "replace"):
            target[last] = op["value"]
        else:
            raise ValueError(f"unsupported JSON patch op {op['op']!r}")
    return doc


@functools.lru_cache(maxsize=None)
def _documents(path: Path) -> tuple:
    """A CRD file's documents, parsed once per process (read only: load_crd copies before patching)."""
    return tuple(load_yaml_all(path.read_text()))


@functools.lru_cache(maxsize=None)
def load_crd(group: str, kind: str) -> Optional[dict]:
    """The CRD for group/kind as its release installs it (upstream patches applied), or None."""
    path = _crd_index().get((group, kind))
    if path is None:
        return None
    # A file may hold several CRDs (Argo CD's holds Application, ApplicationSet and AppProject): the one of this kind.
    crd = next(d for d in _documents(path) if isinstance(d, dict) and d.get("kind") == "CustomResourceDefinition"
               and (d["spec"]["group"], d["spec"]["names"]["kind"]) == (group, kind))
    patch = path.parent / "kustomize-patches" / f"{kind.lower()}_patch.yaml"
    if patch.is_file():
        crd = apply_json_patch(crd, load_yaml(patch.read_text()))
    return crd


def _strict(schema: dict) -> dict:
    """Reject fields the schema does not declare (structural schemas prune them silently)."""
    if isinstance(schema, dict):
        out = {k: _strict(v) for k, v in schema.items()}
        pattern = out.get("pattern")
        if isinstance(pattern, str) and pattern.startswith("^(?i)"):
            # Go's RE2 takes inline flags after '^' (Kueue's AdmissionCheck uses `^(?i)...`); Python's re only first.
            out["pattern"] = "(?i)^" + pattern[len("^(?i)"):]
        if "properties" in schema and "additionalProperties" not in schema and not schema.get("x-kubernetes-preserve-unknown-fields"):
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [_strict(v) for v in schema]
    return schema


@functools.lru_cache(maxsize=None)
def crd_schema(group: str, kind: str, version: str) -> Optional[dict]:
    """The strict openAPIV3Schema of one served version, or None when the CRD or version is absent."""
    crd = load_crd(group, kind)
    if crd is None:
        return None
    for v in crd["spec"]["versions"]:
        if v["name"] == version:
            return _strict(v["schema"]["openAPIV3Schema"])
    return None


def versions_of(group: str, kind: str) -> list[str]:
    crd = load_crd(group, kind)
    return [v["name"] for v in crd["spec"]["versions"]] if crd else []


def validate_cr(obj: dict) -> list[str]:
    """Error messages (path: message) for one custom resource; pytest.skip when its CRD is absent."""
    group, _, version = obj["apiVersion"].rpartition("/")
    schema = crd_schema(group, obj["kind"], version)
    if schema is None:
        if not CRDS.is_dir():
            pytest.skip(f"upstream CRDs not found at {CRDS} (shared/ is not beside this checkout)")
        known = versions_of(group, obj["kind"])
        if not known:
            pytest.skip(f"no upstream CRD for {group}/{obj['kind']} in {CRDS}")
        return [f"apiVersion: {obj['apiVersion']} is not served by the CRD (served: {', '.join(known)})"]
    validator = jsonschema.Draft7Validator(schema)
    return [
        f"{'.'.join(str(p) for p in err.absolute_path) or '<root>'}: {err.message}"
        for err in sorted(validator.iter_errors(obj), key=lambda e: list(map(str, e.absolute_path)))
    ]


def ec2_ids(spec: dict) -> dict:
    """Mocks answer `<resource name>-id` for every id; the CRD wants EC2's own id shapes (subnet-..., sg-...)."""
    spec = dict(spec)
    for key, prefix in (("subnetSelectorTerms", "subnet"), ("securityGroupSelectorTerms", "sg")):
        if key in spec:
            spec[key] = [{"id": t["id"] if t["id"].startswith(f"{prefix}-") else f"{prefix}-{i:017x}"}
                         for i, t in enumerate(spec[key])]
    return spec


def as_sent(value):
    """Pulumi hands numbers to mocks as floats: give integral ones back as ints, as kubectl would send them."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: as_sent(v) for k, v in value.items()}
    if isinstance(value, list):
        return [as_sent(v) for v in value]
    return value
