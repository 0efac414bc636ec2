"""stateful-resource-protection on fixtures (exact PASSED/FAILED sets), its exemptions, the example stacks,
and over the pack's real gRPC Analyzer (the `protect` option travels in AnalyzerResourceOptions)."""

from __future__ import annotations

import pytest

from gpufleet.components.k3s.install import etcd_snapshot_settings, node_scripts
from gpufleet.components.protection import script_exemption
from gpufleet.policies import inputs as I
from gpufleet.base.spec.features.protection import EtcdSnapshotsSpec
from tests.policy.fixtures import EKS_CLUSTER_IN, GKE_CLUSTER_IN, findings, messages, res, with_
from tests.policy.test_grpc_harness import analyzer, as_dicts, over_grpc  # noqa: F401 (module-scoped fixture)
from gpufleet.app.plan.policy_runner import evaluate

P = "stateful-resource-protection"
FAILED = {(P, "r", "mandatory")}
PVC_IN = {"metadata": {"name": "checkpoints", "namespace": "default"}, "spec": {"accessModes": ["ReadWriteMany"]}}
KMS_IN = {"description": "EKS secrets", "enableKeyRotation": True, "deletionWindowInDays": 30.0}
NFS_CLASS_IN = {"metadata": {"name": "nfs"}, "provisioner": "nfs.csi.k8s.io", "reclaimPolicy": "Retain"}
SC = "kubernetes:storage.k8s.io/v1:StorageClass"
# gpufleet's own k3s server scripts: an HA server with snapshots, with snapshots off, a single server, an agent.
HA_SERVER = node_scripts("server", "1.34", etcd_snapshots=etcd_snapshot_settings(EtcdSnapshotsSpec())).create
NO_SNAPSHOTS = node_scripts(
    "server", "1.34", etcd_snapshots=etcd_snapshot_settings(EtcdSnapshotsSpec(enabled=False, reason="lab"))
).create
SINGLE_SERVER = node_scripts("server", "1.34").create
AGENT = node_scripts("agent", "1.34", "gpu-1").create


def command(create: str) -> dict:
    return {"connection": {"host": "192.0.2.10", "user": "ubuntu", "privateKey": "[secret]"}, "create": create, "stdin": "[secret]"}


@pytest.mark.parametrize(
    "type_,inputs,protect,failed",
    [
        (I.EKS_CLUSTER, EKS_CLUSTER_IN, True, False),
        (I.EKS_CLUSTER, EKS_CLUSTER_IN, False, True),
        (I.GKE_CLUSTER, GKE_CLUSTER_IN, True, False),
        (I.GKE_CLUSTER, GKE_CLUSTER_IN, False, True),
        ("aws:kms/key:Key", KMS_IN, True, False),
        ("aws:kms/key:Key", KMS_IN, False, True),
        ("kubernetes:core/v1:PersistentVolumeClaim", PVC_IN, True, False),
        ("kubernetes:core/v1:PersistentVolumeClaim", PVC_IN, False, True),
        ("aws:fsx/lustreFileSystem:LustreFileSystem", {"storageCapacity": 1200.0}, False, True),
        ("gcp:filestore/instance:Instance", {"tier": "BASIC_HDD"}, False, True),
        ("aws:ebs/volume:Volume", {"size": 100.0}, True, False),
        # k3s servers (their script installs k3s as a server); agents and other commands are not judged
        (I.REMOTE_COMMAND, command(HA_SERVER), True, False),
        (I.REMOTE_COMMAND, command(HA_SERVER), False, True),
        (I.REMOTE_COMMAND, command(SINGLE_SERVER), True, False),
        (I.REMOTE_COMMAND, command(SINGLE_SERVER), False, True),
        (I.REMOTE_COMMAND, command(NO_SNAPSHOTS), True, True),  # embedded etcd without snapshots
        (I.REMOTE_COMMAND, command(AGENT), False, False),
        (I.REMOTE_COMMAND, command("sudo cat /etc/rancher/k3s/k3s.yaml"), False, False),
        (I.REMOTE_COMMAND, command("k3s server --cluster-init --etcd-disable-snapshots"), True, True),
        # StorageClasses: shared file systems retain volumes; node-local and block classes are not judged
        (SC, NFS_CLASS_IN, False, False),
        (SC, with_(NFS_CLASS_IN, "reclaimPolicy", "Delete"), False, True),
        (SC, with_(NFS_CLASS_IN, "reclaimPolicy", "Recycle"), False, True),
        (SC, with_(NFS_CLASS_IN, "reclaimPolicy", "retain"), False, True),  # only Retain retains (issue 56: != -> <)
        (SC, {"metadata": {"name": "rwx"}, "provisioner": "filestore.csi.storage.gke.io"}, False, True),  # default Delete
        (SC, {"metadata": {"name": "fsx"}, "provisioner": "fsx.csi.aws.com", "reclaimPolicy": "Retain"}, False, False),
        (SC, {"metadata": {"name": "gp3"}, "provisioner": "ebs.csi.aws.com", "reclaimPolicy": "Delete"}, False, False),
        # not stateful in this rule's sense
        ("aws:eks/nodeGroup:NodeGroup", {"clusterName": "prod"}, False, False),
        ("random:index/randomPassword:RandomPassword", {"length": 48.0}, False, False),
    ],
)
def test_fixtures(type_, inputs, protect, failed):
    assert findings([res(type_, "r", inputs, protect=protect)], policy=P) == (FAILED if failed else set())


def test_messages_say_what_holds_the_data_and_how_to_fix():
    (cluster,) = messages([res(I.EKS_CLUSTER, "r", EKS_CLUSTER_IN, protect=False)], P)
    assert "an EKS control plane" in cluster and "protect=True" in cluster and "cluster.protection" in cluster
    snapshot = messages([res(I.REMOTE_COMMAND, "r", command(NO_SNAPSHOTS), protect=False)], P)
    assert len(snapshot) == 2
    assert "k3s server" in snapshot[0] and "not protected" in snapshot[0]
    assert "etcd-disable-snapshots" in snapshot[1] and "etcdSnapshots.enabled" in snapshot[1]


@pytest.mark.parametrize(
    "type_,inputs",
    [
        (I.EKS_CLUSTER, with_(EKS_CLUSTER_IN, "tags", {f"gpufleet.io/exempt-{P}": "CI cluster"})),
        ("aws:kms/key:Key", with_(KMS_IN, "tags", {f"gpufleet.io/exempt-{P}": "CI cluster"})),
        ("kubernetes:core/v1:PersistentVolumeClaim", with_(PVC_IN, "metadata.annotations", {f"gpufleet.io/exempt-{P}": "scratch"})),
        (I.GKE_CLUSTER, with_(GKE_CLUSTER_IN, "resourceLabels", {f"gpufleet-exempt-{P}": "ci-cluster"})),
        (I.REMOTE_COMMAND, command(script_exemption("lab, rebuilt weekly") + NO_SNAPSHOTS)),
    ],
)
def test_exempt_with_a_reason_on_the_resource(type_, inputs):
    assert findings([res(type_, "r", inputs, protect=False)], policy=P) == set()


def test_exempt_through_policy_config_and_empty_reason_does_not_exempt():
    r = res(I.EKS_CLUSTER, "r", EKS_CLUSTER_IN, protect=False)
    assert findings([r], {P: {"exemptions": {"r": "throwaway"}}}, policy=P) == set()
    assert findings([r], {P: {"exemptions": {"other": "throwaway"}}}, policy=P) == FAILED
    blank = res(I.EKS_CLUSTER, "r", with_(EKS_CLUSTER_IN, "tags", {f"gpufleet.io/exempt-{P}": " "}), protect=False)
    assert findings([blank], policy=P) == FAILED


def test_gpufleet_k3s_plan_passes(dev_plan):
    """The dev example (its own plan; every example stack is planned with exit 0 in test_broken_stacks.py)."""
    assert [v for v in dev_plan.violations if v.policy == P] == []
    assert {r.name for r in dev_plan.resources if r.protect} == {"dev-k3s-server-cp-1", "dev-k3s-token"}


def test_over_grpc_the_pack_reads_protect_from_the_resource_options(analyzer):  # noqa: F811
    stub, _ = analyzer
    resources = [
        res(I.EKS_CLUSTER, "protected", EKS_CLUSTER_IN, protect=True),
        res(I.EKS_CLUSTER, "unprotected", EKS_CLUSTER_IN, protect=False),
        res(I.REMOTE_COMMAND, "no-snapshots", command(NO_SNAPSHOTS), protect=True),
        res(SC, "nfs-delete", with_(NFS_CLASS_IN, "reclaimPolicy", "Delete")),
    ]
    wire = as_dicts(over_grpc(stub, resources))
    assert wire == as_dicts(evaluate(resources, stack="dev"))
    assert {(v["policy"], v["urn"].rsplit("::", 1)[-1]) for v in wire if v["policy"] == P} == {
        (P, "unprotected"), (P, "no-snapshots"), (P, "nfs-delete"),
    }


# Survivors of the mutation sample (issue 33, docs/testing.md): a reason made only of whitespace is no reason, on
# every carrier the rule reads, and a reason is stripped before it is reported.
@pytest.mark.parametrize("blank", [" ", "   ", "\t", " \n "])
def test_a_whitespace_reason_exempts_on_no_carrier(blank):
    gke = res(I.GKE_CLUSTER, "r", with_(GKE_CLUSTER_IN, "resourceLabels", {f"gpufleet-exempt-{P}": blank}), protect=False)
    gke_labels = res(I.GKE_CLUSTER, "r", with_(GKE_CLUSTER_IN, "labels", {f"gpufleet-exempt-{P}": blank}), protect=False)
    pvc = res("kubernetes:core/v1:PersistentVolumeClaim", "r",
              with_(PVC_IN, "metadata.annotations", {f"gpufleet.io/exempt-{P}": blank}), protect=False)
    k3s = res(I.REMOTE_COMMAND, "r", command(f"# gpufleet.io/exempt-{P}:{blank}\n" + NO_SNAPSHOTS), protect=True)
    for r in (gke, gke_labels, pvc, k3s):
        assert findings([r], policy=P) == FAILED, r.inputs
    eks = res(I.EKS_CLUSTER, "r", EKS_CLUSTER_IN, protect=False)
    assert findings([eks], {P: {"exemptions": {"r": blank}}}, policy=P) == FAILED
    assert findings([eks], {P: {"exemptions": {eks.urn: blank}}}, policy=P) == FAILED


def test_the_reason_read_is_stripped_and_the_gcp_label_counts_on_either_carrier():
    from gpufleet.policies.rules.stateful_resource_protection import _gcp_exemption

    key = f"gpufleet-exempt-{P}"
    assert _gcp_exemption({"resourceLabels": {key: "  ci-cluster "}}) == "ci-cluster"
    assert _gcp_exemption({"labels": {key: "ci-cluster"}}) == "ci-cluster"
    assert _gcp_exemption({"resourceLabels": {key: " "}, "labels": {key: "lab"}}) == "lab"
    assert _gcp_exemption({"resourceLabels": {key: 3}}) is None
    assert I.exemption(P, "r", "urn:r", {}, {"exemptions": {"r": "  throwaway  "}}) == "throwaway"
    assert I.exemption(P, "r", "urn:r", {"tags": {f"gpufleet.io/exempt-{P}": " why "}}, None) == "why"


def test_a_script_exemption_comment_exempts_remote_commands_only():
    """Issue 56: the type test before the script exemption turned `<=` survived; another resource carrying such a text
    (here an unprotected EKS cluster with a `create` input) is still judged."""
    text = "# gpufleet.io/exempt-stateful-resource-protection: throwaway\n"
    cluster = res("aws:eks/cluster:Cluster", "prod", {"create": text, "roleArn": "arn"}, protect=False)
    assert findings([cluster], policy=P) == {(P, "prod", "mandatory")}
