"""How one k3s node is installed over SSH: its config file and an idempotent install/upgrade script.

k3s reads /etc/rancher/k3s/config.yaml (same keys as its CLI flags), so the join token and every flag
travel in that file, sent as the command's stdin (a secret) rather than on a command line or in the
environment (SSH SetEnv needs AcceptEnv on the host). The script installs only when the pinned
version is not already running, so `pulumi up` on a healthy node is a no-op, and a changed version
upgrades in place with the installer from the same tag.

The installer is downloaded to a file first: piped into `sh` (no pipefail in POSIX sh), a failed download
would run an empty script successfully and surface only as the 300 s readiness timeout. It runs with
INSTALL_K3S_FORCE_RESTART: install.sh otherwise skips starting the service when the binary and unit are
unchanged, so a stopped or crashed k3s with the pinned version would never be started again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Optional

import yaml

from gpufleet import versions

CONFIG_PATH = "/etc/rancher/k3s/config.yaml"
KUBECONFIG_PATH = "/etc/rancher/k3s/k3s.yaml"
# The kubelet's own credentials on an agent (may read Node objects, nothing else of note).
AGENT_KUBECONFIG = "/var/lib/rancher/k3s/agent/kubelet.kubeconfig"
API_PORT = 6443

Role = Literal["server", "agent"]
# Readiness polls (every 2 s) before the script gives up.
READY_TRIES = 150
# Hosts reached as root (the default sshUser) need not have sudo (Debian installs without it when root has
# a password): there `sudo` is a shell function running the command via env, which keeps the VAR=value
# prefixes sudo takes. Every privileged step stays spelled `sudo`, in this shell (no `sh -c` around them).
AS_ROOT = 'if [ "$(id -u)" = 0 ]; then sudo() { env "$@"; }; fi'


def service_name(role: Role) -> str:
    return "k3s" if role == "server" else "k3s-agent"


def render_config(settings: dict) -> str:
    """k3s config.yaml text, keys in a stable order so unchanged config gives unchanged input."""
    return yaml.safe_dump(settings, sort_keys=True, default_flow_style=False)


@dataclass(frozen=True)
class NodeScripts:
    create: str
    delete: str


def node_scripts(role: Role, kubernetes_version: str, node_name: Optional[str] = None) -> NodeScripts:
    """The install/upgrade script (create and update) and the uninstall script for a node.

    A server is ready when its API answers /readyz. An agent is ready when its service runs and, given its
    node name, when its Node object exists: what is applied to the node next (label patches of GPU sharing)
    would otherwise race the kubelet's registration. The agent asks with its own kubelet credentials."""
    release = versions.k3s_release(kubernetes_version)
    url = versions.k3s_install_script_url(kubernetes_version)
    service = service_name(role)
    if role == "server":
        ready = "sudo k3s kubectl get --raw=/readyz >/dev/null 2>&1"
    else:
        ready = f"systemctl is-active --quiet {service}"
        if node_name:
            ready += f" && sudo k3s kubectl --kubeconfig {AGENT_KUBECONFIG} get node '{node_name}' >/dev/null 2>&1"
    create = f"""set -eu
{AS_ROOT}
sudo install -d -m 0755 /etc/rancher/k3s
sudo tee {CONFIG_PATH}.new >/dev/null
sudo chmod 0600 {CONFIG_PATH}.new
changed=1
if sudo cmp -s {CONFIG_PATH}.new {CONFIG_PATH}; then changed=0; fi
sudo mv {CONFIG_PATH}.new {CONFIG_PATH}
running=$(k3s --version 2>/dev/null | head -n 1 | cut -d ' ' -f 3 || true)
if [ "$running" = '{release}' ] && systemctl is-active --quiet {service}; then
  if [ "$changed" = 1 ]; then sudo systemctl restart {service}; fi
  echo "k3s {release} already running"
else
  installer=$(mktemp)
  trap 'rm -f "$installer"' EXIT
  curl -sfL --retry 3 -o "$installer" '{url}'
  sudo INSTALL_K3S_VERSION='{release}' INSTALL_K3S_EXEC='{role}' INSTALL_K3S_FORCE_RESTART=true sh "$installer"
fi
tries=0
until {ready}; do
  tries=$((tries + 1))
  if [ "$tries" -ge {READY_TRIES} ]; then echo "{service} not ready after {READY_TRIES * 2} s" >&2; exit 1; fi
  sleep 2
done
"""
    uninstall = "/usr/local/bin/k3s-uninstall.sh" if role == "server" else "/usr/local/bin/k3s-agent-uninstall.sh"
    delete = f"{AS_ROOT}\nif [ -x {uninstall} ]; then sudo {uninstall}; fi"
    return NodeScripts(create=create, delete=delete)


def rewrite_kubeconfig(text: str, api_address: str) -> str:
    """k3s writes its kubeconfig for https://127.0.0.1:6443; point it at the API address instead."""
    return text.replace(f"https://127.0.0.1:{API_PORT}", f"https://{api_address}:{API_PORT}")
