"""gpu-observability (advisory): a stack with GPUs and no metrics pipeline, on PASSED and FAILED fixtures.

Each case starts from the valid stacks of conftest.py (which carry a pipeline) and changes one thing."""

import pytest

from gpufleet.policies import inputs as I
from tests.policy.fixtures import GKE_CLUSTER_IN, NODE_GROUP_IN, OPERATOR_IN, findings, res, with_

NAME = "gpu-observability"
FOUND = lambda *names: {(NAME, n, "advisory") for n in names}  # noqa: E731


def without(stack: dict, *keys: str) -> list:
    return [r for k, r in stack.items() if k not in keys]


def test_passed_eks_with_its_own_prometheus(eks_stack):
    assert findings(list(eks_stack.values()), policy=NAME) == set()


def test_passed_gke_with_managed_prometheus(gke_stack):
    assert findings(list(gke_stack.values()), policy=NAME) == set()


def test_failed_eks_without_a_pipeline_names_every_gpu_pool(eks_stack):
    second = res(I.EKS_NODE_GROUP, "l4", with_(NODE_GROUP_IN, "instanceTypes", ["g6.xlarge"]))
    assert findings(without(eks_stack, "monitoring") + [second], policy=NAME) == FOUND("h100", "l4")


def test_failed_gke_without_managed_prometheus(gke_stack):
    stack = without(gke_stack, "prod") + [res(I.GKE_CLUSTER, "prod", GKE_CLUSTER_IN)]
    assert findings(stack, policy=NAME) == FOUND("h100")


@pytest.mark.parametrize("type_", [
    "kubernetes:monitoring.coreos.com/v1:ServiceMonitor",
    "kubernetes:monitoring.googleapis.com/v1:PodMonitoring",
    "aws:amp/scraper:Scraper",
])
def test_passed_when_the_stack_feeds_a_prometheus_it_does_not_install(eks_stack, type_):
    stack = without(eks_stack, "monitoring") + [res(type_, "dcgm", {})]
    assert findings(stack, policy=NAME) == set()


def test_failed_k3s_like_stack_reports_the_operator_release():
    """k3s hosts are not cloud resources: the GPU Operator release stands for the GPUs."""
    stack = [res(I.HELM_RELEASE, "gpu-operator", OPERATOR_IN)]
    assert findings(stack, policy=NAME) == FOUND("gpu-operator")


def test_passed_without_gpus():
    assert findings([res(I.HELM_RELEASE, "nth", {"name": "nth", "chart": "aws-node-termination-handler", "values": {}})], policy=NAME) == set()


def test_exempt_pool_by_config(eks_stack):
    stack = without(eks_stack, "monitoring")
    config = {NAME: {"exemptions": {"h100": "metrics go to the central Prometheus of the platform team"}}}
    assert findings(stack, config=config, policy=NAME) == set()
