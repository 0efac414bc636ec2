"""Plan JSON pairs for review tests: the dev example with one change each, and an EKS-shaped plan.

The EKS plan is written by hand in the plan JSON contract (DESIGN.md §5) with pulumi-aws type tokens
and input names, so the review is tested against the contract, not against the EKS component.
"""

from __future__ import annotations

import copy

from gpufleet.app.plan.render import to_json
from tests.helpers import example_config, plan_config

STACK = "dev"


def dev_plan(mutate=None) -> dict:
    config = example_config(STACK)
    if mutate:
        mutate(config)
    return to_json(plan_config(config, stack=STACK))


def resize_a100(c):
    c["gpufleet:nodePools"][1]["hosts"].append({"name": "gpu-a100-2", "address": "192.0.2.42"})


def operator_release(c):
    c["gpufleet:gpuOperator"]["version"] = "v26.3.3"


def l4_to_l40s(c):
    c["gpufleet:nodePools"][0]["gpu"] = "L40S"


def add_h100(c):
    c["gpufleet:nodePools"].append({
        "name": "h100", "gpu": "H100-80GB", "gpusPerNode": 8, "pricePerNodeHour": 24.0,
        "hosts": [{"name": "gpu-h100-1", "address": "192.0.2.51"}],
    })


def remove_l4(c):
    del c["gpufleet:nodePools"][0]


def unsupported_driver(c):
    c["gpufleet:gpuOperator"]["driver"] = {"source": "operator", "version": "570.86.15"}


DEV_CHANGES = {
    "resize": resize_a100,
    "operator": operator_release,
    "gpu": l4_to_l40s,
    "add": add_h100,
    "remove": remove_l4,
    "violation": unsupported_driver,
}

_P = "urn:pulumi:prod::gpufleet::gpufleet:index:GpuCluster"


def eks_plan(capacity_type: str = "ON_DEMAND", instance_type: str = "p5.48xlarge", max_nodes: int = 4,
             price: float = 98.32, gpu: str = "H100-80GB") -> dict:
    """An EKS stack with one H100 pool, in the plan JSON contract."""
    pool_urn = f"{_P}$gpufleet:eks:EksNodePool::prod-pool-h100"
    eks_urn = f"{_P}$gpufleet:eks:EksCluster::prod-eks"
    op_urn = f"{_P}$gpufleet:addons:GpuOperator::prod-gpu-operator"
    resources = [
        {"urn": "urn:pulumi:prod::gpufleet::gpufleet:index:GpuCluster::prod", "type": "gpufleet:index:GpuCluster",
         "name": "prod", "parent": "urn:pulumi:prod::gpufleet::pulumi:pulumi:Stack::gpufleet-prod", "inputs": {}},
        {"urn": eks_urn, "type": "gpufleet:eks:EksCluster", "name": "prod-eks",
         "parent": "urn:pulumi:prod::gpufleet::gpufleet:index:GpuCluster::prod", "inputs": {}},
        {"urn": f"{_P}$gpufleet:eks:EksCluster$aws:eks/cluster:Cluster::prod-eks-cluster",
         "type": "aws:eks/cluster:Cluster", "name": "prod-eks-cluster", "parent": eks_urn,
         "inputs": {"name": "prod-eks", "version": "1.34", "roleArn": "arn:aws:iam::123456789012:role/prod-eks",
                    "vpcConfig": {"subnetIds": ["subnet-0a1b2c3d4e5f60718"]}}},
        {"urn": pool_urn, "type": "gpufleet:eks:EksNodePool", "name": "prod-pool-h100",
         "parent": "urn:pulumi:prod::gpufleet::gpufleet:index:GpuCluster::prod", "inputs": {}},
        {"urn": f"{_P}$gpufleet:eks:EksNodePool$aws:eks/nodeGroup:NodeGroup::prod-pool-h100-nodegroup",
         "type": "aws:eks/nodeGroup:NodeGroup", "name": "prod-pool-h100-nodegroup", "parent": pool_urn,
         "inputs": {"clusterName": "prod-eks", "amiType": "AL2023_x86_64_NVIDIA", "capacityType": capacity_type,
                    "instanceTypes": [instance_type],
                    "scalingConfig": {"desiredSize": 0.0, "minSize": 0.0, "maxSize": float(max_nodes)},
                    "labels": {"gpufleet.io/pool": "h100"},
                    "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}]}},
        {"urn": op_urn, "type": "gpufleet:addons:GpuOperator", "name": "prod-gpu-operator",
         "parent": "urn:pulumi:prod::gpufleet::gpufleet:index:GpuCluster::prod", "inputs": {}},
        {"urn": f"{_P}$gpufleet:addons:GpuOperator$kubernetes:helm.sh/v3:Release::prod-gpu-operator-release",
         "type": "kubernetes:helm.sh/v3:Release", "name": "prod-gpu-operator-release", "parent": op_urn,
         "inputs": {"chart": "gpu-operator", "name": "gpu-operator", "namespace": "gpu-operator", "version": "v26.7.0",
                    "values": {"driver": {"enabled": False}, "toolkit": {"enabled": False}}}},
    ]
    gpus = 8
    capacity = [{"pool": "h100", "gpu": gpu, "gpusPerNode": gpus, "minNodes": 0, "maxNodes": max_nodes, "minGpus": 0,
                 "maxGpus": gpus * max_nodes, "capacityType": "spot" if capacity_type == "SPOT" else "on-demand",
                 "advertisedPerNode": {"nvidia.com/gpu": gpus}, "pricePerNodeHour": price}]
    return {
        "stack": "prod", "resources": copy.deepcopy(resources), "violations": [], "capacity": capacity,
        "cost": {"hourlyMin": 0.0, "hourlyMax": round(price * max_nodes, 4), "currency": "USD", "unpricedPools": []},
        "outputs": {},
    }
