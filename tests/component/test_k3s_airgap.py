"""k3s without internet (issue 37): the install script takes k3s's files from the stack's source, verifies all three
with sha256sum before using any, installs with INSTALL_K3S_SKIP_DOWNLOAD, and writes registries.yaml from stdin."""

from __future__ import annotations

import pytest
import yaml

from components.k3s.install import REGISTRIES_MARK, node_scripts, registries_config, stdin_text
from gpufleet.base import versions
from gpufleet.base.spec.features.registry import K3sAirgapSpec
from tests.helpers import REFERENCE, by_type, load_yaml, planned

SUMS = {"k3s": "1" * 64, "images": "2" * 64, "installScript": "3" * 64}


def test_airgap_script_verifies_before_installing():
    airgap = K3sAirgapSpec.model_validate({"source": "/opt/k3s", "arch": "arm64", "sha256": SUMS})
    script = node_scripts("agent", "1.36", "n1", airgap=airgap).create
    assert "curl" not in script.split("case")[0]  # nothing fetched from GitHub
    assert "raw.githubusercontent.com" not in script
    check = script.index("sha256sum -c --strict -")
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


def test_no_airgap_script_is_written_with_an_empty_sum():
    # Without --strict, GNU sha256sum -c skips a line with an empty sum and exits 0 when the others match: the file
    # would be installed unverified. arm64 v1.36.2+k3s1: gpufleet records no binary or tarball sum.
    airgap = K3sAirgapSpec.model_validate({"source": "/opt/k3s", "arch": "arm64", "sha256": {"images": "2" * 64}})
    with pytest.raises(ValueError, match="no sha256 for k3s"):
        node_scripts("agent", "1.36", "n1", airgap=airgap)


def test_the_airgap_script_checks_gpufleets_recorded_sums_when_the_stack_gives_none():
    airgap = K3sAirgapSpec.model_validate({"source": "/opt/k3s"})
    script = node_scripts("server", "1.36", airgap=airgap).create
    release = versions.k3s_release("1.36")
    for file in ("k3s", "k3s-airgap-images-amd64.tar.zst"):
        assert f"'{versions.K3S_RELEASE_SHA256[f'{release}/{file}']}'" in script
    assert f"'{versions.K3S_INSTALL_SCRIPT_SHA256[release]}'" in script


def test_online_install_checks_install_sh_strictly():
    script = node_scripts("server", "1.36").create
    assert f"echo '{versions.K3S_INSTALL_SCRIPT_SHA256[versions.k3s_release('1.36')]}  '\"$installer\" | sha256sum -c --strict -" in script


def _reference() -> dict:
    path = REFERENCE / "k3s" / "checksums.yaml"
    if not path.is_file():
        pytest.skip(f"{path} is absent (../shared/reference)")
    return {(e["version"], e["asset"]): e for e in load_yaml(path.read_text())["entries"]}


def test_every_recorded_k3s_sum_is_the_references_and_trusted_by_the_rule():
    """versions.K3S_RELEASE_SHA256 / K3S_INSTALL_SCRIPT_SHA256: each value as the reference copy gives it for a pinned
    release and a file gpufleet installs; none the reference flags as suspicious; a third-party value only where the
    reference names more than one independent copy."""
    ref = _reference()
    recorded = {**{tuple(k.split("/")): v for k, v in versions.K3S_RELEASE_SHA256.items()},
                **{(r, "install.sh"): v for r, v in versions.K3S_INSTALL_SCRIPT_SHA256.items()}}
    files = {f for arch in ("amd64", "arm64") for f in versions.k3s_release_files(arch).values()} | {"install.sh"}
    for (release, file), sha in recorded.items():
        assert release in versions.K3S_RELEASES.values() and file in files
        entry = ref[(release, file)]
        assert entry["sha256"] == sha, (release, file)
        assert "suspicious" not in entry.get("note", ""), (release, file)
        if entry["tier"] != "nixpkgs":
            assert entry["tier"] == "third-party" and "one file:" not in entry["source"], (release, file)
