"""Which input changes force Pulumi to replace a resource, per resource type token, with the source of each fact.

Each platform declares the rows of its providers' resources (ReviewTraits.replace_tables,
gpufleet/base/platforms/<name>/review.py); the Kubernetes and Helm rows every platform shares are here.
Bridged providers (pulumi-aws, pulumi-gcp, pulumi-random) replace a resource when an input the upstream
Terraform schema marks `ForceNew` changes; pulumi-kubernetes and pulumi-command decide it in their own Diff.
The provider schemas (`replaceOnChanges`) are not available offline here, so each table cites the upstream
schema or provider source it was read from. `checked` says whether the entry was read at that source while
writing this table (True) or taken from the provider docs without re-reading (False): re-check those first.

Paths are Pulumi input names (camelCase), dotted; list indices are ignored (`instanceTypes[0]` matches
`instanceTypes`), and a rule matches every path below it (`nodeConfig.guestAccelerators` matches
`nodeConfig.guestAccelerators.type`).
"""

from __future__ import annotations

import re
from typing import Optional

from gpufleet.base import platforms
from gpufleet.base.platforms.contract.review import ReplaceTable

# The rows every platform shares: the Helm release and Kubernetes objects. Each platform declares the rows of its
# providers' resources (ReviewTraits, gpufleet/base/platforms/<name>/review.py).
SHARED_TABLES: dict[str, ReplaceTable] = {
    "kubernetes:helm.sh/v3:Release": ReplaceTable(
        paths=("name", "namespace"),
        source="pulumi/pulumi-kubernetes provider/pkg/provider/helm_release.go Diff: forceNewFields .name, .namespace",
        checked=True,
    ),
    "kubernetes:core/v1:PersistentVolumeClaim": ReplaceTable(
        paths=("metadata.name", "metadata.namespace", "spec.accessModes", "spec.storageClassName", "spec.volumeName",
               "spec.volumeMode", "spec.selector", "spec.dataSource", "spec.dataSourceRef"),
        source="Kubernetes API validation (ValidatePersistentVolumeClaimUpdate): a bound claim's spec is immutable "
        "except resources.requests (growing) and volumeAttributesClassName, so these changes need a new claim",
        checked=False,
    ),
    "kubernetes:storage.k8s.io/v1:StorageClass": ReplaceTable(
        paths=("metadata.name", "provisioner", "parameters", "reclaimPolicy", "volumeBindingMode"),
        source="Kubernetes API validation (ValidateStorageClassUpdate): provisioner, parameters, reclaimPolicy and "
        "volumeBindingMode are immutable",
        checked=False,
    ),
}

# Every Kubernetes object (not the Helm release) is replaced when its name or namespace changes.
KUBERNETES_OBJECT = ReplaceTable(
    paths=("metadata.name", "metadata.namespace"),
    source="pulumi/pulumi-kubernetes provider Diff: a changed metadata.name/namespace is a new object",
    checked=False,
)

# Resource kinds whose replacement or deletion disrupts running work or loses data (besides each platform's).
SHARED_DISRUPTIVE_KINDS: dict[str, str] = {
    "kubernetes:core/v1:Namespace": "namespace (deletes everything in it)",
}

# What a stateful resource holds: the data a delete or replacement can lose (the review lists these first), besides
# each platform's.
SHARED_STATEFUL: dict[str, str] = {
    "kubernetes:core/v1:PersistentVolumeClaim": "the claim's volume (checkpoints, datasets): jobs would get a new, empty one",
    "kubernetes:core/v1:PersistentVolume": "the volume's data",
}


def _collected(shared: dict, area: str) -> dict:
    """The shared rows, then every registered platform's (its ReviewTraits attribute `area`), by type token."""
    out = dict(shared)
    for name in platforms.names():
        out.update(getattr(platforms.get(name).review, area))
    return out


def tables() -> dict[str, ReplaceTable]:
    """Type token -> the inputs whose change replaces such a resource: the shared rows and every platform's."""
    return _collected(SHARED_TABLES, "replace_tables")


def stateful() -> dict[str, str]:
    """Type token -> the data such a resource holds: the shared rows and every platform's."""
    return _collected(SHARED_STATEFUL, "stateful")


def data_held(type_: str, inputs: Optional[dict], protected: bool = False) -> Optional[str]:
    """What deleting or replacing this resource can lose, or None for a resource that holds no data. A platform may
    say what a resource holds by its inputs (a k3s server install holds the cluster's datastore); anything the plan
    registered with `protect` holds something too."""
    inputs = inputs or {}
    held = stateful().get(type_)
    if held is not None:
        name = (inputs.get("metadata") or {}).get("name") if isinstance(inputs.get("metadata"), dict) else None
        return f"{held} (named {name})" if name and type_.startswith("kubernetes:") else held
    for platform in platforms.names():
        held = platforms.get(platform).review.data_held(type_, inputs)
        if held:
            return held
    if protected:
        return "state the program protects (it was registered with protect)"
    return None


_INDEX = re.compile(r"\[\d+\]")


def table_for(type_: str) -> Optional[ReplaceTable]:
    found = tables().get(type_)
    if found is not None:
        return found
    if type_.startswith("kubernetes:") and not type_.startswith("kubernetes:helm.sh/") and ":" in type_[11:]:
        return KUBERNETES_OBJECT
    return None


def normalize(path: str) -> str:
    """`nodeConfig.guestAccelerators[0].type` -> `nodeConfig.guestAccelerators.type`."""
    return _INDEX.sub("", path)


def _under(path: str, rule: str) -> bool:
    return path == rule or path.startswith(rule + ".")


def forcing_rule(type_: str, path: str) -> Optional[tuple[str, str, bool]]:
    """(rule path, source, certain) when a change at `path` of a `type_` resource forces replacement."""
    table = table_for(type_)
    if table is None:
        return None
    p = normalize(path)
    for rule in table.paths:
        if _under(p, rule):
            return rule, table.source, True
    for rule in table.conditional:
        if _under(p, rule):
            return rule, table.source, False
    return None


def disruptive_kind(type_: str) -> Optional[str]:
    """What losing this resource means ("node pool", "file system", ...), or None for ordinary resources."""
    return _collected(SHARED_DISRUPTIVE_KINDS, "disruptive_kinds").get(type_)
