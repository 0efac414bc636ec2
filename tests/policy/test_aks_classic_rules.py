"""Policy tests (layer 4): every rule that judges AKS resources judges a program on the classic pulumi-azure provider
too (KubernetesCluster, KubernetesClusterNodePool), by that provider's own input names, on a valid stack with one field
changed per case (exact sets of findings and messages). The inputs are the shapes pulumi-azure 6 sends (camelCase,
numbers as floats, AKS taints as `key=value:Effect` strings): the fixtures gpufleet's own AKS stacks registered before
they moved to Azure Native (issue 53), and pulumi-azure 5's older names where they differ."""

import pytest

from gpufleet.base import labels
from gpufleet.policies import inputs as I
from tests.policy.fixtures import DELETE, OPERATOR_IN, PROMETHEUS_IN, findings, res, with_
from tests.policy.test_aks_rules import CONFLICT, PROTECT, RDMA, SCALE, SECURE, SPOT, TAINT, VERSIONS, labelled, said

CLUSTER, POOL = I.AKS_CLASSIC_CLUSTER, I.AKS_CLASSIC_NODE_POOL
CLUSTER_ID = "/subscriptions/00000000-0000-4000-8000-000000000000/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/prod"

CLASSIC_CLUSTER_IN = {
    "name": "prod", "location": "eastus", "resourceGroupName": "rg", "dnsPrefix": "prod", "kubernetesVersion": "1.35",
    "skuTier": "Standard", "privateClusterEnabled": True, "localAccountDisabled": True,
    "roleBasedAccessControlEnabled": True,
    "azureActiveDirectoryRoleBasedAccessControl": {"azureRbacEnabled": True},
    "defaultNodePool": {"name": "system", "vmSize": "Standard_D4ds_v5", "autoScalingEnabled": True, "minCount": 1.0, "maxCount": 3.0},
}
CLASSIC_POOL_IN = {
    "name": "h100", "kubernetesClusterId": CLUSTER_ID, "vmSize": "Standard_ND96isr_H100_v5", "mode": "User",
    "autoScalingEnabled": True, "minCount": 0.0, "maxCount": 4.0, "nodeCount": 0.0, "priority": "Regular",
    "gpuDriver": "None", "nodeLabels": {labels.POOL_LABEL: "h100", labels.CAPACITY_TYPE_LABEL: "on-demand"},
    "nodeTaints": ["nvidia.com/gpu=true:NoSchedule"],
}
CLASSIC_SPOT_POOL_IN = {
    **CLASSIC_POOL_IN, "name": "a100", "vmSize": "Standard_NC24ads_A100_v4", "priority": "Spot", "evictionPolicy": "Delete",
    "spotMaxPrice": -1.0,
    "nodeLabels": {labels.POOL_LABEL: "a100", labels.CAPACITY_TYPE_LABEL: "spot", labels.AKS_SPOT_KEY: "spot"},
    "nodeTaints": ["nvidia.com/gpu=true:NoSchedule", "gpufleet.io/spot=true:NoSchedule",
                   "kubernetes.azure.com/scalesetpriority=spot:NoSchedule"],
}


def v5(pool: dict) -> dict:
    """A pool as pulumi-azure 5 spells it: `enableAutoScaling` (renamed `autoScalingEnabled` in 6), no `gpuDriver`."""
    out = {k: v for k, v in pool.items() if k not in ("autoScalingEnabled", "gpuDriver")}
    return {**out, "enableAutoScaling": pool["autoScalingEnabled"]}


def stack(**changed) -> list:
    """A valid classic-provider AKS stack; `changed` replaces a resource's inputs by name (prod, h100, a100,
    gpu-operator)."""
    inputs = {"prod": CLASSIC_CLUSTER_IN, "h100": CLASSIC_POOL_IN, "a100": CLASSIC_SPOT_POOL_IN, "gpu-operator": OPERATOR_IN,
              **changed}
    return [res(CLUSTER, "prod", inputs["prod"], protect=True), res(POOL, "h100", inputs["h100"]),
            res(POOL, "a100", inputs["a100"]), res(I.HELM_RELEASE, "gpu-operator", inputs["gpu-operator"]),
            res(I.HELM_RELEASE, "kube-prometheus-stack", PROMETHEUS_IN)]


def test_the_valid_stack_passes_every_rule():
    assert findings(stack()) == set()


@pytest.mark.parametrize("pool,path,value,expected", [
    ("h100", "minCount", 1.0, {(SCALE, "h100", "mandatory")}),
    ("h100", "autoScalingEnabled", False, {(SCALE, "h100", "mandatory")}),
    ("a100", "minCount", 2.0, {(SCALE, "a100", "mandatory")}),
    ("h100", "minCount", 0.0, set()),
    # In a capacity reservation group the minimum is committed spend, not idle cost.
    ("h100", "capacityReservationGroupId", "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/"
     "capacityReservationGroups/crg", set()),
])
def test_scale_to_zero(pool, path, value, expected):
    base = CLASSIC_POOL_IN if pool == "h100" else CLASSIC_SPOT_POOL_IN
    changed = with_(base, path, value)
    if path == "capacityReservationGroupId":
        changed = with_(changed, "minCount", 1.0)
    assert findings(stack(**{pool: changed}), policy=SCALE) == expected


def test_scale_to_zero_messages_name_the_field_the_program_sets():
    assert said(stack(h100=with_(CLASSIC_POOL_IN, "minCount", 1.0)), SCALE) == [
        "GPU pool 'h100': minCount is 1, not 0: 1 idle node(s) cost $98.32/h ($98.32/h each, catalog on-demand estimate) "
        "while no GPU work runs"]
    fixed = with_(with_(CLASSIC_POOL_IN, "autoScalingEnabled", False), "nodeCount", 2.0)
    assert said(stack(h100=fixed), SCALE) == [
        "GPU pool 'h100': autoScalingEnabled is not true, so the cluster autoscaler never scales the pool to or from 0: "
        "2 idle node(s) cost $196.64/h ($98.32/h each, catalog on-demand estimate)"]
    # pulumi-azure 5: the same switch under its old name, named as the program wrote it.
    assert findings(stack(h100=v5(CLASSIC_POOL_IN)), policy=SCALE) == set()
    assert said(stack(h100=v5(with_(CLASSIC_POOL_IN, "autoScalingEnabled", False))), SCALE) == [
        "GPU pool 'h100': enableAutoScaling is not true, so the cluster autoscaler never scales the pool to or from 0"]


@pytest.mark.parametrize("path,value,expected", [
    ("evictionPolicy", "Deallocate", {(SPOT, "a100", "mandatory")}),
    ("evictionPolicy", DELETE, set()),  # unset is Delete (pulumi-azure: "will default to Delete")
    ("nodeTaints", ["nvidia.com/gpu=true:NoSchedule"], {(SPOT, "a100", "mandatory")}),
    # AKS's own Spot taint alone is a spot taint.
    ("nodeTaints", ["nvidia.com/gpu=true:NoSchedule", "kubernetes.azure.com/scalesetpriority=spot:NoSchedule"], set()),
])
def test_spot_safety(path, value, expected):
    assert findings(stack(a100=with_(CLASSIC_SPOT_POOL_IN, path, value)), policy=SPOT) == expected


def test_spot_is_read_from_priority():
    """A Regular pool without spot taints passes; the same pool with `priority: Spot` is judged as spot."""
    unmarked = {**CLASSIC_POOL_IN, "name": "a100"}
    assert findings(stack(a100=unmarked), policy=SPOT) == set()
    assert said(stack(a100={**unmarked, "priority": "Spot", "evictionPolicy": "Deallocate"}), SPOT)[-1] == (
        "spot GPU pool 'a100': evictionPolicy is Deallocate: evicted nodes stay deallocated (counted against the VM "
        "quota, disks billed) and block the autoscaler; use Delete")


@pytest.mark.parametrize("taints,expected", [
    ([], {(TAINT, "h100", "mandatory")}),
    (["nvidia.com/gpu=true:PreferNoSchedule"], {(TAINT, "h100", "mandatory")}),
    (["nvidia.com/gpu=true:NoExecute"], set()),
])
def test_gpu_taint(taints, expected):
    assert findings(stack(h100=with_(CLASSIC_POOL_IN, "nodeTaints", taints)), policy=TAINT) == expected


@pytest.mark.parametrize("path,value,expected", [
    ("privateClusterEnabled", False, [
        "public API server: apiServerAccessProfile.authorizedIpRanges open to the internet (0.0.0.0/0: more than a /8's "
        "worth of public addresses): set privateClusterEnabled=true, or list your networks"]),
    ("localAccountDisabled", DELETE, ["local accounts are enabled (localAccountDisabled is not true): the cluster-admin "
                                      "certificate bypasses Entra ID; set localAccountDisabled=true"]),
    ("azureActiveDirectoryRoleBasedAccessControl", DELETE, [
        "no Microsoft Entra ID integration (azureActiveDirectoryRoleBasedAccessControl): users authenticate with cluster "
        "certificates instead of Entra ID"]),
    ("roleBasedAccessControlEnabled", False, ["Kubernetes RBAC is off (roleBasedAccessControlEnabled=false)"]),
    ("roleBasedAccessControlEnabled", DELETE, []),  # unset is on ("Defaults to true")
])
def test_secure_defaults(path, value, expected):
    assert said(stack(prod=with_(CLASSIC_CLUSTER_IN, path, value)), SECURE) == expected


@pytest.mark.parametrize("path,ranges,expected", [
    ("apiServerAccessProfile.authorizedIpRanges", ["203.0.113.0/24"], []),
    # pulumi-azure 5's top-level field (deprecated there, gone in 6), named as the program wrote it.
    ("apiServerAuthorizedIpRanges", ["203.0.113.0/24"], []),
    ("apiServerAuthorizedIpRanges", ["0.0.0.0/1", "128.0.0.0/1"], [
        "public API server: apiServerAuthorizedIpRanges open to the internet (0.0.0.0/1, 128.0.0.0/1: more than a /8's "
        "worth of public addresses): set privateClusterEnabled=true, or list your networks"]),
])
def test_public_api_server_with_authorized_ranges(path, ranges, expected):
    public = with_(with_(CLASSIC_CLUSTER_IN, "privateClusterEnabled", False), path, ranges)
    assert said(stack(prod=public), SECURE) == expected


def test_driver_installed_twice_or_not_at_all():
    aks_driver = {n: with_(p, "gpuDriver", "Install") for n, p in (("h100", CLASSIC_POOL_IN), ("a100", CLASSIC_SPOT_POOL_IN))}
    assert findings(stack(**aks_driver), policy=CONFLICT) == {(CONFLICT, "gpu-operator", "mandatory")}
    # Unset means Install (AKS's API default; pulumi-azure before 6.27 cannot set it), so a pool that says nothing has
    # AKS's driver too.
    assert findings(stack(h100=with_(CLASSIC_POOL_IN, "gpuDriver", DELETE)), policy=CONFLICT) == {
        (CONFLICT, "gpu-operator", "mandatory")}
    off = with_(with_(OPERATOR_IN, "values.driver", {"enabled": False}), "values.toolkit", {"enabled": False})
    assert findings(stack(**{"gpu-operator": off}), policy=CONFLICT) == {
        (CONFLICT, "h100", "mandatory"), (CONFLICT, "a100", "mandatory")}
    assert findings(stack(**aks_driver, **{"gpu-operator": off}), policy=CONFLICT) == set()


def test_operator_release_against_the_aks_kubernetes_version():
    # v25.10.1 lists Kubernetes up to 1.35 (drivers.yaml); an AKS 1.36 control plane is outside it.
    old = with_(OPERATOR_IN, "version", "v25.10.1")
    assert findings(stack(**{"gpu-operator": old}), policy=VERSIONS) == set()
    assert said(stack(prod=with_(CLASSIC_CLUSTER_IN, "kubernetesVersion", "1.36"), **{"gpu-operator": old}), VERSIONS) == [
        "Kubernetes 1.36 (KubernetesCluster 'prod') is not supported by GPU Operator v25.10.1 (supported: 1.30, "
        "1.31, 1.32, 1.33, 1.34, 1.35)"]


def test_unprotected_cluster_and_its_tag_exemption():
    unprotected = [res(CLUSTER, "prod", CLASSIC_CLUSTER_IN, protect=False)]
    assert said(unprotected, PROTECT) == [
        "an AKS control plane (its etcd holds every Kubernetes object) is not protected: `pulumi destroy` or a replacing "
        "change deletes it; register it with protect=True (gpufleet: cluster.protection), or exempt it with a reason"]
    tagged = with_(CLASSIC_CLUSTER_IN, f"tags.{labels.gcp_exempt_key(PROTECT)}", "disposable test cluster")
    assert findings([res(CLUSTER, "prod", tagged, protect=False)], policy=PROTECT) == set()


def test_infiniband_pool_in_one_zone_on_an_infiniband_size():
    ib = {**labelled(CLASSIC_POOL_IN, labels.RDMA_NODE_LABEL, "true"), "zones": ["1"]}
    assert findings(stack(h100=ib), policy=RDMA) == set()
    assert said(stack(h100={**ib, "zones": ["1", "2"]}), RDMA) == [
        "InfiniBand pool 'h100' spans zones 1, 2: its nodes would not share one InfiniBand fabric; keep it in one zone"]
    no_ib = labelled(CLASSIC_SPOT_POOL_IN, labels.RDMA_NODE_LABEL, "true")
    assert said(stack(a100=no_ib), RDMA) == [
        "RDMA pool 'a100' runs Standard_NC24ads_A100_v4, which has no InfiniBand: NCCL falls back to TCP"]
