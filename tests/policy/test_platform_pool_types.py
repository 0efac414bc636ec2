"""The pack's GPU pools come from every registered platform's declared pool types (PolicyTraits.pool_types): a platform
only tests know is judged with no shared edit, and a platform that declares nothing has no pools the pack reads."""

from __future__ import annotations

from typing import Optional

import pytest

from gpufleet.base import platforms
from gpufleet.base.platforms.contract import PlatformTraits, PolicyTraits, ProgramTraits
from gpufleet.base.platforms.contract.policy import GpuPoolType, GpuShape, Idle, Inputs, Taint, object_taints
from gpufleet.policies import inputs as I
from gpufleet.policies.rules import gpu_pool_taint
from gpufleet.policies.servicer import _judged_types
from tests.policy.fixtures import findings, res

TOY_POOL = "toycloud:index/gpuPool:GpuPool"


class ToyPool(GpuPoolType):
    """A toy cloud's GPU pool: `gpus` per node, taints as maps, a minimum size."""

    token = TOY_POOL

    def gpu_pool(self, inputs: Inputs) -> Optional[tuple[Optional[GpuShape], list[str]]]:
        gpus = int(inputs.number("gpus") or 0)
        return (GpuShape("toy-8", "H100-80GB", gpus, 1.0), ["toy-8"]) if gpus else None

    def taints(self, inputs: Inputs) -> list[Taint]:
        return object_taints(inputs, "taints")

    def minimum(self, inputs: Inputs) -> Optional[float]:
        return inputs.number("minNodes")

    def scale_to_zero_problems(self, inputs: Inputs, idle: Idle) -> list[str]:
        minimum = self.minimum(inputs) or 0
        return [f"minNodes is {minimum:g}: {idle(minimum, 1)}"] if minimum else []


class ToyPolicy(PolicyTraits):
    pool_types = (ToyPool(),)


@pytest.fixture
def toy():
    platforms.register(PlatformTraits("toyfleet", ProgramTraits(components="toyfleet.platform", extra="toyfleet"),
                                      policy=ToyPolicy()))
    try:
        yield
    finally:
        platforms.unregister("toyfleet")


TAINTED = {"gpus": 8.0, "minNodes": 0.0, "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}]}


def test_a_test_only_platform_s_pools_are_judged(toy):
    assert findings([res(TOY_POOL, "toy-a", TAINTED)], policy=gpu_pool_taint.NAME) == set()
    assert findings([res(TOY_POOL, "toy-b", {**TAINTED, "taints": []})], policy=gpu_pool_taint.NAME) == {
        (gpu_pool_taint.NAME, "toy-b", "mandatory")}
    assert findings([res(TOY_POOL, "toy-c", {**TAINTED, "minNodes": 2.0})], policy="gpu-pool-scale-to-zero") == {
        ("gpu-pool-scale-to-zero", "toy-c", "mandatory")}
    assert findings([res(TOY_POOL, "cpu", {"gpus": 0.0})]) == set()  # not a GPU pool: nothing to judge


def test_the_servicer_skips_no_pool_type_of_a_platform_registered_later(toy):
    assert TOY_POOL in _judged_types(gpu_pool_taint.POLICY)
    platforms.unregister("toyfleet")
    assert TOY_POOL not in _judged_types(gpu_pool_taint.POLICY)


@pytest.mark.parametrize("name", ["k3s", "existing"])
def test_a_platform_that_declares_nothing_has_no_pool_types(name):
    assert platforms.get(name).policy.pool_types == ()
    assert all(platform != name for platform, _ in I.pool_types().values())


def test_each_cloud_pool_type_belongs_to_its_platform():
    assert {token: platform for token, (platform, _) in I.pool_types().items()} == {
        I.EKS_NODE_GROUP: "eks", I.GKE_NODE_POOL: "gke", I.AKS_NODE_POOL: "aks", I.AKS_CLASSIC_NODE_POOL: "aks"}


@pytest.mark.parametrize("count,gpu_pool", [(1.0, True), (0.0, False), (-1.0, False)])
def test_a_gke_pool_is_a_gpu_pool_only_with_a_positive_accelerator_count(count, gpu_pool):
    """Issue 56: `count > 0` -> `!= 0` survived; a negative count (a typo, never a GPU) must not make a GPU pool."""
    _, node_pool = I.pool_types()[I.GKE_NODE_POOL]
    inputs = {"nodeConfig": {"machineType": "n2-standard-8", "guestAccelerators": [{"type": "nvidia-l4", "count": count}]}}
    assert (node_pool.gpu_pool(I.PropsInputs(inputs)) is not None) is gpu_pool


def test_a_gke_pool_s_attached_accelerator_decides_its_gpu():
    """A machine type the catalog does not list, with attached T4s: the shape is the accelerator's (issue 56: the
    accelerator read `if accs` -> `if not accs` survived: every listed machine names its own accelerator)."""
    _, node_pool = I.pool_types()[I.GKE_NODE_POOL]
    inputs = {"nodeConfig": {"machineType": "n1-highmem-8", "guestAccelerators": [{"type": "nvidia-tesla-t4", "count": 2.0}]}}
    assert node_pool.gpu_pool(I.PropsInputs(inputs)) == (GpuShape("n1-highmem-8", "T4", 2, None), ["n1-highmem-8"])


class MinimumOnly(GpuPoolType):
    """A pool type that says only its minimum: the contract's default scale-to-zero rule judges it."""

    token = "toycloud:index/minOnly:MinOnly"

    def minimum(self, inputs: Inputs) -> Optional[float]:
        return inputs.number("min")

    def reserved(self, inputs: Inputs) -> bool:
        return inputs.truthy("reserved")


@pytest.mark.parametrize("inputs,problems", [
    ({"min": 0.0}, []),
    ({"min": -1.0}, []),  # below zero is no idle node (a typo the cloud refuses)
    ({}, []),
    ({"min": 1.0, "reserved": True}, []),
    ({"min": 1.0}, ["its minimum is 1, not 0: idle 1 x 1 while no GPU work runs"]),
])
def test_the_default_scale_to_zero_rule_at_zero_and_one(inputs, problems):
    """Issue 56: `minimum > 0` -> `>= 0` in the contract's default survived (every built-in pool type overrides it)."""
    idle = lambda nodes, zones: f"idle {nodes:g} x {zones}"  # noqa: E731
    assert MinimumOnly().scale_to_zero_problems(I.PropsInputs(inputs), idle) == problems


def test_object_taints_keep_key_value_and_effect_in_kubernetes_spelling():
    taints = [{"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}, {"key": "a", "effect": "NoExecute"}]
    assert object_taints(I.PropsInputs({"taints": taints}), "taints") == [
        ("nvidia.com/gpu", "present", "NoSchedule"), ("a", "", "NoExecute")]
