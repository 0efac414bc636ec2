"""One owner per object (issue 49): the objects of a stack that two owners (two Helm releases, a release and gpufleet
itself) would create with the same identity, and CRDs whose copies differ. An object's identity is its API group,
kind, namespace (a namespaced object without one lands in its release's namespace) and name. Helm fails the second
owner of an object ("invalid ownership metadata"; Pulumi "already exists"); Helm installs a crds/ CRD only when it is
absent, so with two different copies the schema the cluster serves depends on which installs first."""

from __future__ import annotations

from typing import Any

# Kinds that have no namespace: an object of these without metadata.namespace keeps none.
CLUSTER_SCOPED = {
    "CustomResourceDefinition", "Namespace", "ClusterRole", "ClusterRoleBinding", "PriorityClass", "StorageClass",
    "CSIDriver", "RuntimeClass", "PersistentVolume", "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration",
    "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "APIService", "IngressClass", "GatewayClass",
    "DeviceClass", "ClusterPolicy", "NVIDIADriver", "NodeFeatureRule", "ResourceFlavor", "ClusterQueue", "Topology",
    "Cohort", "ClusterTriggerAuthentication", "ClusterPodMonitoring", "ClusterRules", "GlobalRules", "ClusterIssuer",
    "NicClusterPolicy", "ComputeDomainClique", "ClusterTrainingRuntime", "Node", "IPPool", "CIDRPool",
}


def identity(obj: dict, default_namespace: str) -> str:
    group = obj.get("apiVersion", "").rpartition("/")[0] or "core"
    kind = obj.get("kind", "")
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace") or ("" if kind in CLUSTER_SCOPED else default_namespace)
    return f"{group} {kind} {namespace + '/' if namespace else ''}{meta.get('name')}"


def own_objects(plan: Any) -> list[tuple[str, dict, str]]:
    """(owner, object, default namespace) of the Kubernetes objects gpufleet registers itself (not Helm releases nor
    applied manifests: their objects come from their renders)."""
    out = []
    for r in plan.resources:
        if not r.type.startswith("kubernetes:") or r.type.startswith(("kubernetes:helm.sh/", "kubernetes:yaml/")):
            continue
        if r.type == "kubernetes:index:Provider" or r.type.startswith("pulumi:"):
            continue
        group_version, _, kind = r.type.removeprefix("kubernetes:").rpartition(":")
        if kind == "CustomResource":
            api_version, kind = r.inputs.get("apiVersion", ""), r.inputs.get("kind", "")
        else:
            group, _, version = group_version.partition("/")
            api_version = version if group == "core" else f"{group}/{version}"
        meta = (r.revealed or {}).get("metadata") or r.inputs.get("metadata") or {}
        if kind.endswith("Patch") or not meta.get("name"):
            continue
        out.append((f"gpufleet {r.name}", {"apiVersion": api_version, "kind": kind, "metadata": meta}, "default"))
    return out


def applied_crds(plan: Any) -> list[tuple[str, dict, str]]:
    """(owner, CRD, "") of the CRDs gpufleet applies before a chart's release (components/chart_crds.py: a ConfigGroup
    `<name>-crds` holding the archive's crds/ as YAML; issue 51). Owned by gpufleet: Helm, told skip_crds, never sees
    them, so another release's copy of the same CRD is a second owner."""
    from gpufleet.base.chart_crds import crd_documents

    out = []
    for r in plan.resources:
        if r.type == "kubernetes:yaml/v2:ConfigGroup" and r.name.endswith("-crds") and isinstance(r.inputs.get("yaml"), str):
            out += [(f"gpufleet {r.name}", crd, "") for crd in crd_documents(r.inputs["yaml"])]
    return out


def duplicates(objects: list[tuple[str, dict, str]]) -> dict[str, str]:
    """identity -> why, for every object two owners create (a CRD two releases carry: whether the copies differ)."""
    seen: dict[str, list[tuple[str, dict]]] = {}
    for owner, obj, namespace in objects:
        seen.setdefault(identity(obj, namespace), []).append((owner, obj))
    out = {}
    for key, found in seen.items():
        owners = sorted({o for o, _ in found})
        if len(found) < 2:
            continue
        if len(owners) == 1:
            continue  # one owner rendering the same object twice is Helm's own business (it refuses such a chart)
        differ = any(found[0][1].get("spec") != o.get("spec") for _, o in found[1:])
        if not differ and all(o.endswith("crds/") for o in owners):
            continue  # identical crds/ copies: Helm installs whichever comes first and owns neither (no ownership labels)
        what = "copies differ" if differ else "identical copies"
        out[key] = f"{', '.join(owners)} ({what})"
    return out
