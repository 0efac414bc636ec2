"""Policy tests (layer 4): every rule that judges AKS resources, on a valid AKS stack with one field changed per case
(exact sets of findings). The inputs are the shapes pulumi-azure-native sends (the AKS REST API's property names,
numbers as floats, AKS taints as `key=value:Effect` strings), as the example stack aks-train registers them."""

import pytest

from gpufleet.base import labels
from gpufleet.policies import inputs as I
from tests.policy.fixtures import DELETE, OPERATOR_IN, PROMETHEUS_IN, findings, messages, res, with_

SCALE, SPOT, TAINT, SECURE, CONFLICT, VERSIONS, PROTECT, RDMA = (
    "gpu-pool-scale-to-zero", "spot-pool-safety", "gpu-pool-taint", "secure-defaults", "gpu-operator-driver-conflict",
    "gpu-operator-version-support", "stateful-resource-protection", "rdma-placement")
AKS_CLUSTER_IN = {
    "resourceName": "prod", "location": "eastus", "resourceGroupName": "rg", "dnsPrefix": "prod", "kubernetesVersion": "1.35",
    "sku": {"name": "Base", "tier": "Standard"}, "apiServerAccessProfile": {"enablePrivateCluster": True},
    "disableLocalAccounts": True, "enableRBAC": True, "aadProfile": {"managed": True, "enableAzureRBAC": True},
    "agentPoolProfiles": [{"name": "system", "mode": "System", "vmSize": "Standard_D4ds_v5", "enableAutoScaling": True,
                           "minCount": 1.0, "maxCount": 3.0}],
}
POOL_IN = {
    "agentPoolName": "h100", "resourceName": "prod", "resourceGroupName": "rg", "vmSize": "Standard_ND96isr_H100_v5",
    "mode": "User", "enableAutoScaling": True, "minCount": 0.0, "maxCount": 4.0, "count": 0.0, "scaleSetPriority": "Regular",
    "gpuProfile": {"driver": "None"}, "nodeLabels": {labels.POOL_LABEL: "h100", labels.CAPACITY_TYPE_LABEL: "on-demand"},
    "nodeTaints": ["nvidia.com/gpu=true:NoSchedule"],
}
SPOT_POOL_IN = {
    **POOL_IN, "agentPoolName": "a100", "vmSize": "Standard_NC24ads_A100_v4", "scaleSetPriority": "Spot",
    "scaleSetEvictionPolicy": "Delete", "spotMaxPrice": -1.0,
    "nodeLabels": {labels.POOL_LABEL: "a100", labels.CAPACITY_TYPE_LABEL: "spot", labels.AKS_SPOT_KEY: "spot"},
    "nodeTaints": ["nvidia.com/gpu=true:NoSchedule", "gpufleet.io/spot=true:NoSchedule",
                   "kubernetes.azure.com/scalesetpriority=spot:NoSchedule"],
}


def said(resources: list, policy: str) -> list[str]:
    """The rule's messages without the policy description the runner puts on their first line."""
    return [m.split("\n", 1)[-1] for m in messages(resources, policy)]


def labelled(base: dict, key: str, value: str) -> dict:
    """base with one node label set (label keys hold dots, which with_() reads as a path)."""
    return {**base, "nodeLabels": {**base["nodeLabels"], key: value}}


def stack(**changed) -> list:
    """A valid AKS stack; `changed` replaces a resource's inputs by name (prod, h100, a100, gpu-operator)."""
    inputs = {"prod": AKS_CLUSTER_IN, "h100": POOL_IN, "a100": SPOT_POOL_IN, "gpu-operator": OPERATOR_IN, **changed}
    return [res(I.AKS_CLUSTER, "prod", inputs["prod"], protect=True), res(I.AKS_NODE_POOL, "h100", inputs["h100"]),
            res(I.AKS_NODE_POOL, "a100", inputs["a100"]), res(I.HELM_RELEASE, "gpu-operator", inputs["gpu-operator"]),
            res(I.HELM_RELEASE, "kube-prometheus-stack", PROMETHEUS_IN)]


def test_the_valid_stack_passes_every_rule():
    assert findings(stack()) == set()


@pytest.mark.parametrize("pool,path,value,expected", [
    ("h100", "minCount", 1.0, {(SCALE, "h100", "mandatory")}),
    ("h100", "enableAutoScaling", False, {(SCALE, "h100", "mandatory")}),
    ("a100", "minCount", 2.0, {(SCALE, "a100", "mandatory")}),
    ("h100", "minCount", 0.0, set()),
])
def test_scale_to_zero(pool, path, value, expected):
    base = POOL_IN if pool == "h100" else SPOT_POOL_IN
    assert findings(stack(**{pool: with_(base, path, value)}), policy=SCALE) == expected


def test_a_fixed_pool_without_a_node_count_names_no_idle_cost():
    """Issue 56: `count or 0` -> `or 1` survived; a pool that says no count has no idle node to price."""
    fixed = {k: v for k, v in with_(POOL_IN, "enableAutoScaling", False).items() if k != "count"}
    assert said(stack(h100=fixed), SCALE) == [
        "GPU pool 'h100': enableAutoScaling is not true, so the cluster autoscaler never scales the pool to or from 0"]


def test_scale_to_zero_message_and_node_label_exemption():
    always_on = with_(POOL_IN, "minCount", 1.0)
    assert said(stack(h100=always_on), SCALE) == [
        "GPU pool 'h100': minCount is 1, not 0: 1 idle node(s) cost $98.32/h ($98.32/h each, catalog on-demand estimate) "
        "while no GPU work runs"]
    exempt = labelled(always_on, labels.exempt_key(SCALE), "always-on-inference")
    assert findings(stack(h100=exempt), policy=SCALE) == set()


@pytest.mark.parametrize("path,value,expected", [
    ("scaleSetEvictionPolicy", "Deallocate", {(SPOT, "a100", "mandatory")}),
    ("nodeTaints", ["nvidia.com/gpu=true:NoSchedule"], {(SPOT, "a100", "mandatory")}),
    # AKS's own Spot taint alone is a spot taint.
    ("nodeTaints", ["nvidia.com/gpu=true:NoSchedule", "kubernetes.azure.com/scalesetpriority=spot:NoSchedule"], set()),
])
def test_spot_safety(path, value, expected):
    assert findings(stack(a100=with_(SPOT_POOL_IN, path, value)), policy=SPOT) == expected


def test_spot_pool_labelled_on_demand():
    mislabelled = labelled(SPOT_POOL_IN, labels.CAPACITY_TYPE_LABEL, "on-demand")
    assert findings(stack(a100=mislabelled), policy=SPOT) == {(SPOT, "a100", "mandatory")}


def test_spot_eviction_message():
    assert said(stack(a100=with_(SPOT_POOL_IN, "scaleSetEvictionPolicy", "Deallocate")), SPOT) == [
        "spot GPU pool 'a100': scaleSetEvictionPolicy is Deallocate: evicted nodes stay deallocated (counted against the VM "
        "quota, disks billed) and block the autoscaler; use Delete"]


@pytest.mark.parametrize("taints,expected", [
    ([], {(TAINT, "h100", "mandatory")}),
    (["nvidia.com/gpu=true:PreferNoSchedule"], {(TAINT, "h100", "mandatory")}),
    (["nvidia.com/gpu=true:NoExecute"], set()),
])
def test_gpu_taint(taints, expected):
    assert findings(stack(h100=with_(POOL_IN, "nodeTaints", taints)), policy=TAINT) == expected


@pytest.mark.parametrize("path,value,expected", [
    ("apiServerAccessProfile.enablePrivateCluster", False, [
        "public API server: apiServerAccessProfile.authorizedIPRanges open to the internet (0.0.0.0/0: more than a /8's "
        "worth of public addresses): set apiServerAccessProfile.enablePrivateCluster=true, or list your networks"]),
    ("disableLocalAccounts", DELETE, ["local accounts are enabled (disableLocalAccounts is not true): the cluster-admin "
                                      "certificate bypasses Entra ID; set disableLocalAccounts=true"]),
    ("aadProfile", DELETE, [
        "no Microsoft Entra ID integration (aadProfile): users authenticate with cluster certificates instead of Entra "
        "ID"]),
    ("enableRBAC", False, ["Kubernetes RBAC is off (enableRBAC=false)"]),
])
def test_secure_defaults(path, value, expected):
    assert said(stack(prod=with_(AKS_CLUSTER_IN, path, value)), SECURE) == expected


def test_public_api_server_with_authorized_ranges_passes():
    public = with_(with_(AKS_CLUSTER_IN, "apiServerAccessProfile.enablePrivateCluster", False),
                   "apiServerAccessProfile.authorizedIPRanges", ["203.0.113.0/24"])
    assert findings(stack(prod=public), policy=SECURE) == set()


def test_driver_installed_twice_or_not_at_all():
    aks_driver = {n: with_(p, "gpuProfile.driver", "Install") for n, p in (("h100", POOL_IN), ("a100", SPOT_POOL_IN))}
    assert findings(stack(**aks_driver), policy=CONFLICT) == {(CONFLICT, "gpu-operator", "mandatory")}
    # Unset means Install (AKS's API default), so a pool that says nothing has AKS's driver too.
    assert findings(stack(h100=with_(POOL_IN, "gpuProfile", DELETE)), policy=CONFLICT) == {(CONFLICT, "gpu-operator", "mandatory")}
    off = with_(with_(OPERATOR_IN, "values.driver", {"enabled": False}), "values.toolkit", {"enabled": False})
    assert findings(stack(**{"gpu-operator": off}), policy=CONFLICT) == {(CONFLICT, "h100", "mandatory"), (CONFLICT, "a100", "mandatory")}
    assert findings(stack(**aks_driver, **{"gpu-operator": off}), policy=CONFLICT) == set()


def test_operator_release_against_the_aks_kubernetes_version():
    # v25.10.1 lists Kubernetes up to 1.35 (drivers.yaml); an AKS 1.36 control plane is outside it.
    old = with_(OPERATOR_IN, "version", "v25.10.1")
    assert findings(stack(prod=with_(AKS_CLUSTER_IN, "kubernetesVersion", "1.36"), **{"gpu-operator": old}),
                    policy=VERSIONS) == {(VERSIONS, "gpu-operator", "mandatory")}


def test_unprotected_cluster_and_its_tag_exemption():
    unprotected = [res(I.AKS_CLUSTER, "prod", AKS_CLUSTER_IN, protect=False)]
    assert findings(unprotected, policy=PROTECT) == {(PROTECT, "prod", "mandatory")}
    tagged = with_(AKS_CLUSTER_IN, f"tags.{labels.gcp_exempt_key(PROTECT)}", "disposable test cluster")
    assert findings([res(I.AKS_CLUSTER, "prod", tagged, protect=False)], policy=PROTECT) == set()


def test_infiniband_pool_in_one_zone_on_an_infiniband_size():
    ib = {**labelled(POOL_IN, labels.RDMA_NODE_LABEL, "true"), "availabilityZones": ["1"]}
    assert findings(stack(h100=ib), policy=RDMA) == set()
    assert said(stack(h100={**ib, "availabilityZones": ["1", "2"]}), RDMA) == [
        "InfiniBand pool 'h100' spans zones 1, 2: its nodes would not share one InfiniBand fabric; keep it in one zone"]
    no_ib = {**labelled(SPOT_POOL_IN, labels.RDMA_NODE_LABEL, "true")}
    assert said(stack(a100=no_ib), RDMA) == [
        "RDMA pool 'a100' runs Standard_NC24ads_A100_v4, which has no InfiniBand: NCCL falls back to TCP"]
