"""Component tests (layer 2): K3sStorage — NFS CSI chart, RWX StorageClass, checkpoint claim, local-path path."""

import pytest
import yaml

from gpufleet.base import versions
from tests.helpers import by_type, one, parent_of, planned


@pytest.fixture(scope="module")
def lab():
    return planned("lab", policies=True)


def test_children_types_names_parents(lab):
    comp = one(lab, "gpufleet:addons:K3sStorage", "lab-storage")
    assert parent_of(lab, comp).name == "lab"
    children = {r.name: r.type for r in lab.resources if r.parent == comp.urn}
    assert children == {
        "lab-storage-nfs-csi": "kubernetes:helm.sh/v3:Release",
        "lab-storage-nfs-class": "kubernetes:storage.k8s.io/v1:StorageClass",
        "lab-storage-checkpoints": "kubernetes:core/v1:PersistentVolumeClaim",
    }


def test_nfs_chart_is_pinned_and_class_is_rwx_from_the_spec(lab):
    r = one(lab, "kubernetes:helm.sh/v3:Release", "lab-storage-nfs-csi")
    chart = versions.CSI_DRIVER_NFS
    # The archive at a csi-driver-nfs commit, not the index on its master branch.
    assert (r.inputs["chart"], r.inputs["version"]) == (chart.archive, chart.version) and "repositoryOpts" not in r.inputs
    assert r.inputs["namespace"] == "kube-system"
    assert r.inputs["values"] == {"storageClass": {"create": False}}
    sc = one(lab, "kubernetes:storage.k8s.io/v1:StorageClass").inputs
    assert sc["metadata"] == {"name": "nfs", "annotations": {"storageclass.kubernetes.io/is-default-class": "false"}}
    assert sc["provisioner"] == "nfs.csi.k8s.io"
    assert sc["parameters"] == {"server": "203.0.113.60", "share": "/export/gpufleet"}
    assert sc["reclaimPolicy"] == "Retain" and sc["mountOptions"] == ["nfsvers=4.1"]


def test_checkpoint_claim(lab):
    pvc = one(lab, "kubernetes:core/v1:PersistentVolumeClaim").inputs
    assert pvc["metadata"] == {"name": "checkpoints", "namespace": "default"}
    assert pvc["spec"] == {
        "accessModes": ["ReadWriteMany"], "storageClassName": "nfs", "resources": {"requests": {"storage": "2Ti"}},
    }


def test_local_path_directory_is_a_k3s_server_flag(lab):
    cfg = yaml.safe_load(one(lab, "command:remote:Command", "lab-k3s-server-cp-1").revealed["stdin"])
    assert cfg["default-local-storage-path"] == "/mnt/nvme/k3s-local-path"


def test_no_nfs_no_storage_component():
    p = planned("dev", policies=True)
    assert by_type(p, "gpufleet:addons:K3sStorage") == []
    cfg = yaml.safe_load(one(p, "command:remote:Command", "dev-k3s-server-cp-1").revealed["stdin"])
    assert "default-local-storage-path" not in cfg
