"""Component tests (layer 2): SR-IOV RDMA pools — the Network Operator enables its SR-IOV subchart and
declares a SriovNetworkNodePolicy and a SriovNetwork per sriov pool, beside the lab's macvlan pool.

The SR-IOV operator's CRDs are not in ../shared/reference: `SCHEMAS` below transcribes the spec fields (names,
types, enums, bounds, required) of the upstream CRDs we read, k8snetworkplumbingwg/sriov-network-operator
config/crd/bases/sriovnetwork.openshift.io_sriovnetworknodepolicies.yaml (commit
0d2faf1c6d03687334ab9ef6825c8cc8c4b0e6e8) and sriovnetwork.openshift.io_sriovnetworks.yaml (commit
36d7243009134a63463172d467754a0723172478); unknown fields are rejected, like `kubectl apply --validate=strict`.
"""

import json

import jsonschema
import pytest
import yaml

from gpufleet.components.gpu_stack.network_operator import NetworkOperatorArgs, chart_values, network, nic_cluster_policy, pod_resource
from gpufleet.components.gpu_stack.sriov_network import node_policy
from gpufleet.base import versions
from gpufleet.app.verify.nccl import allreduce
from gpufleet.base.spec import load_spec
from tests.helpers import by_type, one, parent_of, plan_config, stack_file
from tests.k8s_validate import as_object, is_core, k8s_objects, validate_strict
from tests.sriov_config import sriov_config

SRIOV = "kubernetes:sriovnetwork.openshift.io/v1"
MELLANOX = "kubernetes:mellanox.com/v1alpha1"
NS = "nvidia-network-operator"

_STR = {"type": "string"}
_ON_OFF = {"type": "string", "enum": ["on", "off"]}
_STRS = {"type": "array", "items": _STR}


def _obj(kind: str, spec: dict) -> dict:
    return {
        "type": "object", "additionalProperties": False, "required": ["apiVersion", "kind", "metadata", "spec"],
        "properties": {
            "apiVersion": {"const": "sriovnetwork.openshift.io/v1"}, "kind": {"const": kind},
            "metadata": {"type": "object", "required": ["name", "namespace"]}, "spec": spec,
        },
    }


SCHEMAS = {
    "SriovNetworkNodePolicy": _obj("SriovNetworkNodePolicy", {
        "type": "object", "additionalProperties": False,
        "required": ["nicSelector", "nodeSelector", "numVfs", "resourceName"],
        "properties": {
            "bridge": {"type": "object"},
            "deviceType": {"type": "string", "enum": ["netdevice", "vfio-pci"]},
            "eSwitchMode": {"type": "string", "enum": ["legacy", "switchdev"]},
            "eSwitchParams": {"type": "object"},
            "excludeTopology": {"type": "boolean"},
            "externallyManaged": {"type": "boolean"},
            "isRdma": {"type": "boolean"},
            "linkType": {"type": "string", "enum": ["eth", "ETH", "ib", "IB"]},
            "mtu": {"type": "integer", "minimum": 1},
            "needVhostNet": {"type": "boolean"},
            "nicSelector": {"type": "object", "additionalProperties": False, "properties": {
                "deviceID": _STR, "netFilter": _STR, "pfNames": _STRS, "rootDevices": _STRS, "vendor": _STR,
            }},
            "nodeSelector": {"type": "object", "additionalProperties": _STR},
            "numVfs": {"type": "integer", "minimum": 0},
            "priority": {"type": "integer", "minimum": 0, "maximum": 99},
            "resourceName": _STR,
            "vdpaType": {"type": "string", "enum": ["virtio", "vhost"]},
        },
    }),
    "SriovNetwork": _obj("SriovNetwork", {
        "type": "object", "additionalProperties": False, "required": ["resourceName"],
        "properties": {
            "allMulticast": _ON_OFF, "capabilities": _STR, "ipam": _STR,
            "linkState": {"type": "string", "enum": ["auto", "enable", "disable"]},
            "maxTxRate": {"type": "integer", "minimum": 0}, "metaPlugins": _STR,
            "minTxRate": {"type": "integer", "minimum": 0}, "networkNamespace": _STR, "resourceName": _STR,
            "spoofChk": _ON_OFF, "trust": _ON_OFF,
            "vlan": {"type": "integer", "minimum": 0, "maximum": 4096},
            "vlanQoS": {"type": "integer", "minimum": 0, "maximum": 7},
        },
    }),
}


def validate_sriov(obj: dict) -> None:
    jsonschema.validate(obj, SCHEMAS[obj["kind"]])


@pytest.fixture(scope="module")
def stack():
    return plan_config(sriov_config(), "sriov")


@pytest.fixture(scope="module")
def pools():
    sf = stack_file(sriov_config(), "sriov")
    return [p for p in load_spec(sf.stack, sf.config, sf.secret_keys).node_pools if p.rdma]


def test_children_types_names_parents(stack):
    comp = one(stack, "gpufleet:addons:NetworkOperator", "lab-network-operator")
    assert parent_of(stack, comp).name == "lab"
    children = {r.name: r.type for r in stack.resources if r.parent == comp.urn}
    assert children == {
        "lab-network-operator-ns": "kubernetes:core/v1:Namespace",
        "lab-network-operator-crds": "kubernetes:yaml/v2:ConfigGroup",  # the chart's CRDs first (docs/upgrades.md)
        "lab-network-operator-release": "kubernetes:helm.sh/v3:Release",
        "lab-network-operator-nic-cluster-policy": f"{MELLANOX}:NicClusterPolicy",
        "lab-network-operator-ippool-a100-rdma": "kubernetes:nv-ipam.nvidia.com/v1alpha1:IPPool",
        "lab-network-operator-ippool-h100-sriov": "kubernetes:nv-ipam.nvidia.com/v1alpha1:IPPool",
        "lab-network-operator-network-a100-rdma": f"{MELLANOX}:MacvlanNetwork",
        "lab-network-operator-network-h100-sriov": f"{SRIOV}:SriovNetwork",
        "lab-network-operator-sriov-policy-h100-sriov": f"{SRIOV}:SriovNetworkNodePolicy",
    }


def test_node_policy_makes_rdma_vfs_on_the_pools_nics(stack):
    policy = one(stack, f"{SRIOV}:SriovNetworkNodePolicy").inputs
    assert policy["metadata"] == {"name": "rdma-h100-sriov", "namespace": NS}
    assert policy["spec"] == {
        "nodeSelector": {"gpufleet.io/pool": "h100-sriov"},
        "nicSelector": {"vendor": "15b3", "deviceID": "101d", "pfNames": ["ens2f0np0", "ens2f1np1"]},
        "numVfs": 8,
        "deviceType": "netdevice",
        "isRdma": True,
        "resourceName": "sriov_h100_sriov",
    }


def test_sriov_network_uses_the_pools_vfs_and_nv_ipam(stack):
    net = one(stack, f"{SRIOV}:SriovNetwork").inputs
    assert net["metadata"] == {"name": "rdma-h100-sriov", "namespace": NS}
    assert net["spec"]["resourceName"] == "sriov_h100_sriov"
    assert net["spec"]["networkNamespace"] == "training"
    # The same IPAM as the macvlan pool: NV-IPAM, the pool's own IPPool.
    assert json.loads(net["spec"]["ipam"]) == {"type": "nv-ipam", "poolName": "rdma-h100-sriov"}
    ippool = one(stack, "kubernetes:nv-ipam.nvidia.com/v1alpha1:IPPool", "lab-network-operator-ippool-h100-sriov").inputs
    assert ippool["metadata"] == {"name": "rdma-h100-sriov", "namespace": NS}
    assert ippool["spec"]["subnet"] == "192.168.101.0/24"
    macvlan = one(stack, f"{MELLANOX}:MacvlanNetwork").inputs
    assert json.loads(macvlan["spec"]["ipam"]) == {"type": "nv-ipam", "poolName": "rdma-a100-rdma"}


def test_chart_enables_the_sriov_operator_on_rdma_nodes(stack):
    values = one(stack, "kubernetes:helm.sh/v3:Release", "lab-network-operator-release").inputs["values"]
    assert values["sriovNetworkOperator"] == {"enabled": True}
    assert values["sriov-network-operator"] == {
        "sriovOperatorConfig": {"deploy": True, "configDaemonNodeSelector": {"gpufleet.io/rdma": "true"}},
    }
    assert values["nfd"] == {"enabled": False, "deployNodeFeatureRules": False}


def test_chart_leaves_the_sriov_operator_off_without_sriov_pools(pools):
    assert chart_values([p for p in pools if p.rdma_network.network != "sriov"])["sriovNetworkOperator"] == {"enabled": False}
    assert "sriov-network-operator" not in chart_values([])


def test_nic_cluster_policy_keeps_macvlan_only(stack):
    spec = one(stack, f"{MELLANOX}:NicClusterPolicy").inputs["spec"]
    # The sriov pool's device plugin is the SR-IOV operator's: none in the NicClusterPolicy for it.
    assert "sriovDevicePlugin" not in spec
    assert [c["resourceName"] for c in json.loads(spec["rdmaSharedDevicePlugin"]["config"])["configList"]] == ["rdma_a100_rdma"]
    assert set(spec["secondaryNetwork"]) == {"multus", "cniPlugins"} and "nvIpam" in spec


def test_gpu_operator_gpudirect_rdma_as_for_other_networks(stack):
    values = one(stack, "kubernetes:helm.sh/v3:Release", "lab-gpu-operator-release").inputs["values"]
    assert values["driver"]["rdma"] == {"enabled": True, "useHostMofed": True}


def test_pod_resource_and_nccl_check(pools):
    sriov = next(p for p in pools if p.rdma_network.network == "sriov")
    assert pod_resource(sriov) == "nvidia.com/sriov_h100_sriov"
    pod = allreduce.manifests(sriov.name, 8, pod_resource(sriov), "rdma-h100-sriov", "training")
    limits = [d for d in pod if d["kind"] == "Pod"][0]["spec"]["containers"][0]["resources"]["limits"]
    assert limits == {"nvidia.com/gpu": "8", "nvidia.com/sriov_h100_sriov": "1"}


def test_objects_match_the_upstream_crd_fields(stack):
    for kind in ("SriovNetworkNodePolicy", "SriovNetwork"):
        r = one(stack, f"{SRIOV}:{kind}")
        validate_sriov(as_object(r))


def test_crd_check_rejects_unknown_fields(pools):
    sriov = next(p for p in pools if p.rdma_network.network == "sriov")
    policy = node_policy(sriov, NS)
    policy["spec"]["nicSelector"]["vendors"] = ["15b3"]  # upstream is `vendor`, one string
    with pytest.raises(jsonschema.ValidationError):
        validate_sriov(policy)
    net = network(sriov)
    net["spec"]["ipam"] = {"type": "nv-ipam"}  # upstream takes the IPAM config as a JSON string
    with pytest.raises(jsonschema.ValidationError):
        validate_sriov(net)


def test_core_objects_validate_strictly(stack):
    version = stack.spec.cluster.kubernetes_version
    core = [o for o in (as_object(r) for r in k8s_objects(stack.resources)) if is_core(o, f"{version}.0")]
    assert core
    for obj in core:
        validate_strict(obj, version)


def test_values_key_paths_exist_upstream(reference, stack):
    """Every key path set exists in the chart's values.yaml; configDaemonNodeSelector is a label map (its keys
    are ours, like nodeSelector), so the path ends there."""
    upstream = yaml.safe_load((reference / "network-operator" / f"values-{versions.NETWORK_OPERATOR.version}.yaml").read_text())
    values = one(stack, "kubernetes:helm.sh/v3:Release", "lab-network-operator-release").inputs["values"]
    label_maps = {"configDaemonNodeSelector"}

    def missing(ours, theirs, at=""):
        out = []
        for k, v in ours.items():
            path = f"{at}.{k}" if at else k
            if not isinstance(theirs, dict) or k not in theirs:
                out.append(path)
            elif isinstance(v, dict) and k not in label_maps:
                out += missing(v, theirs[k], path)
            elif k in label_maps:
                assert isinstance(theirs[k], dict), path
        return out

    assert missing(values, upstream) == []


def test_args_default_namespace_matches_objects(pools):
    args = NetworkOperatorArgs(pools)
    assert nic_cluster_policy(args)["metadata"]["name"] == "nic-cluster-policy"  # cluster-scoped: no namespace
    assert "namespace" not in nic_cluster_policy(args)["metadata"]
    assert {o["metadata"]["namespace"] for o in (node_policy(pools[1], args.namespace), network(pools[1], args.namespace))} == {NS}


def test_plan_is_clean_and_shows_the_pool(stack):
    # Clean but for the advisory that the stack has no metrics pipeline (gpufleet:observability is opt-in on k3s).
    assert [(v.policy, v.level) for v in stack.violations] == [("gpu-observability", "advisory")]
    pool = next(c for c in stack.capacity if c.pool == "h100-sriov")
    assert (pool.gpus_per_node, pool.advertised) == (8, {"nvidia.com/gpu": 8})
