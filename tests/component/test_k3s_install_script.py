"""The k3s node script run for real under /bin/sh, with sudo, systemctl, k3s and curl replaced by stubs.

The Pulumi mocks only show the script's text; these tests run it through the branches a `pulumi up` meets
on a host: fresh install, healthy node (no-op), changed config (restart), stopped service with the pinned
binary (install.sh must be told to start it), and a failed download (must fail fast, not after the 300 s
readiness wait); and the states a `pulumi up` cut off halfway leaves (an SSH drop after the config was
written but before the restart; an installer that put the binary in place but never started the service),
which the next run must complete on its own.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from gpufleet.components.k3s.install import node_scripts
from gpufleet.base import versions

K8S = "1.34"
RELEASE = versions.k3s_release(K8S)

# Host commands the script uses, acting on files in $STATE instead of the real paths.
FAKES = {
    "install": "exit 0",
    "chmod": "exit 0",
    "tee": 'cat > "$STATE/$(basename "$1")"',
    "cmp": '/usr/bin/cmp -s "$STATE/$(basename "$2")" "$STATE/$(basename "$3")"',
    "mv": '/bin/mv "$STATE/$(basename "$1")" "$STATE/$(basename "$2")"',
    "systemctl": 'if [ "$1" = is-active ]; then [ -f "$STATE/active" ]; else echo "systemctl $*" >> "$STATE/log"; fi',
    # `k3s --version` as the login user; absent until installed. `k3s kubectl get --raw=/readyz`: ready.
    "k3s": '[ "$1" = kubectl ] && exit 0\n[ -f "$STATE/version" ] || exit 127\n'
           'echo "k3s version $(cat "$STATE/version") (abcdef12)"\necho "go version go1.24"',
    "curl": 'for last; do :; done\necho "curl $last" >> "$STATE/log"\n[ -f "$STATE/curl-fails" ] && exit 22\n'
            'while [ "$1" != "-o" ]; do shift; done\n'
            # The downloaded "install.sh" logs what it was given and leaves k3s installed and running.
            r"""printf '%s\n' 'echo "installer version=$INSTALL_K3S_VERSION exec=$INSTALL_K3S_EXEC force=$INSTALL_K3S_FORCE_RESTART" >> "$STATE/log"' """
            r"""'echo "$INSTALL_K3S_VERSION" > "$STATE/version"; touch "$STATE/active"' > "$2" """,
    # `test -d|-f` of k3s's paths asks $STATE (the datastore directory `db`, the encryption config).
    "test": 'case "$2" in /etc/rancher/*|/var/lib/rancher/*) /usr/bin/test "$1" "$STATE/$(basename "$2")";; '
            '*) /usr/bin/test "$@";; esac',
    # sudo keeps the VAR=value prefixes (env does the same).
    "sudo": 'exec env "$@"',
    # Reads and removals of k3s's files go to $STATE too; everything else (the stubs' own I/O) is the real thing.
    "cat": '[ $# -eq 0 ] && exec /bin/cat\nfor f; do /bin/cat "$STATE/$(basename "$f")" || exit 1; done',
    "rm": 'for f; do case "$f" in /etc/rancher/*|/var/lib/rancher/*) /bin/rm -f "$STATE/$(basename "$f")";; '
          '-*) ;; *) /bin/rm -f "$f";; esac; done',
}


def _stub(bin_dir: Path, name: str, body: str) -> None:
    path = bin_dir / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def host(tmp_path):
    bin_dir, state = tmp_path / "bin", tmp_path / "state"
    bin_dir.mkdir()
    state.mkdir()
    for name, body in FAKES.items():
        _stub(bin_dir, name, body)

    def run(role: str, config: str = "token: t\n", script: str | None = None) -> tuple[subprocess.CompletedProcess, list[str]]:
        env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "STATE": str(state)}
        done = subprocess.run(
            ["/bin/sh", "-c", script or node_scripts(role, K8S).create], input=config, env=env,
            capture_output=True, text=True, timeout=30,
        )
        log = state / "log"
        lines = log.read_text().splitlines() if log.exists() else []
        if log.exists():
            log.unlink()
        return done, lines

    run.state = state
    run.bin_dir = bin_dir
    return run


def test_fresh_host_installs_the_pinned_release_from_the_same_tag(host):
    done, log = host("server", "token: t\nnode-name: cp-1\n")
    assert done.returncode == 0, done.stderr
    url = versions.k3s_install_script_url(K8S)
    assert "%2B" in url and "+" not in url
    assert log == [f"curl {url}", f"installer version={RELEASE} exec=server force=true"]
    assert (host.state / "config.yaml").read_text() == "token: t\nnode-name: cp-1\n"


def test_healthy_node_with_unchanged_config_is_a_no_op(host):
    host("agent")
    done, log = host("agent")
    assert done.returncode == 0, done.stderr
    assert log == [] and f"k3s {RELEASE} already running" in done.stdout


def test_changed_config_restarts_the_service_without_reinstalling(host):
    host("agent")
    done, log = host("agent", "token: t\nnode-label:\n- a=b\n")
    assert done.returncode == 0, done.stderr
    assert log == ["systemctl restart k3s-agent"]


def test_stopped_service_with_the_pinned_binary_is_started_again(host):
    # install.sh skips starting the service when nothing it installs changed: it needs FORCE_RESTART.
    host("server")
    (host.state / "active").unlink()
    done, log = host("server")
    assert done.returncode == 0, done.stderr
    assert log[-1] == f"installer version={RELEASE} exec=server force=true"


def test_failed_download_fails_at_once_without_running_an_empty_installer(host):
    (host.state / "curl-fails").touch()
    done, log = host("server")
    assert done.returncode != 0
    assert not any(line.startswith("installer") for line in log)


def test_root_login_without_sudo_installs(host):
    # The default sshUser is root, and a root-only Debian host has no sudo at all.
    _stub(host.bin_dir, "id", "echo 0")
    _stub(host.bin_dir, "sudo", 'echo "sudo: command not found" >&2; exit 127')
    done, log = host("server")
    assert done.returncode == 0, done.stderr
    assert log[-1] == f"installer version={RELEASE} exec=server force=true"
    assert "sudo: command not found" not in done.stderr


@pytest.fixture(scope="module")
def dev():
    from tests.helpers import planned

    return planned("dev")


def test_every_remote_command_runs_as_root_without_sudo(dev):
    from gpufleet.components.k3s.install import AS_ROOT
    from tests.helpers import by_type

    commands = by_type(dev, "command:remote:Command")
    assert commands
    for r in commands:
        for step in ("create", "delete"):
            script = r.inputs.get(step)
            if script and "sudo" in script:
                assert AS_ROOT in script.splitlines()[:2], (r.name, step)


def test_kubeconfig_read_is_not_logged(dev):
    # pulumi-command logs a command's stdout even when stdout is a secret output (pulumi/pulumi-command#401).
    from tests.helpers import one

    read = one(dev, "command:remote:Command", "dev-k3s-kubeconfig")
    assert read.inputs["logging"] == "none"


def test_agent_is_ready_once_its_node_is_registered():
    """Label patches (GPU sharing) follow an agent's join: the script waits for the Node object, asking
    with the agent's own kubelet credentials, not only for the service."""
    script = node_scripts("agent", K8S, "gpu-1").create
    assert (
        "until systemctl is-active --quiet k3s-agent && sudo k3s kubectl --kubeconfig "
        "/var/lib/rancher/k3s/agent/kubelet.kubeconfig get node 'gpu-1' >/dev/null 2>&1; do"
    ) in script
    assert "get node" not in node_scripts("agent", K8S).create  # without a name: the service alone


# --- failure in the middle: the next run completes what an interrupted one left ----------------------------------


def test_config_written_but_never_applied_is_applied_by_the_next_run(host):
    host("agent")
    # The next `pulumi up` changes the config; the SSH session drops as systemctl restarts k3s (after the config
    # file was moved into place, before the script recorded it as applied).
    _stub(host.bin_dir, "systemctl", 'if [ "$1" = is-active ]; then [ -f "$STATE/active" ]; else exit 255; fi')
    new = "token: t\nnode-label:\n- a=b\n"
    done, _ = host("agent", new)
    assert done.returncode != 0
    assert (host.state / "config.yaml").read_text() == new  # written, not applied
    _stub(host.bin_dir, "systemctl", FAKES["systemctl"])
    # Re-run with the same config: the file on disk is unchanged, but the running k3s never loaded it.
    done, log = host("agent", new)
    assert done.returncode == 0, done.stderr
    assert log == ["systemctl restart k3s-agent"]
    assert "config not yet applied: restarting k3s-agent" in done.stdout
    done, log = host("agent", new)  # and now it is a no-op
    assert (done.returncode, log) == (0, [])


def test_binary_installed_but_service_down_is_started_by_the_next_run(host):
    # The installer is cut off after it put the pinned binary in place, before it started the service.
    _stub(host.bin_dir, "curl", FAKES["curl"].replace(r'touch "$STATE/active"', "exit 1"))
    done, log = host("server")
    assert done.returncode != 0
    assert (host.state / "version").read_text().strip() == RELEASE and not (host.state / "active").exists()
    assert not (host.state / "gpufleet-applied-config.sha256").exists()
    _stub(host.bin_dir, "curl", FAKES["curl"])
    done, log = host("server")
    assert done.returncode == 0, done.stderr
    # The pinned binary alone is not "running": the installer runs again and must start the service.
    assert log[-1] == f"installer version={RELEASE} exec=server force=true"
    assert (host.state / "active").exists()
    done, log = host("server")
    assert (done.returncode, log) == (0, [])


def test_embedded_etcd_server_writes_its_snapshot_settings_and_restarts_when_they_change(host):
    from gpufleet.components.k3s.install import etcd_snapshot_settings
    from gpufleet.base.spec.features.protection import EtcdSnapshotsSpec

    def script(**spec):
        return node_scripts("server", K8S, etcd_snapshots=etcd_snapshot_settings(EtcdSnapshotsSpec(**spec))).create

    done, log = host("server", script=script())
    assert done.returncode == 0, done.stderr
    assert (host.state / "50-gpufleet-etcd-snapshots.yaml").read_text() == (
        "etcd-snapshot-retention: 20\netcd-snapshot-schedule-cron: 0 */6 * * *\n"
    )
    done, log = host("server", script=script())
    assert (done.returncode, log) == (0, [])
    done, log = host("server", script=script(retention=40))  # only the drop-in changed
    assert (done.returncode, log) == (0, ["systemctl restart k3s"])
    assert "etcd-snapshot-retention: 40" in (host.state / "50-gpufleet-etcd-snapshots.yaml").read_text()


def test_single_server_has_no_snapshot_drop_in(host):
    (host.state / "50-gpufleet-etcd-snapshots.yaml").write_text("stale: true\n")
    done, _ = host("server")
    assert done.returncode == 0, done.stderr
    assert not (host.state / "50-gpufleet-etcd-snapshots.yaml").exists()


def test_a_server_that_started_without_secrets_encryption_is_left_untouched(host):
    # k3s cannot turn secrets encryption on later (docs.k3s.io/cli/secrets-encrypt): stop before any change.
    (host.state / "db").mkdir()
    done, log = host("server")
    assert done.returncode == 1
    assert "first started without secrets encryption" in done.stderr
    assert "secretsEncryption" in done.stderr
    assert log == [] and not (host.state / "config.yaml").exists()


def test_a_server_with_secrets_encryption_upgrades_as_before(host):
    (host.state / "db").mkdir()
    (host.state / "encryption-config.json").write_text("{}")
    done, log = host("server")
    assert done.returncode == 0, done.stderr
    assert (host.state / "40-gpufleet-server.yaml").read_text() == "secrets-encryption: true\n"


def test_secrets_encryption_off_installs_without_the_flag_or_the_check(host):
    (host.state / "db").mkdir()
    (host.state / "40-gpufleet-server.yaml").write_text("secrets-encryption: true\n")
    done, log = host("server", script=node_scripts("server", K8S, secrets_encryption=False).create)
    assert done.returncode == 0, done.stderr
    assert not (host.state / "40-gpufleet-server.yaml").exists()


def _fake_installer_sha256(host) -> str:
    """sha256 of what the stubbed curl downloads as install.sh."""
    import hashlib

    target = host.state / "fetched-install.sh"
    env = {**os.environ, "STATE": str(host.state)}
    subprocess.run([str(host.bin_dir / "curl"), "-sfL", "-o", str(target), "https://example.invalid/install.sh"],
                   env=env, check=True)
    (host.state / "log").unlink()
    return hashlib.sha256(target.read_bytes()).hexdigest()


def test_the_installer_runs_only_when_it_matches_its_recorded_sha256(host, monkeypatch):
    monkeypatch.setitem(versions.K3S_INSTALL_SCRIPT_SHA256, RELEASE, _fake_installer_sha256(host))
    done, log = host("server")
    assert done.returncode == 0, done.stderr
    assert log[-1] == f"installer version={RELEASE} exec=server force=true"


def test_an_installer_that_does_not_match_is_not_run(host, monkeypatch):
    monkeypatch.setitem(versions.K3S_INSTALL_SCRIPT_SHA256, RELEASE, "0" * 64)
    done, log = host("server")
    assert done.returncode == 1
    assert "does not match its recorded sha256" in done.stderr
    assert not any(line.startswith("installer") for line in log)
