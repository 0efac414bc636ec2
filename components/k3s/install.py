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

A `pulumi up` cut off halfway (an SSH drop) must leave a state the next run completes on its own. The script
therefore decides from the host, not from what changed in this run: the checksum of the config files k3s was
last (re)started with is recorded only once the node is ready (APPLIED_PATH), so a config written but never
applied is applied next time; a pinned binary whose service is down is installed and started again. The
record lives under k3s's data directory, which k3s's uninstall script removes.

Servers of an embedded-etcd cluster also get a drop-in config file (k3s loads /etc/rancher/k3s/config.yaml.d/*.yaml
after config.yaml: docs.k3s.io/installation/configuration#configuration-file) with the etcd snapshot settings,
written by the script itself: they hold no secret, so plans, previews and the policy pack can read them (the S3
credentials travel in the secret config.yaml).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, Optional

import yaml

from gpufleet.base import versions
from gpufleet.base.platforms.k3s.addons import airgap_sums
from gpufleet.base.spec.features.protection import EtcdSnapshotsSpec
from gpufleet.base.spec.features.registry import SHA256, K3sAirgapSpec
from gpufleet.base.spec.text import url_host

CONFIG_PATH = "/etc/rancher/k3s/config.yaml"
KUBECONFIG_PATH = "/etc/rancher/k3s/k3s.yaml"
# The kubelet's own credentials on an agent (may read Node objects, nothing else of note).
AGENT_KUBECONFIG = "/var/lib/rancher/k3s/agent/kubelet.kubeconfig"
API_PORT = 6443
CONFIG_DROPIN_DIR = "/etc/rancher/k3s/config.yaml.d"
ETCD_SNAPSHOT_DROPIN = f"{CONFIG_DROPIN_DIR}/50-gpufleet-etcd-snapshots.yaml"
# Settings of every server that hold no secret (today: secrets encryption), readable by plans and the policy pack.
SERVER_DROPIN = f"{CONFIG_DROPIN_DIR}/40-gpufleet-server.yaml"
DATA_DIR = "/var/lib/rancher/k3s"
# k3s's default etcd-snapshot-dir, ${data-dir}/server/db/snapshots (docs.k3s.io/cli/etcd-snapshot), and the database
# directory the other servers drop before rejoining a restored cluster.
ETCD_SNAPSHOT_DIR = f"{DATA_DIR}/server/db/snapshots"
ETCD_DB_DIR = f"{DATA_DIR}/server/db"
# The EncryptionConfiguration a server with secrets-encryption writes on its first start (k3s
# pkg/daemons/control/deps/deps.go: `if config.EncryptSecrets { runtime.EncryptionConfig =
# filepath.Join(config.DataDir, "cred", "encryption-config.json") }`, DataDir being <data-dir>/server). ETCD_DB_DIR
# is also where a single server keeps SQLite: it exists once a server has started.
ENCRYPTION_CONFIG = f"{DATA_DIR}/server/cred/encryption-config.json"
# sha256 of the config files the running k3s was last (re)started with (see the module docstring).
APPLIED_PATH = f"{DATA_DIR}/gpufleet-applied-config.sha256"

# k3s reads its registry configuration from here on start (docs.k3s.io/installation/private-registry, k3s-io/docs
# docs/installation/private-registry.md: "Upon startup, K3s will check to see if /etc/rancher/k3s/registries.yaml
# exists"; "In order for the registry changes to take effect, you need to restart K3s on each node").
REGISTRIES_PATH = "/etc/rancher/k3s/registries.yaml"
# The line that separates config.yaml from registries.yaml in the command's stdin (a YAML comment: yaml.safe_dump never
# writes one, so no setting can end config.yaml early).
REGISTRIES_MARK = "# gpufleet: registries.yaml"
# Where k3s loads image tarballs from on start (docs.k3s.io/installation/airgap, "Prepare the Images Directory").
AIRGAP_IMAGES_DIR = f"{DATA_DIR}/agent/images"
Role = Literal["server", "agent"]
# Readiness polls (every 2 s) before the script gives up.
READY_TRIES = 150
# Hosts reached as root (the default sshUser) need not have sudo (Debian installs without it when root has
# a password): there `sudo` is a shell function running the command via env, which keeps the VAR=value
# prefixes sudo takes. Every privileged step stays spelled `sudo`, in this shell (no `sh -c` around them).
AS_ROOT = 'if [ "$(id -u)" = 0 ]; then sudo() { env "$@"; }; fi'


def quoted(value: str) -> str:
    """`value` as one single-quoted shell word, whatever it holds (a ' inside becomes '"'"')."""
    return "'" + value.replace("'", "'\"'\"'") + "'"


def service_name(role: Role) -> str:
    return "k3s" if role == "server" else "k3s-agent"


def render_config(settings: dict) -> str:
    """k3s config.yaml text, keys in a stable order so unchanged config gives unchanged input."""
    return yaml.safe_dump(settings, sort_keys=True, default_flow_style=False)


def registries_config(mirror: str, username: Optional[str] = None, password: Optional[str] = None) -> dict:
    """/etc/rancher/k3s/registries.yaml for a mirror `host[:port][/path]` (k3s-io/docs private-registry.md): the mirror
    host's credentials, and docker.io pulled from the mirror as `<path>/docker.io/<name>` (a rewrite: the layout
    gpufleet's image list uses), so k3s's own images not in the air-gap tarball come from the mirror too. The charts'
    images already name the mirror host (components/image_mirror.py) and need only its credentials."""
    host, _, path = mirror.partition("/")
    prefix = f"{path}/" if path else ""
    config: dict = {"mirrors": {"docker.io": {"endpoint": [f"https://{host}"],
                                              "rewrite": {"^(.*)$": f"{prefix}docker.io/$1"}}}}
    if username:
        config["configs"] = {host: {"auth": {"username": username, "password": password or ""}}}
    return config


def stdin_text(config: dict, registries: Optional[dict]) -> str:
    """The command's stdin: config.yaml, then (with a mirror) the marker line and registries.yaml."""
    text = render_config(config)
    if registries is None:
        return text
    return f"{text}{REGISTRIES_MARK}\n{render_config(registries)}"


def _airgap_install(airgap: K3sAirgapSpec, kubernetes_version: str, role: Role) -> str:
    """Shell lines installing k3s from the stack's air-gap source: each file fetched (https) or copied (a path on the
    host), all three checked with `sha256sum -c --strict` before any is used, then install.sh with
    INSTALL_K3S_SKIP_DOWNLOAD (k3s-io/docs airgap.md: binary in /usr/local/bin, images tarball in the agent's images
    directory). Each sum is the stack's, else the one gpufleet records (airgap_sums); a file with neither is refused
    here too, not only by the plan: GNU sha256sum -c skips a malformed line (an empty sum) with a warning and still
    exits 0 when the other lines match, unless --strict (coreutils manual, "md5sum invocation": --strict "exit
    non-zero for improperly formatted checksum lines")."""
    release = versions.k3s_release(kubernetes_version)
    files = versions.k3s_release_files(airgap.arch)
    source = airgap.source if airgap.source.endswith("/") else airgap.source + "/"
    sums = airgap_sums(airgap, kubernetes_version)
    missing = [k for k, v in sums.items() if not v or not re.fullmatch(SHA256, v)]
    if missing:
        raise ValueError(f"k3s {release} air gap: no sha256 for {', '.join(missing)} (gpufleet:cluster.k3s.airgap."
                         "sha256): a release file is installed only after its sha256 matches")
    images = f"{AIRGAP_IMAGES_DIR}/{files['images']}"
    return f"""  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  src={quoted(source)}
  for f in install.sh {quoted(files["k3s"])} {quoted(files["images"])}; do
    case "$src" in
      https://*) curl -sfL --retry 3 -o "$work/$f" "$src$f" ;;
      *) cp "$src$f" "$work/$f" ;;
    esac
  done
  if ! printf '%s  %s\\n' {quoted(sums["install_script"])} "$work/install.sh" {quoted(sums["k3s"])} "$work/"{quoted(files["k3s"])} {quoted(sums["images"])} "$work/"{quoted(files["images"])} | sha256sum -c --strict - >/dev/null; then
    echo "the k3s {release} files from {source} do not match their sha256 (gpufleet:cluster.k3s.airgap.sha256, else gpufleet's recorded values): not installing" >&2
    exit 1
  fi
  sudo install -m 0755 "$work/"{quoted(files["k3s"])} /usr/local/bin/k3s
  sudo install -d -m 0755 {AIRGAP_IMAGES_DIR}
  sudo install -m 0644 "$work/"{quoted(files["images"])} {images}
  sudo INSTALL_K3S_SKIP_DOWNLOAD=true INSTALL_K3S_VERSION={quoted(release)} INSTALL_K3S_EXEC={quoted(role)} INSTALL_K3S_FORCE_RESTART=true sh "$work/install.sh"
"""


@dataclass(frozen=True)
class NodeScripts:
    create: str
    delete: str


def etcd_snapshot_settings(spec: EtcdSnapshotsSpec) -> dict:
    """The k3s server settings of scheduled etcd snapshots, without secrets (the drop-in file). Keys are `k3s server`
    flags (docs.k3s.io/cli/etcd-snapshot; pkg/cli/cmds/server.go in k3s-io/k3s)."""
    if not spec.enabled:
        return {"etcd-disable-snapshots": True}
    settings: dict = {
        "etcd-snapshot-schedule-cron": spec.schedule_cron,
        "etcd-snapshot-retention": spec.retention,
    }
    if spec.s3 is not None:
        settings.update({
            "etcd-s3": True,
            "etcd-s3-endpoint": spec.s3.endpoint,
            "etcd-s3-bucket": spec.s3.bucket,
            "etcd-s3-region": spec.s3.region,
        })
        if spec.s3.folder:
            settings["etcd-s3-folder"] = spec.s3.folder
    return settings


def etcd_s3_credentials(access_key: str, secret_key: str) -> dict:
    """The S3 credentials of the snapshot bucket, for the secret config.yaml."""
    return {"etcd-s3-access-key": access_key, "etcd-s3-secret-key": secret_key}


HEREDOC_END = "GPUFLEET_EOF"


def _write_dropin(path: str, settings: Optional[dict]) -> str:
    """Shell lines writing (or removing) a drop-in config file from a quoted here-document. The shell takes a quoted
    here-document's body as it is, up to a line that is exactly the delimiter: YAML that never holds the delimiter
    (nor, from the spec, a control character) cannot end it early, so no setting can run as a command."""
    if settings is None:
        return f"sudo rm -f {path}\n"
    text = render_config(settings)
    if HEREDOC_END in text:
        raise ValueError(f"a k3s setting holds {HEREDOC_END}, the end of the here-document it is written in")
    return (
        f"sudo install -d -m 0755 {CONFIG_DROPIN_DIR}\n"
        f"sudo tee {path}.new >/dev/null <<'{HEREDOC_END}'\n{text}{HEREDOC_END}\n"
        f"sudo chmod 0600 {path}.new\n"
        f"sudo mv {path}.new {path}\n"
    )


def node_scripts(
    role: Role,
    kubernetes_version: str,
    node_name: Optional[str] = None,
    etcd_snapshots: Optional[dict] = None,
    header: str = "",
    secrets_encryption: bool = True,
    airgap: Optional[K3sAirgapSpec] = None,
    registries: bool = False,
) -> NodeScripts:
    """The install/upgrade script (create and update) and the uninstall script for a node.

    A server is ready when its API answers /readyz. An agent is ready when its service runs and, given its
    node name, when its Node object exists: what is applied to the node next (label patches of GPU sharing)
    would otherwise race the kubelet's registration. The agent asks with its own kubelet credentials.

    `etcd_snapshots` (servers of an embedded-etcd cluster): the settings of etcd_snapshot_settings(), written to
    ETCD_SNAPSHOT_DROPIN. `header`: comment lines put first (a stack's reason for no protection).
    `secrets_encryption` (servers): k3s's `secrets-encryption`, written to SERVER_DROPIN; a server whose datastore
    exists without an encryption config stops the script before anything changes (k3s cannot turn encryption on
    later: docs.k3s.io/cli/secrets-encrypt). `airgap`: install from the stack's verified files instead of GitHub.
    `registries`: stdin carries registries.yaml after REGISTRIES_MARK (stdin_text), written to REGISTRIES_PATH."""
    release = versions.k3s_release(kubernetes_version)
    url = versions.k3s_install_script_url(kubernetes_version)
    digest = versions.k3s_install_script_sha256(kubernetes_version)
    # install.sh is checked against its recorded sha256 before it runs (none recorded: it runs as fetched).
    verify = (
        f"""  if ! echo {quoted(digest + "  ")}"$installer" | sha256sum -c --strict - >/dev/null; then
    echo "install.sh of k3s {release} does not match its recorded sha256 {digest}: not running it" >&2
    exit 1
  fi
""" if digest else ""
    )
    service = service_name(role)
    if role == "server":
        ready = "sudo k3s kubectl get --raw=/readyz >/dev/null 2>&1"
    else:
        ready = f"systemctl is-active --quiet {service}"
        if node_name:
            ready += f" && sudo k3s kubectl --kubeconfig {AGENT_KUBECONFIG} get node {quoted(node_name)} >/dev/null 2>&1"
    dropin = ""
    guard = ""
    config_files = CONFIG_PATH
    if role == "server":
        dropin = _write_dropin(SERVER_DROPIN, {"secrets-encryption": True} if secrets_encryption else None)
        dropin += _write_dropin(ETCD_SNAPSHOT_DROPIN, etcd_snapshots)
        config_files += f" {SERVER_DROPIN}" if secrets_encryption else ""
        config_files += f" {ETCD_SNAPSHOT_DROPIN}" if etcd_snapshots is not None else ""
    if role == "server" and secrets_encryption:
        guard = f"""if sudo test -d {ETCD_DB_DIR} && ! sudo test -f {ENCRYPTION_CONFIG}; then
  echo "this k3s server first started without secrets encryption, which k3s cannot turn on later (docs.k3s.io/cli/secrets-encrypt): set gpufleet:cluster.k3s.secretsEncryption to {{enabled: false, reason: ...}} for this cluster, or rebuild it" >&2
  exit 1
fi
"""
    if registries:
        # One stdin holds both files (both secret): split at the marker line, files created 0600 (umask 077).
        write_config = f"""umask 077
sudo tee {CONFIG_PATH}.in >/dev/null
sudo sed '/^{REGISTRIES_MARK}$/,$d' {CONFIG_PATH}.in | sudo tee {CONFIG_PATH}.new >/dev/null
sudo sed '1,/^{REGISTRIES_MARK}$/d' {CONFIG_PATH}.in | sudo tee {REGISTRIES_PATH}.new >/dev/null
sudo rm -f {CONFIG_PATH}.in
sudo chmod 0600 {CONFIG_PATH}.new {REGISTRIES_PATH}.new
sudo mv {CONFIG_PATH}.new {CONFIG_PATH}
sudo mv {REGISTRIES_PATH}.new {REGISTRIES_PATH}
umask 022
"""
        config_files += f" {REGISTRIES_PATH}"
    else:
        write_config = f"""sudo tee {CONFIG_PATH}.new >/dev/null
sudo chmod 0600 {CONFIG_PATH}.new
sudo mv {CONFIG_PATH}.new {CONFIG_PATH}
"""
    if airgap is not None:
        install = _airgap_install(airgap, kubernetes_version, role)
    else:
        install = f"""  installer=$(mktemp)
  trap 'rm -f "$installer"' EXIT
  curl -sfL --retry 3 -o "$installer" {quoted(url)}
{verify}  sudo INSTALL_K3S_VERSION={quoted(release)} INSTALL_K3S_EXEC={quoted(role)} INSTALL_K3S_FORCE_RESTART=true sh "$installer"
"""
    create = f"""{header}set -eu
{AS_ROOT}
{guard}sudo install -d -m 0755 /etc/rancher/k3s
{write_config}{dropin}want=$(sudo cat {config_files} | sha256sum | cut -d ' ' -f 1)
applied=$(sudo cat {APPLIED_PATH} 2>/dev/null || true)
running=$(k3s --version 2>/dev/null | head -n 1 | cut -d ' ' -f 3 || true)
if [ "$running" = {quoted(release)} ] && systemctl is-active --quiet {service}; then
  if [ "$want" != "$applied" ]; then
    echo "config not yet applied: restarting {service}"
    sudo systemctl restart {service}
  fi
  echo "k3s {release} already running"
else
{install}fi
tries=0
until {ready}; do
  tries=$((tries + 1))
  if [ "$tries" -ge {READY_TRIES} ]; then echo "{service} not ready after {READY_TRIES * 2} s" >&2; exit 1; fi
  sleep 2
done
sudo install -d -m 0755 {DATA_DIR}
echo "$want" | sudo tee {APPLIED_PATH} >/dev/null
"""
    uninstall = "/usr/local/bin/k3s-uninstall.sh" if role == "server" else "/usr/local/bin/k3s-agent-uninstall.sh"
    delete = f"{AS_ROOT}\nif [ -x {uninstall} ]; then sudo {uninstall}; fi"
    return NodeScripts(create=create, delete=delete)


def rewrite_kubeconfig(text: str, api_address: str) -> str:
    """k3s writes its kubeconfig for https://127.0.0.1:6443; point it at the API address instead."""
    return text.replace(f"https://127.0.0.1:{API_PORT}", server_url(api_address))


def server_url(address: str) -> str:
    """The API server URL at an address (an IPv6 address in brackets)."""
    return f"https://{url_host(address)}:{API_PORT}"
