"""`gpufleet aks migrate-state` (issue 53, docs/aks.md): a classic-provider AKS stack's export, rewritten so that
`pulumi import --file` adopts the same Azure objects under Azure Native. The classic export is built from the Azure
Native plan of aks-train itself (every Azure resource given back its classic type, the same logical name, parent and
ARM id), so the test proves that each import lands on the URN the program registers, with the id Azure Native uses."""

from __future__ import annotations

import dataclasses
import json

import pytest

from gpufleet.app import cli
from gpufleet.components.aks.migration import CLASSIC_TO_NATIVE, migrate, native_id
from gpufleet.testing import mocked_id
from tests.helpers import planned

NATIVE_TO_CLASSIC = {v: k for k, v in CLASSIC_TO_NATIVE.items()}
FEATURE = "azure-native:features:SubscriptionFeatureRegistration"
SUB = "00000000-0000-4000-8000-000000000000"


@pytest.fixture(scope="module")
def native():
    """The example's plan (shared with the other tests that plan it), plus the feature registration a stack with
    `infinibandFeature: register` holds, as the plan registers it (tests/component/test_aks_infiniband_feature.py)."""
    plan = planned("aks-train")
    cluster = next(r for r in plan.resources if r.type == "azure-native:containerservice:ManagedCluster")
    feature = dataclasses.replace(
        cluster, type=FEATURE, name="aks-train-infiniband-feature-registration", protect=False,
        urn=cluster.urn.rsplit("::", 2)[0].rsplit("$", 2)[0] + f"$gpufleet:aks:InfinibandFeature${FEATURE}::"
        "aks-train-infiniband-feature-registration",
        inputs={"featureName": "AKSInfinibandSupport", "providerNamespace": "Microsoft.ContainerService"})
    return dataclasses.replace(plan, resources=[*plan.resources, feature])


def classic_export(plan) -> dict:
    """What `pulumi stack export` held before the upgrade: the classic types at the same names and parents, the ids
    azurerm records (the ARM ids; the feature's own id for the feature registration), and the Kubernetes provider
    depending on the cluster."""
    out, cluster = [], None
    for r in plan.resources:
        classic = NATIVE_TO_CLASSIC.get(r.type)
        if classic is None:
            out.append({"urn": r.urn, "type": r.type, "custom": r.custom, "parent": r.parent})
            continue
        rid = mocked_id(r)
        if r.type == FEATURE:
            rid = f"/subscriptions/{SUB}/providers/Microsoft.Features/providers/Microsoft.ContainerService/features/AKSInfinibandSupport"
        urn = r.urn.replace(f"${r.type}::", f"${classic}::")
        out.append({"urn": urn, "type": classic, "id": rid, "custom": True, "parent": r.parent, "protect": r.protect})
        if classic.endswith("KubernetesCluster"):
            cluster = urn
    provider = next(r for r in out if r["type"] == "pulumi:providers:kubernetes")
    provider.update(dependencies=[cluster], propertyDependencies={"kubeconfig": [cluster]})
    return {"version": 3, "deployment": {"manifest": {}, "resources": out}}


def test_every_import_lands_on_the_urn_and_id_azure_native_uses(native):
    before = classic_export(native)
    after, imports, moved = migrate(before)
    wanted = sorted((r.type, r.name, mocked_id(r), r.parent, r.protect) for r in native.resources if r.type in NATIVE_TO_CLASSIC)
    got = sorted((e["type"], e["name"], e["id"], imports["nameTable"][e["parent"]], e.get("protect", False))
                 for e in imports["resources"])
    assert got == wanted and len(got) == 8  # group, network, subnet, cluster, role, feature, two pools
    assert {e["name"]: e["id"] for e in imports["resources"] if e["type"] == FEATURE} == {
        "aks-train-infiniband-feature-registration": f"/subscriptions/{SUB}/providers/Microsoft.Features/featureProviders/"
        "Microsoft.ContainerService/subscriptionFeatureRegistrations/AKSInfinibandSupport"}
    # The classic resources leave the state; the rest stays, without its edges to them.
    assert {m.urn.rsplit("::", 2)[-2].rsplit("$", 1)[-1] for m in moved} == set(CLASSIC_TO_NATIVE)  # classic URNs in
    assert len(moved) == 8 and not [r for r in after["deployment"]["resources"] if r["type"].startswith("azure:")]
    assert len(after["deployment"]["resources"]) == len(before["deployment"]["resources"]) - 8
    provider = next(r for r in after["deployment"]["resources"] if r["type"] == "pulumi:providers:kubernetes")
    assert (provider["dependencies"], provider["propertyDependencies"]) == ([], {"kubeconfig": []})


def test_only_the_feature_id_changes_form():
    group = "/subscriptions/s/resourceGroups/rg"
    assert native_id("azure:core/resourceGroup:ResourceGroup", group) == group
    assert native_id("azure:core/resourceProviderFeatureRegistration:ResourceProviderFeatureRegistration",
                     "/subscriptions/s/providers/Microsoft.Features/providers/Microsoft.ContainerService/features/F") == (
        "/subscriptions/s/providers/Microsoft.Features/featureProviders/Microsoft.ContainerService/"
        "subscriptionFeatureRegistrations/F")


def test_the_command_writes_both_files_and_refuses_what_it_cannot_read(native, tmp_path, capsys):
    state = tmp_path / "before.json"
    state.write_text(json.dumps(classic_export(native)))
    out, imp = tmp_path / "after.json", tmp_path / "import.json"
    argv = ["aks", "migrate-state", "--state", str(state), "--out", str(out), "--import-file", str(imp)]
    assert cli.main(argv) == 0
    printed = capsys.readouterr().out
    assert f"pulumi stack import --file {out}\npulumi import --file {imp} --generate-code=false --protect=false\n" in printed
    assert len(json.loads(imp.read_text())["resources"]) == 8
    state.write_text(json.dumps({"version": 3, "deployment": {"resources": []}}))
    assert cli.main(argv) == 2
    assert "holds no classic pulumi-azure AKS resource: nothing to move" in capsys.readouterr().err
    state.write_text("{not json")
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("gpufleet: aks migrate-state: ") and "Traceback" not in err
