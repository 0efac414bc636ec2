"""The components under Pulumi's own unit-test mocks (pulumi.com/docs/iac/guides/testing/unit/): `set_mocks` with a
Mocks whose new_resource returns the inputs and whose call returns nothing. Outputs those mocks leave out arrive as
None; before components/known.py a component that read one (an EKS cluster's CA, a GKE cluster's master auth, the
kubeconfig a k3s server writes) crashed in the SDK's serializer with `TypeError: 'NoneType' object is not
subscriptable`. Here they register exactly what they register under gpufleet.testing's cloud-shaped mocks."""

import pulumi
import pytest
from pulumi.runtime import settings as runtime_settings
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from gpufleet.app.program import config_value
from tests.helpers import example_config, planned


class StandardMocks(pulumi.runtime.Mocks):
    """The mocks of Pulumi's unit-testing guide: every resource gets `<name>_id` and its inputs as outputs."""

    def __init__(self):
        self.created: list[tuple[str, str]] = []

    def new_resource(self, args: pulumi.runtime.MockResourceArgs):
        self.created.append((args.typ, args.name))
        return [args.name + "_id", args.inputs]

    def call(self, args: pulumi.runtime.MockCallArgs):
        return {}


def run_standard(program, stack: str, config: dict, project: str = "gpufleet") -> StandardMocks:
    """`program` as a user's pytest runs it: the SDK's own MockMonitor (set_mocks without a monitor)."""
    mocks = StandardMocks()
    pulumi.runtime.set_all_config({k: config_value(v) for k, v in config.items()}, [])
    runtime_settings.ROOT.set(None)
    pulumi.runtime.set_mocks(mocks, project=project, stack=stack, preview=False)
    _sync_await(run_pulumi_func(program))
    return mocks


@pytest.mark.parametrize("stack", ["dev"])  # k3s: the kubeconfig read from a command's stdout
def test_gpu_cluster_registers_the_same_resources_as_under_the_plan(stack):
    from gpufleet.components import GpuCluster, GpuClusterArgs

    config = example_config(stack)
    config.pop("gpufleet:sshPrivateKey", None)
    plain = {k.removeprefix("gpufleet:"): v for k, v in config.items() if k.startswith("gpufleet:")}

    def program():
        args = GpuClusterArgs.from_config(plain, ssh_private_key="test-key" if "k3s" in plain["cluster"] else None)
        GpuCluster(args.spec.cluster.name or stack, args)

    mocks = run_standard(program, stack, {k: v for k, v in config.items() if not k.startswith("gpufleet:")})
    expected = planned(stack)
    assert sorted(mocks.created) == sorted((r.type, r.name) for r in expected.resources)

