"""The k3s node script run for real under /bin/sh, with sudo, systemctl, k3s and curl replaced by stubs.

The Pulumi mocks only show the script's text; these tests run it through the branches a `pulumi up` meets
on a host: fresh install, healthy node (no-op), changed config (restart), stopped service with the pinned
binary (install.sh must be told to start it), and a failed download (must fail fast, not after the 300 s
readiness wait).
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from components.k3s_install import node_scripts
from gpufleet import versions

K8S = "1.34"
RELEASE = versions.k3s_release(K8S)

# Every privileged step goes through sudo: the stub maps each onto files in $STATE and logs what it did.
SUDO = r"""#!/bin/sh
while case "$1" in *=*) true;; *) false;; esac; do export "$1"; shift; done
case "$1" in
  install|chmod) exit 0;;
  tee) cat > "$STATE/config.new";;
  cmp) [ -f "$STATE/config" ] && cmp -s "$STATE/config.new" "$STATE/config";;
  mv) mv "$STATE/config.new" "$STATE/config";;
  systemctl) shift; echo "systemctl $*" >> "$STATE/log";;
  sh) echo "installer version=$INSTALL_K3S_VERSION exec=$INSTALL_K3S_EXEC force=${INSTALL_K3S_FORCE_RESTART:-}" >> "$STATE/log"
      echo "$INSTALL_K3S_VERSION" > "$STATE/version"; touch "$STATE/active";;
  k3s) exit 0;;
  *) echo "unexpected: sudo $*" >&2; exit 97;;
esac
"""
# `k3s --version` as the login user; absent (command not found) until installed.
K3S = r"""#!/bin/sh
[ -f "$STATE/version" ] || exit 127
echo "k3s version $(cat "$STATE/version") (abcdef12)"
echo "go version go1.24"
"""
SYSTEMCTL = r"""#!/bin/sh
[ -f "$STATE/active" ]
"""
CURL = r"""#!/bin/sh
for last; do :; done
echo "curl $last" >> "$STATE/log"
[ -f "$STATE/curl-fails" ] && exit 22
while [ "$1" != "-o" ]; do shift; done
echo 'echo installer' > "$2"
"""


def _stub(bin_dir: Path, name: str, text: str) -> None:
    path = bin_dir / name
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def host(tmp_path):
    bin_dir, state = tmp_path / "bin", tmp_path / "state"
    bin_dir.mkdir()
    state.mkdir()
    for name, text in (("sudo", SUDO), ("k3s", K3S), ("systemctl", SYSTEMCTL), ("curl", CURL)):
        _stub(bin_dir, name, text)

    def run(role: str, config: str = "token: t\n") -> tuple[subprocess.CompletedProcess, list[str]]:
        env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "STATE": str(state)}
        done = subprocess.run(
            ["/bin/sh", "-c", node_scripts(role, K8S).create], input=config, env=env,
            capture_output=True, text=True, timeout=30,
        )
        log = state / "log"
        lines = log.read_text().splitlines() if log.exists() else []
        if log.exists():
            log.unlink()
        return done, lines

    run.state = state
    return run


def test_fresh_host_installs_the_pinned_release_from_the_same_tag(host):
    done, log = host("server", "token: t\nnode-name: cp-1\n")
    assert done.returncode == 0, done.stderr
    url = versions.k3s_install_script_url(K8S)
    assert "%2B" in url and "+" not in url
    assert log == [f"curl {url}", f"installer version={RELEASE} exec=server force=true"]
    assert (host.state / "config").read_text() == "token: t\nnode-name: cp-1\n"


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
