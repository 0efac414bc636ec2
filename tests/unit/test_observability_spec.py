"""gpufleet:observability in the spec: defaults per platform, bounds, and errors with key path and allowed values."""

import pytest

from gpufleet.spec import SpecError, load_spec
from gpufleet.spec.observability import ObservabilitySpec
from tests.helpers import example_config


def _load(stack: str, block: dict | None):
    config = dict(example_config(stack))
    if block is not None:
        config["gpufleet:observability"] = block
    return load_spec(stack, config, secret_keys={"gpufleet:sshPrivateKey"})


def test_defaults_are_managed_on_gke_and_off_elsewhere():
    spec = ObservabilitySpec()
    assert [spec.backend(p) for p in ("gke", "eks", "k3s")] == ["gke-managed", "none", "none"]
    assert (spec.metrics.retention, spec.metrics.storage_gib, spec.metrics.scrape_interval) == ("15d", 50, "30s")
    assert (spec.alerts.enabled, spec.alerts.idle_minutes, spec.alerts.idle_utilization_percent, spec.alerts.pending_minutes) == (True, 30, 5, 15)
    assert spec.dashboards.enabled and spec.node_health.enabled


def test_an_explicit_backend_wins():
    spec = _load("dev", {"metrics": {"backend": "kube-prometheus-stack", "storageGib": 20}}).observability
    assert spec.backend("k3s") == "kube-prometheus-stack" and spec.metrics.storage_gib == 20


@pytest.mark.parametrize("block,path,message", [
    ({"metrics": {"backend": "gke-managed"}}, "gpufleet:observability.metrics.backend", "not available on k3s"),
    ({"metrics": {"backend": "amp"}}, "gpufleet:observability.metrics.backend", "Input should be"),
    ({"metrics": {"retention": "two weeks"}}, "gpufleet:observability.metrics.retention", "String should match pattern"),
    ({"metrics": {"storageGib": 0}}, "gpufleet:observability.metrics.storageGib", "greater than or equal to 1"),
    ({"alerts": {"idleMinutes": 1}}, "gpufleet:observability.alerts.idleMinutes", "greater than or equal to 5"),
    ({"alerts": {"idel": 3}}, "gpufleet:observability.alerts.idel", "unknown key (allowed: enabled, idleMinutes, idleUtilizationPercent, pendingMinutes"),
])
def test_bad_values_name_the_key_path(block, path, message):
    with pytest.raises(SpecError) as err:
        _load("dev", block)
    problems = [str(p) for p in err.value.problems]
    assert any(f"{path}: " in p and message in p for p in problems), problems


def test_gke_refuses_kube_prometheus_stack_without_a_dcgm_exporter():
    with pytest.raises(SpecError) as err:
        _load("prod-gke", {"metrics": {"backend": "kube-prometheus-stack"}})
    assert "allowed: auto, gke-managed, none" in str(err.value)
