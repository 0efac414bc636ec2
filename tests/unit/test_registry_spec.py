"""gpufleet:registry and cluster.k3s.airgap checks (issue 37): each refusal names its key."""

from __future__ import annotations

from tests.helpers import example_config, load_config, spec_problems


def _paths(problems):
    return sorted({p.split(": ", 2)[1] for p in problems})


def test_the_airgap_examples_load():
    assert load_config(example_config("airgap-k3s"), "airgap-k3s").registry.mirror
    assert load_config(example_config("airgap-eks"), "airgap-eks").registry.mirror


def test_an_unverified_k3s_file_is_refused_naming_its_key():
    config = example_config("airgap-k3s")
    del config["gpufleet:cluster"]["k3s"]["airgap"]["sha256"]["images"]
    assert _paths(spec_problems(config)) == ["gpufleet:cluster.k3s.airgap.sha256.images"]


def test_airgap_without_a_mirror_has_no_path_to_its_images():
    config = example_config("airgap-k3s")
    del config["gpufleet:registry"]
    del config["gpufleet:registryPassword"]
    assert _paths(spec_problems(config)) == ["gpufleet:registry.mirror"]


def test_a_chart_that_would_bypass_the_mirror_is_refused():
    config = example_config("airgap-k3s")
    config["gpufleet:addons"]["trainer"] = {"enabled": True}
    problems = spec_problems(config)
    assert _paths(problems) == ["gpufleet:registry.mirror"] and "Kubeflow trainer" in problems[0]


def test_an_eks_mirror_outside_ecr_is_refused():
    config = example_config("airgap-eks")
    config["gpufleet:registry"]["mirror"] = "registry.example.internal/gpufleet"
    assert _paths(spec_problems(config)) == ["gpufleet:registry.mirror"]


def test_the_password_is_secret_and_needed():
    config = example_config("airgap-k3s")
    config["gpufleet:registryPassword"] = "plain"
    assert _paths(spec_problems(config)) == ["gpufleet:registryPassword"]
    del config["gpufleet:registryPassword"]
    assert _paths(spec_problems(config)) == ["gpufleet:registryPassword"]
