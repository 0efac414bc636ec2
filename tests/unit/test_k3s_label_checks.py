"""Unit tests (layer 1): k3s pool labels the kubelet would refuse at start are spec errors."""

import pytest

from gpufleet.base.labels import kubelet_may_set
from gpufleet.base.spec import SpecError, load_spec
from tests.helpers import SECRET

POOL = {"name": "l4", "gpu": "L4", "gpusPerNode": 1, "hosts": [{"name": "gpu-1", "address": "192.0.2.31"}]}


def problems(labels):
    config = {
        "gpufleet:cluster": {"platform": "k3s", "k3s": {"servers": [{"name": "cp-1", "address": "192.0.2.10"}]}},
        "gpufleet:sshPrivateKey": SECRET,
        "gpufleet:nodePools": [{**POOL, "labels": labels}],
    }
    try:
        load_spec("dev", config, ["gpufleet:sshPrivateKey"])
    except SpecError as e:
        return [str(p) for p in e.problems]
    return []


def test_node_role_label_is_rejected_with_the_allowed_set():
    assert problems({"node-role.kubernetes.io/gpu": "", "team": "a"}) == [
        "stack 'dev': gpufleet:nodePools[0].labels: a node cannot label itself in the kubernetes.io / k8s.io "
        "namespaces except kubelet.kubernetes.io/*, node.kubernetes.io/*, topology.kubernetes.io/region|zone, "
        "kubernetes.io/arch|os|hostname (the kubelet refuses to start); use your own prefix, e.g. example.com/role "
        "(got 'node-role.kubernetes.io/gpu')"
    ]


@pytest.mark.parametrize("key, allowed", [
    ("node-role.kubernetes.io/worker", False),
    ("example.k8s.io/x", False),
    ("kubernetes.io/role", False),
    ("node.kubernetes.io/exclude-from-external-load-balancers", True),
    ("foo.node.kubernetes.io/bar", True),
    ("kubelet.kubernetes.io/x", True),
    ("topology.kubernetes.io/zone", True),
    ("kubernetes.io/hostname", True),
    ("example.com/role", True),
    ("team", True),
    ("nvidia.com/mig.config", True),
])
def test_kubelet_rule(key, allowed):
    assert kubelet_may_set(key) is allowed


def test_allowed_labels_pass():
    assert problems({"topology.kubernetes.io/zone": "rack-1", "example.com/role": "train"}) == []
