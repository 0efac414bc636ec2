"""The exact commands that restore a k3s cluster from an etcd snapshot, for one stack's servers.

The procedure is k3s's own (docs.k3s.io/cli/etcd-snapshot, "Restoring Snapshots", multiple servers): stop k3s on
every server; on one server run `k3s server --cluster-reset --cluster-reset-restore-path=<snapshot>`, which restores
the snapshot and resets etcd membership to that one server; start k3s there; on each other server set its etcd
database aside ("Backup and delete ${datadir}/server/db on each peer etcd server and rejoin the nodes", k3s's log
message) and start k3s, which joins the restored cluster. `k3s server` reads the same config.yaml and drop-ins
gpufleet writes, so the token the snapshot was taken with and the S3 settings come from there: with S3 configured a
bare snapshot name is fetched from the bucket; a local file needs `--etcd-s3=false` and its full path.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Optional

from gpufleet.components.k3s.install import ETCD_DB_DIR, ETCD_SNAPSHOT_DIR, service_name
from gpufleet.base.spec import Host, K3sSpec

# Snapshot names k3s writes (etcd-snapshot-<node>-<unix time>, on-demand-<node>-<unix time>) and file paths: no
# shell metacharacters, matched whole, and quoted where used all the same.
SNAPSHOT = re.compile(r"[A-Za-z0-9._/+-]+")
SERVICE = service_name("server")


class RestoreError(ValueError):
    """The stack cannot be restored from an etcd snapshot this way (the message says why)."""


@dataclass(frozen=True)
class Step:
    comment: str
    commands: list[str]


def _ssh(host: Host, default_user: str, command: str) -> str:
    """One ssh command line. Every field is quoted, though the spec already admits only POSIX user names and
    addresses (spec/text.py): the line is pasted into a workstation's shell during an incident."""
    user = host.user or default_user
    privileged = command if user == "root" else f"sudo {command}"
    port = f"-p {int(host.port)} " if host.port != 22 else ""
    return f"ssh {port}{shlex.quote(f'{user}@{host.address}')} {shlex.quote(privileged)}"


def snapshot_server(spec: K3sSpec, snapshot: str) -> Optional[Host]:
    """The server whose name is in the snapshot's name (k3s names snapshots after the node that took them)."""
    base = snapshot.rsplit("/", 1)[-1]
    matches = [h for h in spec.servers if re.search(rf"-{re.escape(h.name)}-\d+", base)]
    return max(matches, key=lambda h: len(h.name)) if matches else None


def restore_steps(stack: str, spec: K3sSpec, snapshot: str, server: Optional[str] = None) -> list[Step]:
    """The restore of `stack`'s cluster from `snapshot` (a snapshot name, or an absolute path on the restoring
    server), as numbered steps of ssh commands. RestoreError when the stack has no embedded etcd or the input is bad."""
    if not spec.embedded_etcd:
        raise RestoreError(
            f"stack '{stack}' has a single k3s server, whose datastore is SQLite, not etcd: there are no etcd snapshots "
            f"to restore (back up {ETCD_DB_DIR} on the server instead)"
        )
    if not SNAPSHOT.fullmatch(snapshot) or snapshot.endswith("/") or snapshot.startswith("-"):
        raise RestoreError(f"'{snapshot}' is not a snapshot name or path (letters, digits, . _ / + - only)")
    names = [h.name for h in spec.servers]
    if server is not None and server not in names:
        raise RestoreError(f"stack '{stack}' has no server '{server}' (servers: {', '.join(names)})")

    s3 = spec.etcd_snapshots.s3 if spec.etcd_snapshots.enabled else None
    local = snapshot.startswith("/")
    if local:
        path, where = snapshot, f"the file {snapshot}"
    elif s3 is not None:
        path = snapshot  # k3s fetches a bare name from the configured bucket
        folder = f"/{s3.folder}" if s3.folder else ""
        where = f"s3://{s3.bucket}{folder}/{snapshot} (endpoint {s3.endpoint})"
    else:
        path, where = f"{ETCD_SNAPSHOT_DIR}/{snapshot}", f"{ETCD_SNAPSHOT_DIR}/{snapshot}"
    taken_on = snapshot_server(spec, snapshot)
    by_name = {h.name: h for h in spec.servers}
    first = by_name[server] if server else (taken_on if (taken_on and (local or s3 is None)) else spec.servers[0])
    others = [h for h in spec.servers if h.name != first.name]
    user = spec.ssh_user

    flags = f"--cluster-reset --cluster-reset-restore-path={shlex.quote(path)}"
    if local and s3 is not None:
        flags += " --etcd-s3=false"  # the config names a bucket; this snapshot is a local file
    note = ""
    if s3 is None and not local and taken_on is not None and taken_on.name != first.name:
        note = f" (the snapshot was taken on {taken_on.name}: copy it to {first.name} first)"
    elif s3 is None and not local and taken_on is None:
        note = f" (it must be in {ETCD_SNAPSHOT_DIR} on {first.name})"
    return [
        Step("Stop k3s on every server", [_ssh(h, user, f"systemctl stop {SERVICE}") for h in spec.servers]),
        Step(f"Restore {where} on {first.name}{note}; k3s exits when done and says to restart without --cluster-reset",
             [_ssh(first, user, f"k3s server {flags}")]),
        Step(f"Start k3s on {first.name}", [_ssh(first, user, f"systemctl start {SERVICE}")]),
        Step("On every other server: set the old etcd database aside (it also holds that server's local snapshots), "
             "then start k3s to join the restored cluster",
             [c for h in others for c in (
                 _ssh(h, user, f"mv {ETCD_DB_DIR} {ETCD_DB_DIR}-before-restore-$(date +%s)"),
                 _ssh(h, user, f"systemctl start {SERVICE}"),
             )]),
    ]


def render_steps(stack: str, snapshot: str, steps: list[Step]) -> str:
    out = [
        f"# Restore the k3s cluster of stack '{stack}' from etcd snapshot {snapshot}",
        "# (docs.k3s.io/cli/etcd-snapshot, Restoring Snapshots). Run the steps in order, each command to completion.",
        "# The snapshot is decrypted with the join token it was taken with: the servers' config.yaml holds it (stack",
        "# resource <cluster>-k3s-token, protected); restoring to new hosts needs that same token.",
    ]
    for i, step in enumerate(steps, 1):
        out += ["", f"# {i}. {step.comment}"] + step.commands
    out += ["", "# Then check: kubectl get nodes; and run `pulumi up` (a no-op when the hosts match the stack)."]
    return "\n".join(out) + "\n"


__all__ = ["RestoreError", "Step", "render_steps", "restore_steps", "snapshot_server"]
