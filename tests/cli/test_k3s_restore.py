"""`gpufleet k3s restore-commands STACK SNAPSHOT`: the exact commands for a stack's servers, and exit 2 with a
message where no etcd restore applies. (Against the generated server config: tests/component/test_protection.py.)"""

from __future__ import annotations

import yaml

from gpufleet.app import cli
from tests.helpers import SECRET, example_config

SNAP = "etcd-snapshot-cp-2-1733140800"
DIR = "/var/lib/rancher/k3s/server/db/snapshots"


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = cli.main(["k3s", "restore-commands", *args])
    out, err = capsys.readouterr()
    return code, out, err


def commands(out: str) -> list[str]:
    return [line for line in out.splitlines() if line and not line.startswith("#")]


def stack_file(tmp_path, mutate) -> str:
    config = example_config("ha")
    mutate(config)
    path = tmp_path / "Pulumi.ha.yaml"
    path.write_text(yaml.safe_dump({"config": config}))
    return str(path)


def with_s3(c):
    c["gpufleet:cluster"]["k3s"]["etcdSnapshots"] = {"s3": {"bucket": "ha-etcd", "folder": "ha"}}
    c["gpufleet:etcdS3AccessKey"] = SECRET
    c["gpufleet:etcdS3SecretKey"] = SECRET


def test_local_snapshot_is_restored_on_the_server_that_took_it(capsys):
    code, out, err = run(capsys, "ha", SNAP)
    assert (code, err) == (0, "")
    assert commands(out) == [
        "ssh ubuntu@198.51.100.11 'sudo systemctl stop k3s'",
        "ssh ubuntu@198.51.100.12 'sudo systemctl stop k3s'",
        "ssh ubuntu@198.51.100.13 'sudo systemctl stop k3s'",
        f"ssh ubuntu@198.51.100.12 'sudo k3s server --cluster-reset --cluster-reset-restore-path={DIR}/{SNAP}'",
        "ssh ubuntu@198.51.100.12 'sudo systemctl start k3s'",
        "ssh ubuntu@198.51.100.11 'sudo mv /var/lib/rancher/k3s/server/db /var/lib/rancher/k3s/server/db-before-restore-$(date +%s)'",
        "ssh ubuntu@198.51.100.11 'sudo systemctl start k3s'",
        "ssh ubuntu@198.51.100.13 'sudo mv /var/lib/rancher/k3s/server/db /var/lib/rancher/k3s/server/db-before-restore-$(date +%s)'",
        "ssh ubuntu@198.51.100.13 'sudo systemctl start k3s'",
    ]
    assert "# 2. Restore /var/lib/rancher/k3s/server/db/snapshots/etcd-snapshot-cp-2-1733140800 on cp-2;" in out


def test_local_snapshot_restored_elsewhere_says_to_copy_it(capsys):
    code, out, _ = run(capsys, "ha", SNAP, "--server", "cp-1")
    assert code == 0
    assert "(the snapshot was taken on cp-2: copy it to cp-1 first)" in out
    assert commands(out)[3].startswith("ssh ubuntu@198.51.100.11 'sudo k3s server --cluster-reset")


def test_s3_snapshot_name_is_fetched_from_the_bucket(capsys, tmp_path):
    code, out, _ = run(capsys, "ha", SNAP, "--config", stack_file(tmp_path, with_s3))
    assert code == 0
    restore = commands(out)[3]
    # any server can fetch it: the first one restores; the S3 settings come from its config files
    assert restore == f"ssh ubuntu@198.51.100.11 'sudo k3s server --cluster-reset --cluster-reset-restore-path={SNAP}'"
    assert f"s3://ha-etcd/ha/{SNAP} (endpoint s3.amazonaws.com)" in out


def test_local_file_with_s3_configured_turns_s3_off_for_the_restore(capsys, tmp_path):
    code, out, _ = run(capsys, "ha", f"/root/{SNAP}", "--config", stack_file(tmp_path, with_s3))
    assert code == 0
    assert commands(out)[3].endswith(f"--cluster-reset-restore-path=/root/{SNAP} --etcd-s3=false'")


def test_root_login_and_ssh_port(capsys, tmp_path):
    def root(c):
        k3s = c["gpufleet:cluster"]["k3s"]
        k3s["sshUser"] = "root"
        k3s["servers"][0]["port"] = 2222

    code, out, _ = run(capsys, "ha", "etcd-snapshot-cp-1-1", "--config", stack_file(tmp_path, root))
    assert code == 0
    assert commands(out)[0] == "ssh -p 2222 root@198.51.100.11 'systemctl stop k3s'"  # no sudo for root


def test_where_no_etcd_restore_applies_exit_2(capsys):
    code, out, err = run(capsys, "dev", "etcd-snapshot-cp-1-1")
    assert (code, out) == (2, "")
    assert "stack 'dev' has a single k3s server, whose datastore is SQLite, not etcd" in err
    code, _, err = run(capsys, "prod-eks", SNAP)
    assert code == 2 and "runs on eks, not k3s" in err
    code, _, err = run(capsys, "ha", "x; rm -rf /")
    assert code == 2 and "is not a snapshot name or path" in err
    code, _, err = run(capsys, "ha", SNAP, "--server", "cp-9")
    assert code == 2 and "has no server 'cp-9' (servers: cp-1, cp-2, cp-3)" in err
    code, _, err = run(capsys, "nope", SNAP)
    assert code == 2 and "cannot read" in err and "Traceback" not in err
