"""Upstream-format tests (layer 3): every resource in every example plan carries the inputs its provider requires.

The source of "required" is each provider's Python SDK at the version installed, which Pulumi generates from that
provider's schema (pulumi/pulumi pkg/codegen/python/gen.go): a resource's `<Resource>Args` and every nested
`<Type>Args` input type take the schema's required properties as `__init__` parameters without a default, and
`_internal_init` raises "Missing required property" for the top-level ones. The schema JSON itself ships inside each
provider plugin binary (`pulumi package get-schema`), which is not installed here (only pulumi-kubernetes's schema is
in the e2e tier's Go module cache), so the SDK's generated types are the offline source; they cover pulumi-aws,
pulumi-gcp, pulumi-azure-native, pulumi-kubernetes, pulumi-command and pulumi-random alike.

Why it matters even though the SDK checks the top level: an input filled from another resource's output passes the
SDK's check as an Output and reaches the engine as nothing when the mocks do not answer that output (the SQS queue
policy's `queueUrl` from the queue's `url`, the EventBridge target's `rule` from the rule's auto-name), and nested
objects are plain dicts the SDK never checks (an EKS cluster's `vpcConfig.subnetIds`).
"""

from __future__ import annotations

import collections.abc
import importlib
import inspect
import json
import re
import typing
from functools import lru_cache
from pathlib import Path

import pulumi
import pytest
from pulumi import _types

from gpufleet.app.plan.mocks import SECRET, UNKNOWN, Registration
from tests.helpers import ROOT, planned

PACKAGES = ("pulumi_aws", "pulumi_gcp", "pulumi_azure_native", "pulumi_kubernetes", "pulumi_command", "pulumi_random")
STACKS = sorted(p.name[len("Pulumi."):-len(".yaml")] for p in (ROOT / "stacks").glob("Pulumi.*.yaml"))
# Custom resources of CRDs have no SDK class: tests/upstream/test_kubernetes_objects.py validates them against the CRDs.


@lru_cache(maxsize=None)
def _tokens(package: str) -> dict[str, tuple[str, str]]:
    """Type token -> (module, class) from the `resource_modules` table the SDK registers in its __init__.py."""
    source = Path(importlib.util.find_spec(package).origin).read_text()
    table = re.search(r'resource_modules="""(.*?)"""', source, re.S)
    return {tok: (m["fqn"], cls) for m in json.loads(table.group(1)) for tok, cls in m["classes"].items()}


def args_class(token: str):
    """The `<Resource>Args` input type of a resource type token, or None (a CRD, a component, a provider)."""
    package = {"aws": "pulumi_aws", "gcp": "pulumi_gcp", "azure-native": "pulumi_azure_native", "kubernetes": "pulumi_kubernetes",
               "command": "pulumi_command", "random": "pulumi_random"}.get(token.split(":", 1)[0])
    found = _tokens(package).get(token) if package else None
    if found is None:
        return None
    return getattr(importlib.import_module(found[0]), f"{found[1]}Args", None)


@lru_cache(maxsize=None)
def required(cls) -> frozenset[str]:
    """The Pulumi names of an input type's required properties: its `__init__` parameters without a default."""
    names = _types.input_type_py_to_pulumi_names(cls)
    params = inspect.signature(cls.__init__).parameters.values()
    return frozenset(names.get(p.name, p.name) for p in params
                     if p.name != "__self__" and p.kind is p.KEYWORD_ONLY and p.default is p.empty)


@lru_cache(maxsize=None)
def property_types(cls) -> dict[str, typing.Any]:
    """Pulumi name -> the declared type of each property (Input/Optional unwrapped by the SDK)."""
    return _types.input_type_types(cls)


def _candidates(t) -> list:
    """The shapes a declared type admits: input-type classes, ("seq", T) and ("map", T)."""
    origin, args = typing.get_origin(t), typing.get_args(t)
    if origin is typing.Union:
        return [c for a in args for c in _candidates(a)]
    if origin is pulumi.Output:
        return _candidates(args[0])
    if origin in (collections.abc.Sequence, list):
        return [("seq", args[0])]
    if origin in (collections.abc.Mapping, dict):
        return [("map", args[1])]
    if inspect.isclass(t) and _types.is_input_type(t):
        return [t]
    return []


def missing(value, t, path: str) -> list[str]:
    """Each required property absent from `value` (a plan's JSON-safe inputs) typed `t`, with its path."""
    if value in (None, UNKNOWN, SECRET):
        return []
    out: list[str] = []
    shapes = _candidates(t)
    if isinstance(value, dict):
        classes = [c for c in shapes if inspect.isclass(c)]
        if classes:
            cls = classes[0]
            out += [f"{path}.{name}" if path else name for name in sorted(required(cls)) if value.get(name) is None]
            types = property_types(cls)
            for key, v in value.items():
                if key in types:
                    out += missing(v, types[key], f"{path}.{key}" if path else key)
            return out
        maps = [s for s in shapes if isinstance(s, tuple) and s[0] == "map"]
        if maps:
            for key, v in value.items():
                out += missing(v, maps[0][1], f"{path}[{key!r}]")
    elif isinstance(value, list):
        seqs = [s for s in shapes if isinstance(s, tuple) and s[0] == "seq"]
        if seqs:
            for i, v in enumerate(value):
                out += missing(v, seqs[0][1], f"{path}[{i}]")
    return out


def problems(resources: list[Registration]) -> tuple[list[str], set[str]]:
    out, checked = [], set()
    for r in resources:
        cls = args_class(r.type)
        if cls is None:
            continue
        checked.add(r.type)
        out += [f"{r.type} {r.name}: {p} is required" for p in missing(r.inputs, cls, "")]
    return out, checked


@pytest.mark.parametrize("stack", STACKS)
def test_every_required_input_is_in_the_plan(stack):
    found, checked = problems(planned(stack).resources)
    assert found == []
    assert checked, "no resource of the plan was checked: the SDK lookup is broken"


def test_every_provider_resource_type_of_the_plans_is_checked():
    """Each cloud, Kubernetes core, command and random type the example plans register resolves to its SDK Args
    class, so none escapes the check above by not being found."""
    types = {r.type for s in STACKS for r in planned(s).resources if r.custom}
    unresolved = sorted(t for t in types if t.split(":", 1)[0] in ("aws", "gcp", "azure-native", "command", "random")
                        and args_class(t) is None)
    core = {t for t in types if t.startswith("kubernetes:") and t.split(":")[1].split("/")[0] in
            ("core", "apps", "storage.k8s.io", "rbac.authorization.k8s.io", "scheduling.k8s.io", "helm.sh")}
    unresolved += sorted(t for t in core if args_class(t) is None)
    assert unresolved == []


def reg(type_: str, inputs: dict) -> Registration:
    return Registration(urn=f"urn:pulumi:t::p::{type_}::r", type=type_, name="r", parent=None, custom=True, inputs=inputs)


def test_the_check_sees_a_missing_top_level_and_a_missing_nested_input():
    """Guard against a check that passes everything: what the mocks used to leave out, and a nested omission."""
    policy = reg("aws:sqs/queuePolicy:QueuePolicy", {"policy": "{}"})
    target = reg("aws:cloudwatch/eventTarget:EventTarget", {"arn": "arn:aws:sqs:us-east-1:123456789012:q", "targetId": "t"})
    cluster = reg("aws:eks/cluster:Cluster", {"roleArn": "arn:aws:iam::123456789012:role/r", "vpcConfig": {"endpointPublicAccess": True}})
    pod = reg("kubernetes:core/v1:Pod", {"spec": {"containers": [{"image": "busybox"}]}})
    pool = reg("gcp:container/nodePool:NodePool", {"cluster": "c", "nodeConfig": {"guestAccelerators": [{"count": 1}]}})
    aks = reg("azure-native:containerservice:AgentPool",
              {"resourceGroupName": "rg", "agentPoolName": "gpu", "upgradeSettings": {"maxSurge": "1"},
               "creationData": {}})
    found, _ = problems([policy, target, cluster, pod, pool, aks])
    assert found == [
        "aws:sqs/queuePolicy:QueuePolicy r: queueUrl is required",
        "aws:cloudwatch/eventTarget:EventTarget r: rule is required",
        "aws:eks/cluster:Cluster r: vpcConfig.subnetIds is required",
        "kubernetes:core/v1:Pod r: spec.containers[0].name is required",
        "gcp:container/nodePool:NodePool r: nodeConfig.guestAccelerators[0].type is required",
        "azure-native:containerservice:AgentPool r: resourceName is required",
    ]
