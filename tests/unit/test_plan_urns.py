"""The plan names each resource by the URN the Pulumi engine gives it, so a plan's resources, policy verdicts,
`gpufleet diff` and URN-keyed exemptions match `pulumi preview` (the e2e tier compares them for real).

The engine's rule (pkg/v3 resource/deploy/deployment.go `generateURN`, sdk/v3 go/common/resource/urn/urn.go
`New`, v3.274.0): `urn:pulumi:<stack>::<project>::<qualified type>::<name>`, where the qualified type is the
parent's whole qualified type, `$`, the resource's type, and a child of the root Stack has its type alone.
The SDK's mock monitor kept only the parent's last type and kept the Stack's; the real preview showed it."""

from __future__ import annotations

import pytest

from gpufleet.app.plan.mocks import RecordingMonitor
from gpufleet.testing import run as run_under_mocks
from tests.helpers import planned


def engine_urn(resources, r) -> str:
    """The engine's URN of `r`, built from the parent chain the plan recorded (types and names, not URNs)."""
    by_urn = {x.urn: x for x in resources}
    types, parent = [r.type], by_urn.get(r.parent)
    while parent is not None:
        types.insert(0, parent.type)
        parent = by_urn.get(parent.parent)
    stack = r.urn.split("::")[0].removeprefix("urn:pulumi:")
    return f"urn:pulumi:{stack}::gpufleet::{'$'.join(types)}::{r.name}"


def test_nested_resources_carry_the_whole_parent_type_chain_and_no_stack_type():
    plan = planned("lab")
    urns = {r.urn for r in plan.resources}
    # What `pulumi preview` (v3.274.0) listed for the lab stack: the top component, a grandchild.
    assert "urn:pulumi:lab::gpufleet::gpufleet:index:GpuCluster::lab" in urns
    assert ("urn:pulumi:lab::gpufleet::gpufleet:index:GpuCluster$gpufleet:addons:GpuOperator"
            "$kubernetes:core/v1:Namespace::lab-gpu-operator-ns") in urns
    assert not [u for u in urns if "pulumi:pulumi:Stack$" in u]


@pytest.mark.parametrize("stack", ["lab", "teams", "prod-eks", "prod-gke"])
def test_every_planned_urn_is_the_engines(stack):
    plan = planned(stack)
    wrong = [(r.urn, engine_urn(plan.resources, r)) for r in plan.resources if r.urn != engine_urn(plan.resources, r)]
    assert not wrong, wrong[:5]


def test_make_urn_follows_the_engines_rule():
    monitor = RecordingMonitor.__new__(RecordingMonitor)  # make_urn reads only the stack and project

    def program():
        root = "urn:pulumi:test::gpufleet::pulumi:pulumi:Stack::gpufleet-test"
        top = monitor.make_urn(root, "a:b:C", "c")
        assert top == "urn:pulumi:test::gpufleet::a:b:C::c"
        child = monitor.make_urn(top, "d:e:F", "f")
        assert child == "urn:pulumi:test::gpufleet::a:b:C$d:e:F::f"
        assert monitor.make_urn(child, "g:h:I", "i") == "urn:pulumi:test::gpufleet::a:b:C$d:e:F$g:h:I::i"
        assert monitor.make_urn("", "a:b:C", "c") == "urn:pulumi:test::gpufleet::a:b:C::c"

    run_under_mocks(program)


def test_a_mocked_run_skips_the_sdks_stack_walk_and_puts_it_back():
    """engine.no_source_positions: the SDK's `_get_stack_trace` is replaced only while the program runs."""
    from pulumi.runtime import resource as sdk_resource
    import pulumi

    original = sdk_resource._get_stack_trace
    seen = []

    def program():
        seen.append(sdk_resource._get_stack_trace())
        pulumi.CustomResource("test:index:Thing", "thing")

    monitor = run_under_mocks(program)
    assert [r.name for r in monitor.registrations if r.type == "test:index:Thing"] == ["thing"]
    assert len(seen) == 1 and list(seen[0].frames) == []  # the empty trace the SDK sends without a user frame
    assert sdk_resource._get_stack_trace is original
