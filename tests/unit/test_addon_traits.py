"""AddonTraits (gpufleet/base/platforms/contract/addons.py): what each platform declares about its cold-start, storage,
registry-mirror, image, metrics-backend and upkeep features is consistent with the shared code that asks it, and a
platform that declares nothing gets defaults that refuse nothing and add nothing."""

from __future__ import annotations

import typing

import pytest

from gpufleet.app.verify.nccl import allreduce
from gpufleet.base import platforms, versions
from gpufleet.base.platforms.contract import AddonTraits
from gpufleet.base.spec.features import cold_start, observability
from tests.helpers import example_config, spec_problems

NAMES = sorted(platforms.names())
PINNED_CHARTS = {v.name for v in vars(versions).values() if isinstance(v, versions.HelmChart)}
COLD_START_KEYS = {alias for _, alias, _ in (*cold_start.PLATFORM_SETTINGS, cold_start.DATA_VOLUME)}


@pytest.mark.parametrize("name", NAMES)
def test_each_platform_declares_addon_traits_the_shared_code_knows(name):
    addons = platforms.get(name).addons
    assert isinstance(addons, AddonTraits)
    backends = set(typing.get_args(observability.Backend)) - {"auto"}
    assert set(addons.metrics_backends) <= backends
    assert addons.default_metrics_backend in {*addons.metrics_backends, "none"}
    assert addons.own_charts <= PINNED_CHARTS
    assert addons.cold_start_settings <= COLD_START_KEYS
    assert addons.rdma_fabric is None or addons.rdma_fabric in allreduce.FABRIC_CHECKS


def test_a_platform_that_declares_nothing_refuses_nothing_and_adds_nothing():
    bare = AddonTraits()
    assert bare.metrics_backends == ("kube-prometheus-stack", "none") and bare.default_metrics_backend == "none"
    assert not bare.pre_pulls_images and not bare.cold_start_settings and bare.parallel_image_pulls_refusal is None
    assert not bare.own_charts and not bare.registry_credentials
    assert bare.rdma_fabric is None
    for method, args in (("cold_start_problems", ("s", "at", None, None)), ("model_cache_problems", ("s", "at", None, None)),
                         ("registry_problems", ("s", None, {})), ("upkeep_problems", ("s", None)),
                         ("unmirrored_manifests", (None,)), ("own_charts_with_images", (None,)),
                         ("host_downloads", (None,)), ("host_drivers", (None,))):
        assert getattr(bare, method)(*args) == [], method
    for method in ("own_gpu_stack", "platform_driver", "precompiled_driver_refusal"):
        assert getattr(bare, method)(None) is None, method


def test_the_metrics_backend_auto_is_the_platforms_default():
    spec = observability.ObservabilitySpec()
    assert {name: spec.backend(name) for name in ("eks", "gke", "k3s")} == {"eks": "none", "gke": "gke-managed", "k3s": "none"}


def test_an_aks_model_cache_without_a_class_is_refused_naming_the_key():
    """(Before the traits an AKS stack here raised KeyError from the hint table.) Since issue 49 the cache defaults to
    gpufleet-rwx where the stack turns Azure Files on (tests/unit/mistakes_round4_cases.py), so aks-train without it."""
    config = example_config("aks-train")
    config["gpufleet:cluster"]["aks"]["storage"] = {}
    config["gpufleet:modelCaches"] = [{"name": "llama", "source": "hf://meta/llama"}]
    problems = spec_problems(config)
    assert len(problems) == 1 and "gpufleet:modelCaches[0].storageClass" in problems[0]
    assert "gpufleet-rwx" in problems[0]
