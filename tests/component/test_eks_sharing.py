"""GPU sharing on EKS pools: the instance type decides the GPU, so sharing checks, node labels, the
device-plugin config and the capacity all read the pool's shape from the catalog."""

import pytest
import yaml

from gpufleet.base.spec import SpecError
from tests.helpers import example_config, one, plan_config

NG = "aws:eks/nodeGroup:NodeGroup"


def _with_sharing(pool_index: int, sharing: dict) -> dict:
    config = example_config("prod-eks")
    config["gpufleet:nodePools"][pool_index]["sharing"] = sharing
    return config


def test_mig_on_an_instance_type_without_mig_is_a_spec_error():
    with pytest.raises(SpecError) as info:
        plan_config(_with_sharing(1, {"mode": "mig", "profile": "1g.10gb"}), stack="prod-eks")
    assert [str(p) for p in info.value.problems] == [
        "stack 'prod-eks': gpufleet:nodePools[1].sharing.mode: GPU L4 of pool 'l4-infer' has no MIG "
        "(MIG GPUs: A100-40GB, A100-80GB, H100-80GB, H100-NVL, H200, B200, RTX-PRO-6000, B300, GB200, GB300)"
    ]


@pytest.fixture(scope="module")
def mig_plan():
    return plan_config(_with_sharing(0, {"mode": "mig", "profile": "1g.10gb"}), stack="prod-eks")


def test_mig_pool_labels_and_capacity(mig_plan):
    labels = one(mig_plan, NG, "prod-gpu-pool-h100-train-ng").inputs["labels"]
    assert labels["nvidia.com/mig.config"] == "all-1g.10gb"
    assert labels["nvidia.com/device-plugin.config"] == "h100-train"
    h100 = next(c for c in mig_plan.capacity if c.pool == "h100-train")
    assert h100.advertised == {"nvidia.com/mig-1g.10gb": 56, "vpc.amazonaws.com/efa": 32}  # 8 H100 x 7


def test_device_plugin_config_entry_for_the_pool(mig_plan):
    cm = one(mig_plan, "kubernetes:core/v1:ConfigMap", "prod-gpu-gpu-sharing-device-plugin-config")
    assert yaml.safe_load(cm.inputs["data"]["h100-train"]) == {"version": "v1", "flags": {"migStrategy": "mixed"}}


def test_time_slicing_on_eks_multiplies_the_instance_gpus():
    p = plan_config(_with_sharing(1, {"mode": "time-slicing", "replicas": 4}), stack="prod-eks")
    l4 = next(c for c in p.capacity if c.pool == "l4-infer")
    assert (l4.gpus_per_node, l4.advertised) == (1, {"nvidia.com/gpu": 4})  # g6.xlarge: 1 L4 x 4 replicas
