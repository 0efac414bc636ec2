"""Upstream-format tests (layer 3) for GPU sharing, RDMA and storage.

- device-plugin and mig-parted configs parse and use only the upstream formats' keys;
- every MIG layout gpufleet emits is valid for its GPU per mig_profiles.yaml, and names upstream layouts
  the way mig-parted's default config does;
- Helm values key paths exist in the charts' values.yaml;
- core Kubernetes objects pass kubernetes-validate (strict); Network Operator custom resources validate
  against their CRD's openAPIV3Schema (jsonschema, unknown fields rejected).
"""

from __future__ import annotations

import copy
import json
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml

from components.gpu_sharing import device_plugin_data, mig_parted_data
from components.network_operator import NetworkOperatorArgs, network, nic_cluster_policy
from gpufleet import catalog, nccl_test, sharing, versions
from gpufleet.plan.engine import plan
from gpufleet.spec import load_spec
from tests.helpers import ROOT, example, example_config, stack_file

pytestmark = pytest.mark.upstream

# catalog name -> mig_profiles.yaml name, where they differ
REF_NAMES = {"H200": "H200-141GB", "B200": "B200-180GB"}
MIG_GPUS = [g for g in catalog.gpu_models().values() if g.mig_capable]
FREE_FORM = {"data", "env", "labels", "annotations", "nodeSelector", "tolerations"}


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
    return plan(example("lab"))


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


def values_paths(values: Any, prefix: str = "") -> list[str]:
    """Leaf paths of Helm values we set (lists and free-form maps are leaves)."""
    if not isinstance(values, dict) or not values:
        return [prefix]
    out = []
    for k, v in values.items():
        path = f"{prefix}.{k}" if prefix else k
        out += [path] if k in FREE_FORM else values_paths(v, path)
    return out


def missing_in(values: dict, upstream: dict) -> list[str]:
    missing = []
    for path in values_paths(values):
        node: Any = upstream
        for part in path.split("."):
            if not isinstance(node, dict) or part not in node:
                missing.append(path)
                break
            node = node[part]
    return missing


def ref_gpu(reference, name: str) -> dict:
    doc = yaml.safe_load((reference / "mig_profiles.yaml").read_text())
    want = REF_NAMES.get(name, name)
    return next(g for g in doc["gpus"] if g["name"] == want)


def strict_schema(schema: Any) -> Any:
    """The CRD schema with unknown fields rejected (the API server would silently prune them)."""
    if isinstance(schema, dict):
        out = {k: strict_schema(v) for k, v in schema.items()}
        if "properties" in out and "additionalProperties" not in out and not out.get("x-kubernetes-preserve-unknown-fields"):
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [strict_schema(v) for v in schema]
    return schema


def crd_validate(reference, crd_file: str, obj: dict) -> None:
    crd = yaml.safe_load((reference / "crds" / "network-operator" / crd_file).read_text())
    version = next(v for v in crd["spec"]["versions"] if v["name"] == obj["apiVersion"].split("/")[1])
    assert crd["spec"]["names"]["kind"] == obj["kind"]
    assert crd["spec"]["group"] == obj["apiVersion"].split("/")[0]
    schema = strict_schema(version["schema"]["openAPIV3Schema"])
    schema["properties"]["metadata"] = {"type": "object"}
    jsonschema.validate(obj, schema, cls=jsonschema.Draft7Validator)


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
    upstream = yaml.safe_load((reference / "gpu-operator" / f"values-{versions.GPU_OPERATOR.version}.yaml").read_text())
    custom = plan(stack_file(custom_config(), "custom"), evaluate_policies=False)
    for p in (lab_plan, custom):
        release = next(r for r in p.resources if r.type == "kubernetes:helm.sh/v3:Release" and r.name.endswith("gpu-operator-release"))
        assert missing_in(release.inputs["values"], upstream) == []


# ---------- Network Operator ----------

def test_network_operator_values_paths_exist_upstream(reference, lab_plan):
    upstream = yaml.safe_load((reference / "network-operator" / f"values-{versions.NETWORK_OPERATOR.version}.yaml").read_text())
    release = next(r for r in lab_plan.resources if r.name == "lab-network-operator-release")
    assert missing_in(release.inputs["values"], upstream) == []


@pytest.mark.parametrize("config", [example_config("lab"), custom_config()], ids=["macvlan", "host-device"])
def test_network_objects_validate_against_their_crds(reference, config):
    pools = [p for p in spec_of(config).node_pools if p.rdma]
    crd_validate(reference, "mellanox.com_nicclusterpolicies.yaml", nic_cluster_policy(NetworkOperatorArgs(pools, [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}])))
    for pool in pools:
        obj = network(pool)
        crd_file = {"MacvlanNetwork": "mellanox.com_macvlannetworks.yaml", "HostDeviceNetwork": "mellanox.com_hostdevicenetworks.yaml"}[obj["kind"]]
        crd_validate(reference, crd_file, obj)


def test_crd_check_rejects_unknown_fields(reference):
    pools = [p for p in spec_of(example_config("lab")).node_pools if p.rdma]
    policy = nic_cluster_policy(NetworkOperatorArgs(pools))
    policy["spec"]["secondaryNetwork"]["ipamPlugin"] = {"image": "whereabouts"}  # gone from the 26.4 CRD
    with pytest.raises(jsonschema.ValidationError):
        crd_validate(reference, "mellanox.com_nicclusterpolicies.yaml", policy)


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

def _objects(p) -> list[dict]:
    skip = ("kubernetes:helm.sh/", "pulumi:providers:")
    return [dict(r.revealed) for r in p.resources if r.type.startswith("kubernetes:") and not r.type.startswith(skip)]


def _is_core(obj: dict) -> bool:
    return obj["apiVersion"] in ("v1", "storage.k8s.io/v1")


def test_core_objects_validate_strictly(lab_plan):
    version = f"{lab_plan.spec.cluster.kubernetes_version}.0"
    core = [o for o in _objects(lab_plan) if _is_core(o)]
    assert {o["kind"] for o in core} == {"Namespace", "ConfigMap", "StorageClass", "PersistentVolumeClaim", "Node"}
    for obj in core:
        kubernetes_validate.validate(obj, version, strict=True)


def test_nccl_example_validates_strictly_and_matches_the_lab_stack(lab_plan):
    text = (ROOT / "examples" / "nccl-allreduce-rdma.yaml").read_text()
    assert text == nccl_test.render(nccl_test.for_stack(lab_plan.spec)), (
        "examples/nccl-allreduce-rdma.yaml is stale: python -m gpufleet.nccl_test lab > examples/nccl-allreduce-rdma.yaml"
    )
    docs = list(yaml.safe_load_all(text))
    assert [d["kind"] for d in docs] == ["ConfigMap", "Service", "Pod", "Pod"]
    for doc in docs:
        kubernetes_validate.validate(doc, f"{lab_plan.spec.cluster.kubernetes_version}.0", strict=True)
    pod = docs[2]["spec"]["containers"][0]
    assert pod["resources"]["limits"] == {"nvidia.com/gpu": "8", "rdma/rdma_a100_rdma": "1"}
    assert docs[2]["metadata"]["annotations"] == {"k8s.v1.cni.cncf.io/networks": "rdma-a100-rdma"}
