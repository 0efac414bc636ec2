"""Scheduling traits (gpufleet/base/platforms/contract/scheduling.py): what each built-in platform declares about DRA,
topology, serving, AMD, sharing, RDMA, admission and catalog checks, and what a platform that declares nothing gets."""

from __future__ import annotations

import pytest

from gpufleet.base import platforms, versions
from gpufleet.base.platforms.contract import ProgramTraits, SchedulingTraits
from gpufleet.base.spec.checks import admission_checks, catalog_checks, compat_checks
from gpufleet.base.spec.features import amd_checks, dra_checks, sharing_checks, topology, topology_checks
from gpufleet.base.spec.features.serving import AGENTGATEWAY_CLASS, ENVOY_CLASS, GKE_INFERENCE_POOL_CLASSES, GatewaySpec
from tests.helpers import example_config, load_config

BUILT_IN = ("eks", "gke", "aks", "k3s", "existing")


def _where(has) -> set[str]:
    return {n for n in BUILT_IN if has(platforms.get(n).scheduling)}


def test_which_built_in_platform_has_which_feature():
    assert _where(lambda t: t.amd_gpus) == {"k3s"}
    assert _where(lambda t: t.declared_gpus) == {"k3s"}
    assert _where(lambda t: t.nic_rdma) == {"k3s", "existing"}
    assert _where(lambda t: t.sriov_rdma) == {"k3s"}
    assert _where(lambda t: t.local_path_storage) == {"k3s"}
    assert _where(lambda t: not t.stack_sharing) == {"gke"}
    assert _where(lambda t: t.gateway_classes) == {"eks", "gke", "k3s", "aks", "existing"}
    assert _where(lambda t: t.inference_pool_monitoring) == {"gke"}


def test_serving_gateway_classes_and_what_auto_picks():
    assert platforms.get("gke").scheduling.gateway_classes == GKE_INFERENCE_POOL_CLASSES
    # Internal by default (issue 48): GKE's regional internal class; the external one only with exposure: external.
    assert GatewaySpec().resolved("gke") == "gke-l7-rilb"
    assert GatewaySpec(exposure="external").resolved("gke") == "gke-l7-regional-external-managed"
    # Issue 52: agentgateway (InferencePool routing) wherever the platform has no managed inference gateway; Envoy
    # Gateway (routes to a Service) still offered there.
    for name in ("eks", "k3s", "aks", "existing"):
        assert GatewaySpec().resolved(name) == AGENTGATEWAY_CLASS, name
        assert GatewaySpec(exposure="external").resolved(name) == AGENTGATEWAY_CLASS, name
        assert platforms.get(name).scheduling.gateway_classes == (AGENTGATEWAY_CLASS, ENVOY_CLASS), name
        assert platforms.get(name).scheduling.inference_extension_releases == (versions.INFERENCE_EXTENSION,), name
    assert platforms.get("gke").scheduling.inference_pool_provider == "gke"
    assert platforms.get("eks").scheduling.inference_pool_provider == "none"


def test_envoys_service_is_internal_unless_external_on_every_platform():
    """The Service Envoy Gateway publishes the serving Gateway through: an internal load balancer on EKS (both AWS
    controllers' annotations) and AKS, ClusterIP (no ServiceLB host port on every node) on k3s and by default."""
    aws = {"service.beta.kubernetes.io/aws-load-balancer-internal": "true",
           "service.beta.kubernetes.io/aws-load-balancer-scheme": "internal"}
    assert platforms.get("eks").scheduling.gateway_service(False) == {"type": "LoadBalancer", "annotations": aws}
    assert platforms.get("aks").scheduling.gateway_service(False) == {
        "type": "LoadBalancer", "annotations": {"service.beta.kubernetes.io/azure-load-balancer-internal": "true"}}
    assert platforms.get("k3s").scheduling.gateway_service(False) == {"type": "ClusterIP"}
    for name in BUILT_IN:
        internal = platforms.get(name).scheduling.gateway_service(False)
        assert internal["type"] == "ClusterIP" or "internal" in str(internal.get("annotations")), name
        assert platforms.get(name).scheduling.gateway_service(True)["type"] == "LoadBalancer", name
    assert platforms.get("eks").scheduling.gateway_service(True)["annotations"] == {
        "service.beta.kubernetes.io/aws-load-balancer-scheme": "internet-facing"}


@pytest.mark.parametrize("name, key", [("eks", "instanceType"), ("gke", "machineType"), ("k3s", "gpu"), ("aks", "vmSize"),
                                       ("existing", "gpu")])
def test_the_key_naming_a_pools_nvlink_machine(name, key):
    assert platforms.get(name).scheduling.machine_key == key


def test_messages_list_the_platforms_that_have_a_feature():
    assert amd_checks.amd_platforms() == ["k3s"]
    assert sharing_checks.platforms_where(lambda t: t.nic_rdma) == ["k3s", "existing"]


class _Toy(SchedulingTraits):
    amd_gpus = True


def test_a_plugged_in_platform_joins_the_messages_by_its_traits():
    platforms.register(platforms.PlatformTraits("toy", ProgramTraits(components="toy.platform", extra="toy"),
                                                scheduling=_Toy()))
    try:
        assert amd_checks.amd_platforms() == ["k3s", "toy"]
    finally:
        platforms.unregister("toy")
    assert amd_checks.amd_platforms() == ["k3s"]


def test_a_platform_that_declares_nothing_gets_the_defaults():
    platforms.register(platforms.PlatformTraits("toy", ProgramTraits(components="toy.platform", extra="toy")))
    try:
        spec = load_config(example_config("dev"))
        spec = spec.model_copy(update={"cluster": spec.cluster.model_copy(update={"platform": "toy"})})
        pool = spec.node_pools[0]
        assert dra_checks.machine_of(pool, "toy") == pool.gpu
        assert topology.machine_levels(pool, "toy") == []
        assert catalog_checks.check("s", spec, {"aws:region": "us-east-1"}) == []
        assert compat_checks.warnings("s", spec) == []
        assert topology_checks.warnings("s", spec) == []
        assert platforms.get("toy").scheduling.admission_problems("s", spec) == []
        assert platforms.get("toy").scheduling.driver_floor_problems("s", spec, 0, pool, 550) is None
        assert platforms.get("toy").scheduling.catalog_drivers(spec) is None
        assert isinstance(admission_checks.check("s", spec), list)
        assert isinstance(dra_checks.check("s", spec), list)
    finally:
        platforms.unregister("toy")
