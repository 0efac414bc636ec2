"""Upstream-format tests (layer 3) for GPU sharing, RDMA and storage.

- device-plugin and mig-parted configs parse and use only the upstream formats' keys;
- every MIG layout gpufleet emits is valid for its GPU per mig_profiles.yaml, and names upstream layouts
  the way mig-parted's default config does;
- Helm values key paths exist in the charts' values.yaml (tests/helm_values.py);
- core Kubernetes objects pass kubernetes-validate (strict, tests/k8s_validate.py); Network Operator custom
  resources validate against their CRD's openAPIV3Schema, unknown fields rejected (tests/crd_validate.py).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from gpufleet.components.gpu_stack.sharing import device_plugin_data, mig_parted_data
from gpufleet.components.gpu_stack.network_operator import NetworkOperatorArgs, network, nic_cluster_policy
from gpufleet.base import catalog, sharing, versions
from gpufleet.app.verify.nccl import allreduce
from gpufleet.app.plan.engine import plan
from gpufleet.base.spec import load_spec
from tests.crd_validate import crd_schema, validate_cr
from tests.helm_values import missing_paths
from tests.helpers import ROOT, example_config, planned, stack_file
from tests.k8s_validate import as_object, is_core, k8s_objects, validate_strict

pytestmark = pytest.mark.upstream

# catalog name -> mig_profiles.yaml name, where they differ
REF_NAMES = {"H100-NVL": "H100-94GB", "H200": "H200-141GB", "B200": "B200-180GB", "GB200": "GB200-186GB", "RTX-PRO-6000": "RTX-PRO-6000-Blackwell-96GB"}
MIG_GPUS = [g for g in catalog.gpu_models().values() if g.mig_capable]


# ---------- helpers ----------

def spec_of(config: dict):
    sf = stack_file(config)
    return load_spec(sf.stack, sf.config, sf.secret_keys)


def custom_config() -> dict:
    config = example_config("lab")
    pools = config["gpufleet:nodePools"]
    pools[0]["sharing"] = {"mode": "mps", "replicas": 8, "renameByDefault": True}
    pools[1]["sharing"] = {"mode": "mig", "profiles": {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}}
    pools[2]["rdmaNetwork"]["network"] = "host-device"
    return config


@pytest.fixture(scope="module")
def lab_plan():
    return planned("lab", policies=True)


def key_paths(value: Any, prefix: str = "") -> set[str]:
    """Dotted key paths of a document; list items share the path `<list>[]`."""
    out = {prefix} if prefix else set()
    if isinstance(value, dict):
        for k, v in value.items():
            out |= key_paths(v, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(value, list):
        for item in value:
            out |= key_paths(item, f"{prefix}[]")
    return out


def ref_gpu(reference, name: str) -> dict:
    doc = yaml.safe_load((reference / "mig_profiles.yaml").read_text())
    want = REF_NAMES.get(name, name)
    return next(g for g in doc["gpus"] if g["name"] == want)


def crd_errors(obj: dict) -> list[str]:
    """Errors of a custom resource against its upstream CRD (strict); the CRD must be in the reference."""
    group, _, version = obj["apiVersion"].rpartition("/")
    assert crd_schema(group, obj["kind"], version) is not None, f"no upstream CRD for {obj['apiVersion']} {obj['kind']}"
    return validate_cr(obj)


# ---------- MIG ----------

@pytest.mark.parametrize("gpu", MIG_GPUS, ids=lambda g: g.name)
def test_catalog_mig_facts_match_mig_profiles(reference, gpu):
    ref = ref_gpu(reference, gpu.name)
    plain = {p["profile"]: p["max_instances"] for p in ref["profiles"] if "+" not in p["profile"] and "-me" not in p["profile"]}
    assert gpu.mig.profiles == plain
    assert gpu.mig.all_balanced == ref["all_balanced"]
    assert gpu.mig.max_instances == ref["max_gpu_instances"]
    assert gpu.memory_gb == ref["memory_gb"]


def _valid_for(ref: dict, devices: dict[str, int]) -> list[str]:
    limits = {p["profile"]: p["max_instances"] for p in ref["profiles"]}
    errors = [f"{p}: unknown" for p in devices if p not in limits]
    errors += [f"{p}: {n} > {limits[p]}" for p, n in devices.items() if p in limits and n > limits[p]]
    compute = sum(int(p.split("g.")[0]) * n for p, n in devices.items())
    if compute > ref["max_gpu_instances"]:
        errors.append(f"{compute} compute slices > {ref['max_gpu_instances']}")
    return errors


def _upstream_entry(upstream: dict, layout: str, ref: dict) -> dict:
    """The mig-parted default entry that applies to this GPU (by PCI device filter, else the unfiltered one)."""
    ids = set(ref.get("pci_device_ids", []) + ref.get("pci_device_ids_shared_group", []))
    entries = upstream["mig-configs"][layout]
    for entry in entries:
        if ids & set(entry.get("device-filter", [])):
            return entry
    return next(e for e in entries if "device-filter" not in e)


@pytest.mark.parametrize("gpu", MIG_GPUS, ids=lambda g: g.name)
def test_every_named_layout_is_valid_and_matches_mig_parted(reference, gpu):
    ref = ref_gpu(reference, gpu.name)
    upstream = yaml.safe_load((reference / "mig-parted" / "config-default-v0.15.0.yaml").read_text())
    for name, devices in sharing.named_layouts(gpu).items():
        assert _valid_for(ref, devices) == [], name
        assert sharing.layout_problems(devices, gpu) == [], name
        entry = _upstream_entry(upstream, name, ref)
        assert entry["mig-enabled"] is True and entry["mig-devices"] == devices, name


def test_custom_layouts_emitted_are_valid(reference):
    spec = spec_of(custom_config())
    doc = yaml.safe_load(mig_parted_data(spec.node_pools)["config.yaml"])
    ref = ref_gpu(reference, "H100-80GB")
    custom = doc["mig-configs"]["gpufleet-h100-mig"]
    assert [_valid_for(ref, e["mig-devices"]) for e in custom] == [[]]


def test_mig_parted_config_uses_the_upstream_format(reference):
    spec = spec_of(custom_config())
    ours = yaml.safe_load(mig_parted_data(spec.node_pools)["config.yaml"])
    upstream = yaml.safe_load((reference / "mig-parted" / "config-default-v0.15.0.yaml").read_text())
    docs_cm = yaml.safe_load((reference / "gpu-operator" / "docs-custom-mig-config.yaml").read_text())
    docs = yaml.safe_load(docs_cm["data"]["config.yaml"])
    assert ours["version"] == upstream["version"] == "v1"
    assert ours["mig-configs"]["all-disabled"] == upstream["mig-configs"]["all-disabled"]
    assert set(ours) == set(upstream) == {"version", "mig-configs"}
    upstream_entries = [e for doc in (upstream, docs) for entries in doc["mig-configs"].values() for e in entries]
    entry_keys = set().union(*(e.keys() for e in upstream_entries))
    for name, entries in ours["mig-configs"].items():
        for entry in entries:
            assert set(entry) <= entry_keys, name
            assert entry["devices"] == "all" and isinstance(entry["mig-enabled"], bool)
            assert all(isinstance(n, int) for n in entry.get("mig-devices", {}).values())


# ---------- device plugin ----------

def test_device_plugin_entries_parse_and_use_upstream_keys(reference):
    upstream_docs = []
    for f in sorted((reference / "k8s-device-plugin").glob("sharing-*.yaml")):
        upstream_docs.append(yaml.safe_load(f.read_text()))
    for f in sorted((reference / "k8s-device-plugin").glob("gpu-operator-docs-time-slicing-config-*.yaml")):
        upstream_docs += [yaml.safe_load(v) for v in yaml.safe_load(f.read_text())["data"].values()]
    allowed = set().union(*(key_paths(d) for d in upstream_docs))
    for config in (example_config("lab"), custom_config()):
        data = device_plugin_data(spec_of(config).node_pools)
        for entry_name, text in data.items():
            entry = yaml.safe_load(text)
            assert entry["version"] == "v1"
            assert key_paths(entry) <= allowed, (entry_name, key_paths(entry) - allowed)


def test_gpu_operator_values_paths_exist_upstream(reference, lab_plan):
    upstream = reference / "gpu-operator" / f"values-{versions.GPU_OPERATOR.version}.yaml"
    custom = plan(stack_file(custom_config(), "custom"), evaluate_policies=False)
    for p in (lab_plan, custom):
        release = next(r for r in p.resources if r.type == "kubernetes:helm.sh/v3:Release" and r.name.endswith("gpu-operator-release"))
        assert missing_paths(release.inputs["values"], upstream) == []


# ---------- Network Operator ----------

def test_network_operator_values_paths_exist_upstream(reference, lab_plan):
    upstream = reference / "network-operator" / f"values-{versions.NETWORK_OPERATOR.version}.yaml"
    release = next(r for r in lab_plan.resources if r.name == "lab-network-operator-release")
    assert missing_paths(release.inputs["values"], upstream) == []


@pytest.mark.parametrize("config", [example_config("lab"), custom_config()], ids=["macvlan", "host-device"])
def test_network_objects_validate_against_their_crds(reference, config):
    pools = [p for p in spec_of(config).node_pools if p.rdma]
    assert crd_errors(nic_cluster_policy(NetworkOperatorArgs(pools, [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]))) == []
    for pool in pools:
        obj = network(pool)
        assert obj["kind"] in ("MacvlanNetwork", "HostDeviceNetwork")
        assert crd_errors(obj) == [], obj["kind"]


def test_crd_check_rejects_unknown_fields(reference):
    pools = [p for p in spec_of(example_config("lab")).node_pools if p.rdma]
    policy = nic_cluster_policy(NetworkOperatorArgs(pools))
    policy["spec"]["secondaryNetwork"]["ipamPlugin"] = {"image": "whereabouts"}  # gone from the 26.4 CRD
    assert crd_errors(policy) == ["spec.secondaryNetwork: Additional properties are not allowed ('ipamPlugin' was unexpected)"]


def test_rdma_shared_device_plugin_config_uses_upstream_keys(reference):
    cm = yaml.safe_load((reference / "network-operator" / "k8s-rdma-shared-dev-plugin-configmap-master.yaml").read_text())
    example_cfg = json.loads(cm["data"]["config.json"])
    # Fields documented in the plugin's README (configList items and device selectors).
    allowed = key_paths(example_cfg) | {
        f"configList[].{k}" for k in ("resourceName", "resourcePrefix", "rdmaHcaMax", "selectors", "devices")
    } | {f"configList[].selectors.{k}" for k in ("vendors", "deviceIDs", "drivers", "ifNames", "linkTypes")}
    pools = [p for p in spec_of(example_config("lab")).node_pools if p.rdma]
    ours = json.loads(nic_cluster_policy(NetworkOperatorArgs(pools))["spec"]["rdmaSharedDevicePlugin"]["config"])
    assert key_paths(ours) <= allowed


# ---------- core kinds, strict ----------

def test_core_objects_validate_strictly(lab_plan):
    version = lab_plan.spec.cluster.kubernetes_version
    core = [o for o in map(as_object, k8s_objects(lab_plan.resources)) if is_core(o, f"{version}.0")]
    # node-problem-detector (k3s nodeHealth, on by default) adds its ServiceAccount, binding and two DaemonSets.
    assert {o["kind"] for o in core} == {"Namespace", "ConfigMap", "StorageClass", "PersistentVolumeClaim", "Node",
                                         "ServiceAccount", "ClusterRoleBinding", "DaemonSet"}
    for obj in core:
        validate_strict(obj, version)


def test_nccl_example_validates_strictly_and_matches_the_lab_stack(lab_plan):
    text = (ROOT / "examples" / "nccl-allreduce-rdma.yaml").read_text()
    assert text == allreduce.render(allreduce.for_stack(lab_plan.spec)), (
        "examples/nccl-allreduce-rdma.yaml is stale: python -m gpufleet.app.verify.nccl lab > examples/nccl-allreduce-rdma.yaml"
    )
    docs = list(yaml.safe_load_all(text))
    assert [d["kind"] for d in docs] == ["ConfigMap", "Service", "Pod", "Pod"]
    for doc in docs:
        validate_strict(doc, lab_plan.spec.cluster.kubernetes_version)
    pod = docs[2]["spec"]["containers"][0]
    assert pod["resources"]["limits"] == {"nvidia.com/gpu": "8", "rdma/rdma_a100_rdma": "1"}
    assert docs[2]["metadata"]["annotations"] == {"k8s.v1.cni.cncf.io/networks": "rdma-a100-rdma"}
