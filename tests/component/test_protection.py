"""Protection of what holds state, as registered (the options the SDK sends the engine), per platform: protected by
default, unprotected with a reason carried as the policy exemption; and k3s etcd snapshot settings in the generated
server config. Six plans: each platform as it ships, and with `gpufleet:cluster.protection` off."""

from __future__ import annotations

import pytest
import yaml

from gpufleet.components.k3s.install import CONFIG_PATH, ETCD_SNAPSHOT_DROPIN, SERVER_DROPIN
from gpufleet.app.plan.mocks import Registration
from tests.eks_plan import prod_eks
from tests.helpers import SECRET, example_config, one, plan_config, planned

P = "stateful-resource-protection"
EXEMPT = f"gpufleet.io/exempt-{P}"
REASON = "ephemeral CI cluster, rebuilt nightly"
OFF = {"enabled": False, "reason": REASON}
CMD, TOKEN, PVC = "command:remote:Command", "random:index/randomPassword:RandomPassword", "kubernetes:core/v1:PersistentVolumeClaim"


def ha_config(protected: bool = True) -> dict:
    """The HA example with NFS storage, a checkpoint claim and snapshots copied to S3 (or, unprotected, none)."""
    c = example_config("ha")
    c["gpufleet:storage"] = {"nfs": {"server": "198.51.100.60", "share": "/export/ha"}, "checkpoints": {"size": "1Ti"}}
    if protected:
        c["gpufleet:cluster"]["k3s"]["etcdSnapshots"] = {
            "scheduleCron": "0 */4 * * *", "retention": 30,
            "s3": {"bucket": "ha-etcd", "endpoint": "minio.example.com:9000", "folder": "ha"},
        }
        c["gpufleet:etcdS3AccessKey"] = SECRET
        c["gpufleet:etcdS3SecretKey"] = SECRET
    else:
        c["gpufleet:cluster"]["protection"] = OFF
        c["gpufleet:cluster"]["k3s"]["etcdSnapshots"] = {"enabled": False, "reason": "lab, rebuilt weekly"}
    return c


def unprotected(stack: str) -> dict:
    c = example_config(stack)
    c["gpufleet:cluster"]["protection"] = OFF
    return c


@pytest.fixture(scope="module")
def k3s():
    return plan_config(ha_config(), stack="ha")


@pytest.fixture(scope="module")
def k3s_off():
    return plan_config(ha_config(protected=False), stack="ha")


@pytest.fixture(scope="module")
def gke():
    return planned("prod-gke", policies=True)


@pytest.fixture(scope="module")
def gke_off():
    return plan_config(unprotected("prod-gke"), stack="prod-gke")


@pytest.fixture(scope="module")
def eks_off():
    return plan_config(unprotected("prod-eks"), stack="prod-eks")


def protected(plan) -> set[tuple[str, str]]:
    return {(r.type, r.name) for r in plan.resources if r.protect}


def no_mandatory(plan) -> None:
    assert [v for v in plan.violations if v.level == "mandatory"] == []


# --- k3s -------------------------------------------------------------------------------------------------------


def test_k3s_servers_token_and_claim_are_protected_agents_are_not(k3s):
    assert protected(k3s) == {
        (CMD, "ha-k3s-server-cp-1"), (CMD, "ha-k3s-server-cp-2"), (CMD, "ha-k3s-server-cp-3"),
        (TOKEN, "ha-k3s-token"), (PVC, "ha-storage-checkpoints"),
    }
    # protect is set on the stateful children themselves, not inherited from a protected component
    assert not any(r.protect for r in k3s.resources if not r.custom)
    assert one(k3s, CMD, "ha-k3s-agent-cpu-1").protect is False
    assert one(k3s, CMD, "ha-pool-h100-agent-gpu-h100-1").protect is False
    claim = one(k3s, PVC, "ha-storage-checkpoints")
    assert claim.options()["protect"] is True and claim.parent.endswith("K3sStorage::ha-storage")
    no_mandatory(k3s)


def test_k3s_etcd_snapshot_settings_in_the_generated_server_config(k3s):
    for i, host in enumerate(("cp-1", "cp-2", "cp-3")):
        server = one(k3s, CMD, f"ha-k3s-server-{host}")
        script = server.inputs["create"]
        dropin = script.split(f"sudo tee {ETCD_SNAPSHOT_DROPIN}.new >/dev/null <<'GPUFLEET_EOF'\n", 1)[1].split("GPUFLEET_EOF", 1)[0]
        assert yaml.safe_load(dropin) == {
            "etcd-snapshot-schedule-cron": "0 */4 * * *",
            "etcd-snapshot-retention": 30,
            "etcd-s3": True,
            "etcd-s3-endpoint": "minio.example.com:9000",
            "etcd-s3-bucket": "ha-etcd",
            "etcd-s3-region": "us-east-1",
            "etcd-s3-folder": "ha",
        }
        assert f"sudo cat {CONFIG_PATH} {SERVER_DROPIN} {ETCD_SNAPSHOT_DROPIN} | sha256sum" in script  # a changed drop-in restarts k3s
        assert "etcd-s3-secret-key" not in script and "etcd-s3-access-key" not in script
        # the credentials travel in the secret config.yaml (stdin), never in the plain script
        assert server.inputs["stdin"] == "[secret]"
        config = yaml.safe_load(server.revealed["stdin"])
        assert set(config) >= {"etcd-s3-access-key", "etcd-s3-secret-key", "token", "node-name"}
        assert ("cluster-init" in config) == (i == 0)


def test_k3s_single_server_has_no_etcd_snapshot_settings():
    from gpufleet.components.k3s.install import node_scripts

    script = node_scripts("server", "1.34").create  # what K3sCluster runs on a lone server (SQLite, no etcd)
    assert f"sudo rm -f {ETCD_SNAPSHOT_DROPIN}" in script and "etcd-snapshot-" not in script


def test_k3s_unprotected_with_a_reason(k3s_off):
    assert protected(k3s_off) == set()
    server = one(k3s_off, CMD, "ha-k3s-server-cp-1")
    assert server.inputs["create"].startswith(f"# {EXEMPT}: {REASON}; lab, rebuilt weekly\nset -eu\n")
    assert "etcd-disable-snapshots: true" in server.inputs["create"]
    claim = one(k3s_off, PVC, "ha-storage-checkpoints")
    assert claim.inputs["metadata"]["annotations"] == {EXEMPT: REASON}
    no_mandatory(k3s_off)  # exempt with the stack's reason, not silently passed: see the policy tests


# --- EKS -------------------------------------------------------------------------------------------------------


def test_eks_cluster_and_kms_key_are_protected_with_deletion_protection():
    plan, _ = prod_eks()
    assert protected(plan) == {("aws:eks/cluster:Cluster", "prod-gpu-eks-cluster"), ("aws:kms/key:Key", "prod-gpu-eks-secrets-key")}
    cluster = one(plan, "aws:eks/cluster:Cluster")
    assert cluster.inputs["deletionProtection"] is True
    assert cluster.options()["retainOnDelete"] is False  # a retained cluster would keep billing unseen
    assert EXEMPT not in cluster.inputs["tags"]
    key = one(plan, "aws:kms/key:Key")
    assert key.inputs["deletionWindowInDays"] == 30.0 and key.parent.endswith("EksCluster::prod-gpu-eks")
    assert not any(r.protect for r in plan.resources if r.type == "aws:eks/nodeGroup:NodeGroup")


def test_eks_unprotected_with_a_reason(eks_off):
    assert protected(eks_off) == set()
    cluster = one(eks_off, "aws:eks/cluster:Cluster")
    assert cluster.inputs["deletionProtection"] is False
    assert cluster.inputs["tags"][EXEMPT] == REASON
    assert one(eks_off, "aws:kms/key:Key").inputs["tags"][EXEMPT] == REASON
    no_mandatory(eks_off)


# --- GKE -------------------------------------------------------------------------------------------------------


def test_gke_cluster_protected_and_filestore_class_retains(gke):
    assert protected(gke) == {("gcp:container/cluster:Cluster", "prod-gke-gke-cluster")}
    cluster = one(gke, "gcp:container/cluster:Cluster")
    assert cluster.inputs["deletionProtection"] is True and "resourceLabels" not in cluster.inputs
    rwx = one(gke, "kubernetes:storage.k8s.io/v1:StorageClass", "prod-gke-storage-rwx")
    assert rwx.inputs["reclaimPolicy"] == "Retain"


def test_gke_unprotected_with_a_reason(gke_off):
    assert protected(gke_off) == set()
    cluster = one(gke_off, "gcp:container/cluster:Cluster")
    assert cluster.inputs["deletionProtection"] is False
    # GCP labels allow [a-z0-9_-] only: the reason as a slug, under the GCP spelling of the exemption key
    assert cluster.inputs["resourceLabels"] == {f"gpufleet-exempt-{P}": "ephemeral-ci-cluster-rebuilt-nightly"}
    no_mandatory(gke_off)


def test_plan_json_carries_the_registered_options(gke):
    from gpufleet.app.plan.render import to_json

    doc = to_json(gke)
    by_name = {r["name"]: r for r in doc["resources"]}
    assert by_name["prod-gke-gke-cluster"]["options"] == {
        "protect": True, "retainOnDelete": False, "ignoreChanges": [], "replaceOnChanges": [],
        "deleteBeforeReplace": None, "dependsOn": by_name["prod-gke-gke-cluster"]["options"]["dependsOn"],
    }
    pool = by_name["prod-gke-gke-system-pool"]["options"]
    assert pool["protect"] is False and pool["ignoreChanges"] == ["initialNodeCount"]
    assert by_name["prod-gke-gke-cluster"]["urn"] in pool["dependsOn"]  # the pool waits for its cluster
    assert all(set(r["options"]) == {"protect", "retainOnDelete", "ignoreChanges", "replaceOnChanges",
                                     "deleteBeforeReplace", "dependsOn"} for r in doc["resources"])


def test_registration_options_default_to_unset():
    r = Registration(urn="u", type="t", name="n", parent=None, custom=True, inputs={})
    assert r.options() == {"protect": False, "retainOnDelete": False, "ignoreChanges": [], "replaceOnChanges": [],
                           "deleteBeforeReplace": None, "dependsOn": []}


def test_restore_commands_match_the_generated_server_config(k3s):
    """`gpufleet k3s restore-commands` against what the plan would install: the hosts and users of the server
    commands, the snapshot settings of their drop-in, and the secret config the restoring `k3s server` reads."""
    from gpufleet.components.k3s.install import ETCD_SNAPSHOT_DIR
    from gpufleet.components.k3s.restore import render_steps, restore_steps
    from gpufleet.base.spec import load_spec
    from tests.helpers import stack_file

    sf = stack_file(ha_config(), stack="ha")
    spec = load_spec("ha", sf.config, sf.secret_keys).cluster.k3s
    servers = {r.name.removeprefix("ha-k3s-server-"): r for r in k3s.resources if r.name.startswith("ha-k3s-server-")}
    targets = {name: f"{r.revealed['connection']['user']}@{r.revealed['connection']['host']}" for name, r in servers.items()}

    steps = restore_steps("ha", spec, "etcd-snapshot-cp-3-1733140800")
    stop, restore, start, rejoin = (s.commands for s in steps)
    assert [c.split()[1] for c in stop] == [targets["cp-1"], targets["cp-2"], targets["cp-3"]]
    # S3 is configured in the generated drop-in, so a bare name is fetched from the bucket by the first server
    dropin = yaml.safe_load(servers["cp-1"].inputs["create"].split(f"{ETCD_SNAPSHOT_DROPIN}.new >/dev/null <<'GPUFLEET_EOF'\n", 1)[1].split("GPUFLEET_EOF", 1)[0])
    assert dropin["etcd-s3"] is True and "etcd-snapshot-dir" not in dropin  # k3s's default dir: ETCD_SNAPSHOT_DIR
    assert restore == [f"ssh {targets['cp-1']} 'sudo k3s server --cluster-reset --cluster-reset-restore-path=etcd-snapshot-cp-3-1733140800'"]
    assert f"s3://{dropin['etcd-s3-bucket']}/{dropin['etcd-s3-folder']}/etcd-snapshot-cp-3-1733140800" in steps[1].comment
    # `k3s server --cluster-reset` reads the restoring server's config.yaml: the token and the bucket's credentials
    config = yaml.safe_load(servers["cp-1"].revealed["stdin"])
    assert {"token", "etcd-s3-access-key", "etcd-s3-secret-key"} <= set(config)
    assert start == [f"ssh {targets['cp-1']} 'sudo systemctl start k3s'"]
    assert [c.split()[1] for c in rejoin] == [targets["cp-2"], targets["cp-2"], targets["cp-3"], targets["cp-3"]]
    # a local file on a server: its full path, with S3 turned off for the restore
    local = restore_steps("ha", spec, f"{ETCD_SNAPSHOT_DIR}/etcd-snapshot-cp-3-1733140800")[1].commands[0]
    assert local.endswith(f"--cluster-reset-restore-path={ETCD_SNAPSHOT_DIR}/etcd-snapshot-cp-3-1733140800 --etcd-s3=false'")
    assert local.startswith(f"ssh {targets['cp-3']} ")  # the server that took it holds the file


# --- stable URNs: a renamed stateful resource is a replaced one ------------------------------------------------
_GC = "gpufleet:index:GpuCluster"
STATEFUL_URNS = {
    "k3s": {
        f"urn:pulumi:ha::gpufleet::{_GC}$gpufleet:k3s:K3sCluster$command:remote:Command::ha-k3s-server-cp-1",
        f"urn:pulumi:ha::gpufleet::{_GC}$gpufleet:k3s:K3sCluster$command:remote:Command::ha-k3s-server-cp-2",
        f"urn:pulumi:ha::gpufleet::{_GC}$gpufleet:k3s:K3sCluster$command:remote:Command::ha-k3s-server-cp-3",
        f"urn:pulumi:ha::gpufleet::{_GC}$gpufleet:k3s:K3sCluster$random:index/randomPassword:RandomPassword::ha-k3s-token",
        f"urn:pulumi:ha::gpufleet::{_GC}$gpufleet:addons:K3sStorage$kubernetes:core/v1:PersistentVolumeClaim::ha-storage-checkpoints",
    },
    "eks": {
        f"urn:pulumi:prod-eks::gpufleet::{_GC}$gpufleet:eks:EksCluster$aws:eks/cluster:Cluster::prod-gpu-eks-cluster",
        f"urn:pulumi:prod-eks::gpufleet::{_GC}$gpufleet:eks:EksCluster$aws:kms/key:Key::prod-gpu-eks-secrets-key",
    },
    "gke": {
        f"urn:pulumi:prod-gke::gpufleet::{_GC}$gpufleet:gke:GkeCluster$gcp:container/cluster:Cluster::prod-gke-gke-cluster",
    },
}


def test_stateful_urns_are_stable(k3s, gke):
    """Renaming a protected resource (or a component above it) changes its URN: Pulumi would create a new one and
    delete the old, data and all (protect stops the delete, the rename fails). Keep names; when one must change, add
    `aliases=[pulumi.Alias(name=<old>)]` (or `parent=` for a moved component) and update this list in the same change."""
    eks, _ = prod_eks()
    got = {platform: {r.urn for r in plan.resources if r.protect}
           for platform, plan in (("k3s", k3s), ("eks", eks), ("gke", gke))}
    assert got == STATEFUL_URNS

