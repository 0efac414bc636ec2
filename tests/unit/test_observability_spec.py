"""gpufleet:observability in the spec: defaults per platform, bounds, and errors with key path and allowed values."""

import pytest

from gpufleet.base.spec import SpecError, load_spec
from gpufleet.base.spec.features.observability import ObservabilitySpec, amp_workspace_id, duration_seconds
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
    ({"metrics": {"backend": "amp"}}, "gpufleet:observability.metrics.backend", "not available on k3s (allowed: auto, kube-prometheus-stack, none)"),
    ({"metrics": {"backend": "thanos"}}, "gpufleet:observability.metrics.backend", "Input should be"),
    ({"metrics": {"ampWorkspaceArn": "ws-1234"}}, "gpufleet:observability.metrics.ampWorkspaceArn", "String should match pattern"),
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


WS = "arn:aws:aps:us-east-1:123456789012:workspace/ws-1234abcd-5678-ef90-ab12-cdef3456a78"


def test_amp_is_an_eks_backend():
    spec = _load("prod-eks", {"metrics": {"backend": "amp", "ampWorkspaceArn": WS}}).observability
    assert spec.backend("eks") == "amp" and spec.metrics.amp_workspace_arn == WS
    assert amp_workspace_id(WS) == "ws-1234abcd-5678-ef90-ab12-cdef3456a78"
    # auto stays none on EKS: the collector has an hourly price, opt in.
    assert _load("prod-eks", None).observability.backend("eks") == "none"


def test_gke_refuses_amp():
    with pytest.raises(SpecError) as err:
        _load("prod-gke", {"metrics": {"backend": "amp"}})
    assert ("stack 'prod-gke': gpufleet:observability.metrics.backend: not available on gke "
            "(allowed: auto, gke-managed, none) (got 'amp')") in str(err.value)


@pytest.mark.parametrize("block,message", [
    # The AWS managed collector's minimum interval (AMP User Guide, Scraper limitations).
    ({"metrics": {"backend": "amp", "scrapeInterval": "15s"}},
     "gpufleet:observability.metrics.scrapeInterval: the AWS managed collector (amp) scrapes at most every 30s "
     "(allowed: 30s or longer) (got '15s')"),
    # Cluster, scraper and workspace share a region (same section).
    ({"metrics": {"backend": "amp", "ampWorkspaceArn": WS.replace("us-east-1", "eu-west-1")}},
     "gpufleet:observability.metrics.ampWorkspaceArn: the workspace is in eu-west-1, the cluster in us-east-1 (aws:region)"),
    ({"metrics": {"backend": "kube-prometheus-stack", "ampWorkspaceArn": WS}},
     f"gpufleet:observability.metrics.ampWorkspaceArn: only used with metrics.backend: amp (the backend is kube-prometheus-stack) (got '{WS}')"),
    ({"metrics": {"ampWorkspaceArn": WS}},
     "gpufleet:observability.metrics.ampWorkspaceArn: only used with metrics.backend: amp (the backend is none)"),
])
def test_amp_settings_the_collector_refuses(block, message):
    with pytest.raises(SpecError) as err:
        _load("prod-eks", block)
    assert any(message in str(p) and str(p).startswith("stack 'prod-eks': ") for p in err.value.problems), err.value.problems


# Every unit of a Prometheus duration (prometheus.io/docs/prometheus/latest/configuration/configuration/, "<duration>":
# y = 365d, w = 7d); issue 56: the week's `7 * 86400` -> `7 >> 86400` survived while no test used d, w or y.
@pytest.mark.parametrize("text,seconds", [("30s", 30), ("1m", 60), ("1m30s", 90), ("500ms", 0.5), ("1h", 3600), ("0", 0),
                                          ("1d", 86400), ("1w", 604800), ("2w1d", 1296000), ("1y", 31536000)])
def test_duration_seconds(text, seconds):
    assert duration_seconds(text) == seconds


TOPIC = "arn:aws:sns:us-east-1:123456789012:gpu-alerts"
CHANNEL = "projects/my-gpu-project/notificationChannels/1234567890"


@pytest.mark.parametrize("stack,block,message", [
    ("prod-eks", {"metrics": {"backend": "kube-prometheus-stack"}, "alerts": {"snsTopicArn": TOPIC}},
     f"gpufleet:observability.alerts.snsTopicArn: only used with metrics.backend: amp (the backend is kube-prometheus-stack) (got '{TOPIC}')"),
    ("prod-eks", {"metrics": {"backend": "amp"}, "alerts": {"enabled": False, "snsTopicArn": TOPIC}},
     "gpufleet:observability.alerts.snsTopicArn: no alerts to send: alerts.enabled is false (allowed: remove it, or enable alerts)"),
    # AMP's alert manager sends to standard topics only (AMP User Guide, AMP-alertmanager-receiver-config).
    ("prod-eks", {"metrics": {"backend": "amp"}, "alerts": {"snsTopicArn": TOPIC + ".fifo"}},
     "gpufleet:observability.alerts.snsTopicArn: a FIFO topic: the workspace's alert manager sends to standard SNS topics only"),
    ("prod-eks", {"metrics": {"backend": "amp"}, "alerts": {"snsTopicArn": "gpu-alerts"}},
     "gpufleet:observability.alerts.snsTopicArn: String should match pattern"),
    ("prod-eks", {"metrics": {"backend": "amp"}, "alerts": {"notificationChannels": [CHANNEL]}},
     "gpufleet:observability.alerts.notificationChannels: only used with metrics.backend: gke-managed (the backend is amp)"),
    ("prod-gke", {"alerts": {"notificationChannels": ["my-gpu-project/1234"]}},
     "gpufleet:observability.alerts.notificationChannels: not a notification channel name (allowed: projects/<project>/notificationChannels/<id>) (got 'my-gpu-project/1234')"),
    ("prod-gke", {"alerts": {"snsTopicArn": TOPIC}},
     "gpufleet:observability.alerts.snsTopicArn: only used with metrics.backend: amp (the backend is gke-managed)"),
])
def test_alert_destinations_belong_to_their_backend(stack, block, message):
    with pytest.raises(SpecError) as err:
        _load(stack, block)
    assert any(message in str(p) and str(p).startswith(f"stack '{stack}': ") for p in err.value.problems), err.value.problems


def test_alert_destinations_load():
    alerts = _load("prod-eks", {"metrics": {"backend": "amp"}, "alerts": {"snsTopicArn": TOPIC}}).observability.alerts
    assert alerts.sns_topic_arn == TOPIC
    alerts = _load("prod-gke", {"alerts": {"notificationChannels": [CHANNEL]}}).observability.alerts
    assert alerts.notification_channels == [CHANNEL]
