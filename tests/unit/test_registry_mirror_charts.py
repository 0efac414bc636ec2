"""gpufleet:registry.mirror and the pinned charts (issue 38): every chart gpufleet pins either has a `mirror` image list
(gpufleet/base/catalog/images.yaml) or a stack that installs it with a mirror is refused by the spec, naming the key
that installs it (gpufleet/base/spec/features/registry_checks.py), never a KeyError from components/image_mirror.py."""

from __future__ import annotations

import pytest
import yaml

from gpufleet.app import cli
from gpufleet.base import versions
from gpufleet.base.catalog import images as catalog_images
from gpufleet.base.spec.features import registry_checks
from tests.helpers import example_config, load_config, spec_problems

MIRROR = "registry.example.internal:5000"
PINS = {v.name: v for v in vars(versions).values() if isinstance(v, versions.HelmChart)}


def _with(stack: str, **keys) -> dict:
    config = example_config(stack)
    for key, value in keys.items():
        node = config
        *path, last = key.split(".")
        for part in path:
            node = node.setdefault(part, {})
        node[last] = value
    return config


# An example stack (changed where it needs to be) that installs each pinned chart.
SAMPLES = {
    "gpu-operator": lambda: example_config("airgap-k3s"),
    "gpu-operator-charts": lambda: _with("amd-lab", **{"gpufleet:amdGpuOperator.driver": {"source": "inbox"}}),
    "volcano": lambda: _with("airgap-k3s", **{"gpufleet:addons.volcano": {"enabled": True}}),
    "kueue": lambda: example_config("teams"),
    "jobset": lambda: example_config("airgap-k3s"),
    "kubeflow-trainer": lambda: _with("airgap-k3s", **{"gpufleet:addons.jobset": {"enabled": False},
                                                       "gpufleet:addons.trainer": {"enabled": True}}),
    "keda": lambda: example_config("inference-k3s"),
    "kube-prometheus-stack": lambda: example_config("airgap-k3s"),
    "kube-state-metrics": lambda: _with("airgap-eks", **{"gpufleet:observability": {"metrics": {"backend": "amp"}}}),
    "prometheus-node-exporter": lambda: _with("airgap-eks", **{"gpufleet:observability": {"metrics": {"backend": "amp"}}}),
    "network-operator": lambda: example_config("lab"),
    "csi-driver-nfs": lambda: example_config("airgap-k3s"),
    "cluster-autoscaler": lambda: example_config("airgap-eks"),
    "karpenter": lambda: example_config("karpenter-eks"),
    "aws-efa-k8s-device-plugin": lambda: example_config("p5-efa"),
    "dra-driver-nvidia-gpu": lambda: example_config("nvl72-k3s"),
    "lws": lambda: example_config("inference-k3s"),
    "gateway-helm": lambda: _with("inference-k3s", **{"gpufleet:serving.gateway": {"className": "envoy"}}),
    "agentgateway": lambda: example_config("inference-k3s"),
    "agentgateway-crds": lambda: example_config("inference-k3s"),
    "llm-d-router-gateway": lambda: example_config("inference-gke"),
}


def test_every_pinned_chart_has_a_key_that_refuses_it():
    """A chart pinned in versions.py is named by the spec check (CHART_KEYS, or the GPU Operators by their stack version)
    and has a sample stack here: adding a pin without either fails."""
    assert set(PINS) == set(registry_checks.CHART_KEYS) | set(registry_checks.STACK_VERSIONED)
    assert set(PINS) == set(SAMPLES)


@pytest.mark.parametrize("name", sorted(PINS))
def test_each_chart_has_a_mirror_list_or_is_refused(name, monkeypatch):
    """With its mirror list taken away, every pinned chart is refused for a stack that installs it (and the charts
    without one today, Volcano, are refused as they are)."""
    pin = PINS[name]
    listed = catalog_images.mirror_slots(name, pin.version) is not None
    real = catalog_images.mirror_slots
    monkeypatch.setattr(catalog_images, "mirror_slots",
                        lambda chart, version: None if chart == name else real(chart, version))
    config = SAMPLES[name]()
    config["gpufleet:registry"] = {"mirror": MIRROR}
    key = (registry_checks.CHART_KEYS[name].key if name in registry_checks.CHART_KEYS
           else {"gpu-operator": "gpufleet:gpuOperator.version",
                 "gpu-operator-charts": "gpufleet:amdGpuOperator.version"}[name])
    refused = [p for p in spec_problems(config, f"sample-{name}") if "gpufleet:registry.mirror" in p and key in p]
    assert refused, (name, listed)
    assert f"{pin.version}" in refused[0]
    if name in registry_checks.CHART_KEYS:
        assert f"chart {name} {pin.version} ({key};" in refused[0]


def test_charts_with_a_mirror_list_are_not_refused():
    """The serving charts now listed: the inference stacks with a mirror load (the GKE one with Artifact Registry)."""
    config = example_config("inference-k3s")
    config["gpufleet:registry"] = {"mirror": MIRROR}
    assert load_config(config, "inference-k3s").registry.mirror == MIRROR
    config = example_config("inference-gke")
    config["gpufleet:registry"] = {"mirror": "us-central1-docker.pkg.dev/my-gpu-project/gpufleet-mirror"}
    assert load_config(config, "inference-gke").serving.enabled


def test_a_chart_without_a_list_exits_2_naming_the_key(tmp_path, monkeypatch, capsys):
    """The issue-38 crash (gateway-helm had no mirror list): the CLI refuses the stack, exit 2, no traceback."""
    real = catalog_images.mirror_slots
    monkeypatch.setattr(catalog_images, "mirror_slots",
                        lambda chart, version: None if chart == "gateway-helm" else real(chart, version))
    config = _with("inference-k3s", **{"gpufleet:serving.gateway": {"className": "envoy"}})
    config["gpufleet:registry"] = {"mirror": MIRROR}
    path = tmp_path / "Pulumi.inference-k3s.yaml"
    path.write_text(yaml.safe_dump({"config": config}))
    assert cli.main(["plan", "inference-k3s", "--config", str(path)]) == cli.EXIT_INVALID
    err = capsys.readouterr()
    text = err.out + err.err
    assert "Traceback" not in text and "KeyError" not in text
    assert "inference-k3s" in text and "gpufleet:registry.mirror" in text
    assert f"chart gateway-helm {versions.ENVOY_GATEWAY.version} (gpufleet:serving.gateway.className;" in text
