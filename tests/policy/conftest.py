import pytest

from gpufleet.policies import inputs as I
from tests.policy.fixtures import (
    AUTOSCALER_IN, EKS_CLUSTER_IN, GKE_CLUSTER_IN, NODE_GROUP_IN, NODE_POOL_IN, OPERATOR_IN, PROMETHEUS_IN, res, with_,
)

# The GPU Operator as it must run next to preinstalled drivers (EKS NVIDIA AMIs, GKE-installed drivers).
OPERATOR_NO_DRIVER = with_(with_(OPERATOR_IN, "values.driver", {"enabled": False}), "values.toolkit.enabled", False)


@pytest.fixture
def eks_stack():
    """A valid EKS stack: every rule passes. Tests replace one resource or change one field."""
    return {
        "prod": res(I.EKS_CLUSTER, "prod", EKS_CLUSTER_IN),
        "h100": res(I.EKS_NODE_GROUP, "h100", NODE_GROUP_IN),
        "gpu-operator": res(I.HELM_RELEASE, "gpu-operator", OPERATOR_NO_DRIVER),
        "cluster-autoscaler": res(I.HELM_RELEASE, "cluster-autoscaler", AUTOSCALER_IN),
        "monitoring": res(I.HELM_RELEASE, "kube-prometheus-stack", PROMETHEUS_IN),
    }


@pytest.fixture
def gke_stack():
    return {
        "prod": res(I.GKE_CLUSTER, "prod", with_(GKE_CLUSTER_IN, "monitoringConfig.managedPrometheus.enabled", True)),
        "h100": res(I.GKE_NODE_POOL, "h100", NODE_POOL_IN),
        "gpu-operator": res(I.HELM_RELEASE, "gpu-operator", OPERATOR_NO_DRIVER),
    }


@pytest.fixture(scope="session")
def dev_plan():
    from tests.helpers import planned

    return planned("dev", policies=True)
