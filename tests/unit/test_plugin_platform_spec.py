"""A platform registered at run time that declares nothing but its program (every other trait a default) validates:
`cluster.platform: toy` with no `cluster.toy` block, any Kubernetes minor, no secrets, no checks of its own."""

from __future__ import annotations

import pytest

from gpufleet.base import platforms
from gpufleet.base.platforms.contract import PlatformTraits, ProgramTraits
from gpufleet.base.spec import _check, _discovered_checks, _secret_checks, load_spec, secret_config_keys
from gpufleet.base.spec.checks import platform_keys
from gpufleet.base.spec.stack import StackSpec

TOY = PlatformTraits(name="toy", program=ProgramTraits(components="tests.toy.platform", extra="toy"))
MINIMAL = {"gpufleet:cluster": {"platform": "toy"}}


@pytest.fixture
def toy():
    platforms.register(TOY)
    try:
        yield TOY
    finally:
        platforms.unregister("toy")


def test_the_spec_layers_take_a_platform_that_declares_nothing(toy):
    """The cluster block, the version, the secrets, the keys of other platforms, the platform's own checks and every
    discovered check: none needs a trait the toy does not declare."""
    spec = StackSpec.model_validate({"cluster": {"platform": "toy", "kubernetesVersion": "1.34"}})
    assert spec.cluster.platform == "toy" and platforms.of(spec) is toy
    assert _secret_checks("dev", {"cluster": {"platform": "toy"}}, MINIMAL, set()) == []
    assert platform_keys.foreign_keys("dev", spec) == []
    assert toy.keys.checks("dev", spec, {}) == []
    assert [problem for run in _discovered_checks() for problem in run("dev", spec, {})] == []
    assert set(secret_config_keys()) == {"sshPrivateKey", "etcdS3AccessKey", "etcdS3SecretKey", "registryPassword",
                                         "kubeconfig"}


def test_a_platform_that_declares_nothing_validates_a_minimal_stack(toy):
    spec = load_spec("dev", MINIMAL)
    assert spec.cluster.platform == "toy"


def test_a_check_without_config_is_called_with_stack_and_spec():
    seen = []
    _check(lambda stack, spec: seen.append((stack, spec)) or [])("dev", "spec", {"aws:region": "x"})
    assert seen == [("dev", "spec")]
    with_config = lambda stack, spec, config: [config]  # noqa: E731
    assert _check(with_config) is with_config


def test_discovery_finds_every_check_module():
    """A new module in spec/checks/ (or a *_checks module in spec/features/) with a `check` runs without an edit."""
    from gpufleet.base.spec.checks import disabled_checks, name_checks, value_checks

    assert {disabled_checks.check, name_checks.check, value_checks.check} <= set(_discovered_checks())
