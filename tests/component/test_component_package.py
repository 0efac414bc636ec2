"""The component package (gpufleet/app/package.py, package/PulumiPlugin.yaml): the schema the provider declares,
read in process and over the provider's own gRPC interface, and GpuCluster built through its Construct path."""

import json
import subprocess
import sys

import grpc
import pulumi
import pytest
import yaml
from pulumi.runtime.proto import provider_pb2, provider_pb2_grpc
from pulumi.runtime.sync_await import _sync_await

from gpufleet.app.package import GpufleetProvider, _GENERATED
from gpufleet.base.spec.stack import StackSpec
from gpufleet.testing import run as run_under_mocks
from tests.helpers import ROOT, example_config, planned

TOKEN = "gpufleet:index:GpuCluster"
INPUTS = {"cluster", "nodePools", "gpuOperator", "amdGpuOperator", "workloads", "storage", "addons", "observability", "dra", "modelCaches", "images", "registry", "serving", "gitops", "sshPrivateKey", "kubeconfig"}
OUTPUTS = {"kubeconfig": "string", "clusterName": "string", "platform": "string", "kubernetesVersion": "string", "nodePoolNames": "array"}


@pytest.fixture(scope="module")
def schema():
    return json.loads(GpufleetProvider().schema)


def test_one_resource_gpu_cluster_with_the_stack_files_inputs(schema):
    assert schema["name"] == "gpufleet"
    assert set(schema["resources"]) == {TOKEN}
    gpu_cluster = schema["resources"][TOKEN]
    assert gpu_cluster["isComponent"] is True
    inputs = gpu_cluster["inputProperties"]
    assert set(inputs) == INPUTS
    # The stack file's top-level keys, and nothing else but the secrets (the SSH key, an existing cluster's kubeconfig);
    # `dependsOn` orders stacks in a fleet run (docs/fleet.md) and means nothing to a component.
    assert set(inputs) - {"sshPrivateKey", "kubeconfig"} == {f.alias for f in StackSpec.model_fields.values()} - {"dependsOn"}
    assert gpu_cluster["requiredInputs"] == ["cluster"]
    assert inputs["cluster"]["$ref"] == "#/types/gpufleet:index:ClusterSpec"
    assert inputs["nodePools"]["type"] == "array"
    assert inputs["nodePools"]["items"]["$ref"] == "#/types/gpufleet:index:NodePoolSpec"
    # The spec decides which resources exist: plain values. The SSH key and the kubeconfig may be secret outputs.
    secrets = {"sshPrivateKey", "kubeconfig"}
    assert all(inputs[k].get("plain") is True for k in INPUTS - secrets)
    for key in secrets:
        assert inputs[key] == {"type": "string", "description": inputs[key]["description"]}
    assert all(p.get("description") for p in inputs.values())


def test_outputs(schema):
    gpu_cluster = schema["resources"][TOKEN]
    assert {k: v["type"] for k, v in gpu_cluster["properties"].items()} == OUTPUTS
    assert gpu_cluster["properties"]["nodePoolNames"]["items"]["type"] == "string"
    assert sorted(gpu_cluster["required"]) == sorted(OUTPUTS)


def test_types_mirror_the_spec_models(schema):
    """Every nested type is a spec model: same keys as the stack file, same required keys, scalar types."""
    types = schema["types"]
    assert {f"gpufleet:index:{t.__name__}" for t in _GENERATED.values()} == set(types)
    for model in _GENERATED:
        declared = types[f"gpufleet:index:{model.__name__}"]
        assert set(declared["properties"]) == {f.alias or n for n, f in model.model_fields.items()}, model
        assert set(declared.get("required", [])) == {f.alias or n for n, f in model.model_fields.items() if f.is_required()}
    pool = types["gpufleet:index:NodePoolSpec"]["properties"]
    assert pool["name"]["type"] == "string" and pool["minNodes"]["type"] == "integer"
    assert pool["rdma"]["type"] == "boolean" and pool["pricePerNodeHour"]["type"] == "number"
    assert pool["labels"] == {**pool["labels"], "type": "object", "additionalProperties": {"type": "string", "plain": True}}
    assert pool["taints"]["items"]["$ref"] == "#/types/gpufleet:index:Taint"
    assert "Allowed: on-demand | spot | reserved | flex-start | queued." in pool["capacity"]["description"]
    cluster = types["gpufleet:index:ClusterSpec"]
    assert cluster["required"] == ["platform"]
    assert cluster["properties"]["eks"]["$ref"] == "#/types/gpufleet:index:EksSpec"
    assert types["gpufleet:index:EksSpec"]["required"] == ["network"]


def test_schema_over_the_plugins_grpc_interface():
    """Start the plugin as the CLI does (`python <plugin dir> <engine address>`, PulumiPlugin.yaml's runtime)
    and ask for its schema with GetSchema."""
    plugin = yaml.safe_load((ROOT / "package" / "PulumiPlugin.yaml").read_text())
    assert plugin["runtime"]["name"] == "python"
    assert (ROOT / "package" / plugin["runtime"]["options"]["virtualenv"]).resolve() == (ROOT / ".venv").resolve()
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "package"), "127.0.0.1:1"],  # the engine is not called for a schema
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT / "package",
    )
    try:
        port = int(proc.stdout.readline().decode().strip() or 0)
        assert port, proc.stderr.read().decode()
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = provider_pb2_grpc.ResourceProviderStub(channel)
            response = stub.GetSchema(provider_pb2.GetSchemaRequest(version=0), timeout=30)
    finally:
        proc.kill()
        proc.wait()
    served = json.loads(response.schema)
    assert served == json.loads(GpufleetProvider().schema)
    assert set(served["resources"]) == {TOKEN}


def _construct_inputs(stack: str) -> dict:
    """An example stack's config as another language's program sends it: camelCase keys, plain values."""
    config = example_config(stack)
    config.pop("gpufleet:sshPrivateKey", None)
    config.pop("gpufleet:kubeconfig", None)
    return {k.removeprefix("gpufleet:"): v for k, v in config.items() if k.startswith("gpufleet:")}


@pytest.mark.parametrize("stack", ["dev", "prod-eks", "existing-coreweave"])
def test_construct_registers_what_the_stack_program_registers(stack):
    """The provider's Construct path (input mapping, spec validation, GpuCluster) under mocks: the same URNs,
    types and parents as `gpufleet plan` of the same stack, and the declared outputs."""
    provider = GpufleetProvider()
    inputs = _construct_inputs(stack)
    if inputs["cluster"]["platform"] == "k3s":
        inputs["sshPrivateKey"] = pulumi.Output.secret("test-key")
    if inputs["cluster"]["platform"] == "existing":
        inputs["kubeconfig"] = pulumi.Output.secret("apiVersion: v1\nkind: Config\n")
    provider_config = {k: v for k, v in example_config(stack).items() if not k.startswith("gpufleet:")}
    state = {}

    name = inputs["cluster"].get("name", stack)  # the resource name is the cluster's name

    def program():
        result = provider.construct(name, TOKEN, inputs, None)
        state.update(result.state)

    # As in the plugin process: no Stack resource there (the component joins the calling program's stack), so
    # nothing in the component may export stack outputs.
    monitor = run_under_mocks(program, stack=stack, config=provider_config, stack_root=False)
    expected = planned(stack)
    root = f"urn:pulumi:{stack}::gpufleet::pulumi:pulumi:Stack::gpufleet-{stack}"
    top = [r for r in monitor.registrations if r.type == TOKEN]
    assert len(top) == 1 and top[0].parent in (None, "")
    # The same resources with the same URNs (the plan's URNs are the engine's, which leave the Stack's type out);
    # only the component's parent differs: the Stack in the plan, none in the plugin process.
    def key(r):
        return (r.urn, r.type, None if r.parent in (None, "", root) else r.parent)
    assert {key(r) for r in monitor.registrations} == {key(r) for r in expected.resources}
    assert set(state) == set(OUTPUTS)
    assert _sync_await(state["platform"].future()) == inputs["cluster"]["platform"]
    assert _sync_await(state["nodePoolNames"].future()) == [p["name"] for p in inputs["nodePools"]]
    assert _sync_await(state["kubeconfig"].is_secret())


def test_construct_reports_every_problem_with_the_stack_files_key_paths():
    provider = GpufleetProvider()
    inputs = _construct_inputs("dev")
    inputs["nodePools"][0]["gpusPerNode"] = 99
    inputs["cluster"]["k3s"]["servers"] = []
    caught = {}

    def program():
        try:
            provider.construct("dev", TOKEN, inputs, None)
        except Exception as exc:  # the provider wraps the component's error (ComponentInitError)
            caught["error"] = exc

    monitor = run_under_mocks(program, stack="dev")
    text = str(getattr(caught["error"], "inner", caught["error"]))
    assert "gpufleet:nodePools[0].gpusPerNode" in text and "gpufleet:cluster.k3s.servers" in text
    assert "gpufleet:sshPrivateKey" in text  # k3s without a key
    assert monitor.registrations == []


def test_construct_refuses_outputs_where_the_spec_needs_values():
    provider = GpufleetProvider()
    inputs = _construct_inputs("dev")
    inputs["nodePools"][0]["hosts"][0]["address"] = pulumi.Output.from_input("192.0.2.99")
    inputs["sshPrivateKey"] = pulumi.Output.secret("test-key")
    caught = {}

    def program():
        try:
            provider.construct("dev", TOKEN, inputs, None)
        except Exception as exc:
            caught["error"] = exc

    run_under_mocks(program, stack="dev")
    text = str(getattr(caught["error"], "inner", caught["error"]))
    assert "gpufleet:nodePools[0].hosts[0].address" in text and "plain values" in text
