"""The one-time move of an AKS stack's state from the classic pulumi-azure provider to pulumi-azure-native (issue 53;
docs/aks.md, "Moving a stack from the classic provider").

The resource types differ, and Pulumi aliases cannot carry state from one provider's type to another's, so the Azure
objects are adopted anew: the classic resources leave the state (`pulumi stack import` of a rewritten export; `pulumi
state delete` refuses them, since the Kubernetes provider depends on the cluster) and the same Azure objects come back
under their Azure Native types, logical names and parents (`pulumi import --file`). Nothing here touches Azure.

Pure data in, data out: no Pulumi or Azure SDK is imported, so the command runs without either.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# The classic types gpufleet's AKS components created (components/aks/ before issue 53) -> the Azure Native types that
# replace them, one for one, under the same logical names and parents.
CLASSIC_TO_NATIVE = {
    "azure:core/resourceGroup:ResourceGroup": "azure-native:resources:ResourceGroup",
    "azure:network/virtualNetwork:VirtualNetwork": "azure-native:network:VirtualNetwork",
    "azure:network/subnet:Subnet": "azure-native:network:Subnet",
    "azure:containerservice/kubernetesCluster:KubernetesCluster": "azure-native:containerservice:ManagedCluster",
    "azure:containerservice/kubernetesClusterNodePool:KubernetesClusterNodePool": "azure-native:containerservice:AgentPool",
    "azure:authorization/assignment:Assignment": "azure-native:authorization:RoleAssignment",
    "azure:core/resourceProviderFeatureRegistration:ResourceProviderFeatureRegistration":
        "azure-native:features:SubscriptionFeatureRegistration",
}

# azurerm's id of a feature registration is the feature's (Microsoft.Features/providers/<ns>/features/<name>:
# terraform-provider-azurerm resource_provider_feature_registration, "Import"); Azure Native's resource is the
# subscriptionFeatureRegistrations one (Microsoft.Features/featureProviders/<ns>/subscriptionFeatureRegistrations/
# <name>, API 2021-07-01). Every other id is the ARM id in both providers.
_CLASSIC_FEATURE_ID = re.compile(r"^(/subscriptions/[^/]+)/providers/Microsoft\.Features/providers/([^/]+)/features/([^/]+)$",
                                 re.IGNORECASE)


class MigrationError(ValueError):
    """The export is not a `pulumi stack export` document this can read."""


@dataclass(frozen=True)
class Moved:
    urn: str
    """The classic resource's URN (leaves the state)."""
    native_type: str
    name: str
    """Its logical name, kept."""
    id: str
    """The Azure id Azure Native imports."""
    protect: bool


def native_id(classic_type: str, classic_id: str) -> str:
    """The id Azure Native imports for the object a classic resource of this type manages."""
    if classic_type == "azure:core/resourceProviderFeatureRegistration:ResourceProviderFeatureRegistration":
        found = _CLASSIC_FEATURE_ID.match(classic_id)
        if found:
            sub, namespace, feature = found.groups()
            return (f"{sub}/providers/Microsoft.Features/featureProviders/{namespace}/subscriptionFeatureRegistrations/"
                    f"{feature}")
    return classic_id


def _resources(export: dict) -> list[dict]:
    deployment = export.get("deployment") if isinstance(export, dict) else None
    resources = deployment.get("resources") if isinstance(deployment, dict) else None
    if not isinstance(resources, list):
        raise MigrationError("not a `pulumi stack export` document: no deployment.resources list")
    return [r for r in resources if isinstance(r, dict)]


def migrate(export: dict) -> tuple[dict, dict, list[Moved]]:
    """(the export without the classic AKS resources, the `pulumi import --file` document that adopts their Azure
    objects under Azure Native, what moved). Other resources keep everything but their dependency edges to the
    removed ones, which the next `pulumi up` registers again against the imported resources."""
    resources = _resources(export)
    moved: list[Moved] = []
    for r in resources:
        native = CLASSIC_TO_NATIVE.get(str(r.get("type")))
        if native is None:
            continue
        urn, rid = str(r.get("urn") or ""), r.get("id")
        if not urn or not isinstance(rid, str) or not rid:
            raise MigrationError(f"resource {urn or '(no urn)'} of type {r.get('type')} has no id to import")
        moved.append(Moved(urn, native, urn.rsplit("::", 1)[-1], native_id(str(r["type"]), rid), bool(r.get("protect"))))
    gone = {m.urn for m in moved}
    kept = []
    for r in resources:
        if r.get("urn") in gone:
            continue
        r = dict(r)
        if isinstance(r.get("dependencies"), list):
            r["dependencies"] = [d for d in r["dependencies"] if d not in gone]
        if isinstance(r.get("propertyDependencies"), dict):
            r["propertyDependencies"] = {k: [d for d in v if d not in gone] for k, v in r["propertyDependencies"].items()
                                         if isinstance(v, list)}
        if r.get("deletedWith") in gone:
            del r["deletedWith"]
        kept.append(r)
    after = {**export, "deployment": {**export["deployment"], "resources": kept}}
    parents = {m.urn: next((r.get("parent") for r in resources if r.get("urn") == m.urn), None) for m in moved}
    names: dict[str, str] = {}
    for urn in parents.values():
        if urn and urn not in names:
            names[urn] = f"parent{len(names)}"
    entries = []
    for m in moved:
        entry = {"type": m.native_type, "name": m.name, "id": m.id}
        if parents[m.urn]:
            entry["parent"] = names[parents[m.urn]]
        if m.protect:
            entry["protect"] = True
        entries.append(entry)
    return after, {"nameTable": {key: urn for urn, key in names.items()}, "resources": entries}, moved


def steps(state_out: str, import_file: str) -> str:
    """The commands that apply the two files, in order."""
    return (f"pulumi stack import --file {state_out}\n"
            f"pulumi import --file {import_file} --generate-code=false --protect=false\n"
            "pulumi preview --diff   # expect updates only; a replacement means an input differs from the live object\n")
