"""GpuCluster from a plain Python dict (no stack file): the same resources as the stack, the same errors."""

import pulumi
import pytest

from gpufleet.components.gpu_cluster import GpuCluster, GpuClusterArgs, GpuClusterConfigError
from gpufleet.base.spec import SpecError
from gpufleet import testing
from gpufleet.testing import run as run_under_mocks
from tests.helpers import example_config, planned


def _dict_config(stack: str) -> dict:
    """An example stack's config as a user would write it in Python: keys without `gpufleet:`, no secret."""
    config = example_config(stack)
    config.pop("gpufleet:sshPrivateKey", None)
    return {key.removeprefix("gpufleet:") if key.startswith("gpufleet:") else key: value for key, value in config.items()}


@pytest.mark.parametrize("stack", ["dev", "prod-eks"])
def test_from_config_builds_what_the_stack_file_builds(stack):
    config = _dict_config(stack)
    provider_config = {k: v for k, v in config.items() if ":" in k}  # aws:region: the stack's config, as under `pulumi up`

    def program():
        args = GpuClusterArgs.from_config(
            {k: v for k, v in config.items() if ":" not in k},
            ssh_private_key=pulumi.Output.secret("test-key") if "k3s" in str(config["cluster"]) else None,
        )
        GpuCluster(args.spec.cluster.name or stack, args)

    # gpufleet.testing plans the user's program as `gpufleet plan` plans the stack: the same resources, and from the
    # GpuCluster's spec the same capacity, cost, warnings and policy verdicts.
    result = testing.plan(program, stack=stack, config=provider_config)
    expected = planned(stack, policies=True)
    assert [(r.urn, r.type, r.parent, r.inputs) for r in result.resources] == [
        (r.urn, r.type, r.parent, r.inputs) for r in expected.resources]
    assert any(r.type == "gpufleet:index:GpuCluster" for r in result.resources)
    assert result.spec == expected.spec
    assert [c.to_json() for c in result.capacity] == [c.to_json() for c in expected.capacity]
    assert result.cost.to_json() == expected.cost.to_json() and result.cost.to_json()["hourlyMax"] > 0
    assert [str(w) for w in result.warnings] == [str(w) for w in expected.warnings]
    assert result.violations == expected.violations


def test_from_config_raises_every_problem_at_once_and_registers_nothing():
    config = _dict_config("dev")
    config["nodePools"][0]["gpu"] = "X100"
    config["nodePools"][1]["minNode"] = 1
    caught = {}

    def program():
        try:
            GpuClusterArgs.from_config(config, stack="mine")
        except SpecError as exc:
            caught["error"] = exc

    monitor = run_under_mocks(program, stack="mine")
    error = caught["error"]
    assert isinstance(error, GpuClusterConfigError) and isinstance(error, pulumi.RunError)
    paths = {p.path for p in error.problems}
    assert {"gpufleet:nodePools[0].gpu", "gpufleet:nodePools[1].minNode", "gpufleet:sshPrivateKey"} <= paths
    text = str(error)
    assert "invalid gpufleet config for stack 'mine'" in text
    assert "unknown GPU model 'X100'" in text and "did you mean 'minNodes'" in text
    assert monitor.registrations == []


def test_from_config_accepts_namespaced_keys_and_reads_the_region_from_stack_config():
    config = example_config("prod-eks")
    region = config.pop("aws:region")

    def program():
        args = GpuClusterArgs.from_config(config)  # `gpufleet:` keys as in a stack file
        assert args.spec.cluster.platform == "eks"
        assert args.ssh_private_key is None

    run_under_mocks(program, stack="prod-eks", config={"aws:region": region})

    def without_region():
        with pytest.raises(GpuClusterConfigError, match="aws:region"):
            GpuClusterArgs.from_config(config)

    run_under_mocks(without_region, stack="prod-eks")
