"""k3s without internet (issue 37): the install script takes k3s's files from the stack's source, verifies all three
with sha256sum before using any, installs with INSTALL_K3S_SKIP_DOWNLOAD, and writes registries.yaml from stdin."""

from __future__ import annotations

import yaml

from components.k3s.install import REGISTRIES_MARK, node_scripts, registries_config, stdin_text
from gpufleet.base.spec.features.registry import K3sAirgapSpec
from tests.helpers import by_type, planned

SUMS = {"k3s": "1" * 64, "images": "2" * 64, "installScript": "3" * 64}


def test_airgap_script_verifies_before_installing():
    airgap = K3sAirgapSpec.model_validate({"source": "/opt/k3s", "arch": "arm64", "sha256": SUMS})
    script = node_scripts("agent", "1.36", "n1", airgap=airgap).create
    assert "curl" not in script.split("case")[0]  # nothing fetched from GitHub
    assert "raw.githubusercontent.com" not in script
    check = script.index("sha256sum -c")
    assert check < script.index("/usr/local/bin/k3s") < script.index("INSTALL_K3S_SKIP_DOWNLOAD=true")
    assert "'k3s-arm64'" in script and "'k3s-airgap-images-arm64.tar.zst'" in script
    assert f"'{'1' * 64}'" in script and "/var/lib/rancher/k3s/agent/images/k3s-airgap-images-arm64.tar.zst" in script
    assert "src='/opt/k3s/'" in script


def test_registries_yaml_travels_in_stdin_after_the_marker():
    registries = registries_config("registry.example.internal:5000/gpufleet", "pull", "s3cret")
    text = stdin_text({"token": "t"}, registries)
    config, _, rest = text.partition(REGISTRIES_MARK + "\n")
    assert yaml.safe_load(config) == {"token": "t"}
    assert yaml.safe_load(rest) == {
        "mirrors": {"docker.io": {"endpoint": ["https://registry.example.internal:5000"],
                                  "rewrite": {"^(.*)$": "gpufleet/docker.io/$1"}}},
        "configs": {"registry.example.internal:5000": {"auth": {"username": "pull", "password": "s3cret"}}},
    }


def test_every_node_of_the_airgap_stack_installs_offline_with_registries():
    plan = planned("airgap-k3s")
    nodes = by_type(plan, "command:remote:Command")
    installs = [r for r in nodes if "-server-" in r.name or "-agent-" in r.name or "-pool-" in r.name]
    installs = [r for r in installs if "INSTALL_K3S" in str(r.inputs.get("create", ""))]
    assert len(installs) == 4  # server, CPU agent, two GPU hosts
    for r in installs:
        assert "INSTALL_K3S_SKIP_DOWNLOAD=true" in r.inputs["create"]
        assert "/etc/rancher/k3s/registries.yaml" in r.inputs["create"]
        assert "stdin" in r.secret_paths or any(p.startswith("stdin") for p in r.secret_paths)
