"""Real-chart test (DESIGN.md section 6, layer 6), issue 17: in a mixed k3s cluster (stacks/Pulumi.amd-lab.yaml: two
MI300X pools, one L4 host) each vendor's GPU daemons land only on that vendor's nodes, and the cluster runs one
node-feature-discovery that labels every GPU node.

The NVIDIA GPU Operator chart (pinned archive in ../shared/reference/charts) is rendered with the values gpufleet
computes: its NFD worker DaemonSet and the ClusterPolicy's operand tolerations (`spec.daemonsets.tolerations`, what
every operand DaemonSet the operator creates carries) are scheduled against the cluster's nodes as gpufleet labels
and taints them (gpufleet/base/node_labels.py). NVIDIA operands also need the operator's deploy labels, which it sets only
on nodes NFD reports with an NVIDIA PCI device (vendor 10de). The AMD operands are placed by each DeviceConfig's
`selector` and tolerations (the AMD chart archive is not in ../shared/reference/charts, so the DeviceConfigs are read
from the plan: the operator copies selector and tolerations onto the DaemonSets it creates).
"""

from __future__ import annotations

import pytest

from gpufleet.base import labels as L
from gpufleet.base.node_labels import pool_labels, pool_taints
from gpufleet.base.sharing import is_amd
from tests.helm import template
from tests.helpers import REFERENCE, by_type, example, planned

CHART = REFERENCE / "charts" / "gpu-operator-v26.7.0.tgz"
RELEASE = "kubernetes:helm.sh/v3:Release"
DEVICE_CONFIG = "kubernetes:amd.com/v1alpha1:DeviceConfig"
NVIDIA_PCI = "feature.node.kubernetes.io/pci-10de.present"

pytestmark = pytest.mark.skipif(not CHART.exists(), reason=f"pinned chart not found: {CHART} (../shared/reference absent)")


def nodes() -> dict[str, tuple[dict, list[dict]]]:
    """host -> (labels, taints) of every GPU node of amd-lab, with the PCI label NFD adds for its GPU vendor."""
    spec = example("amd-lab")
    from gpufleet.base.spec import load_spec

    s = load_spec("amd-lab", spec.config, spec.secret_keys)
    out = {}
    for pool in s.node_pools:
        found = {L.AMD_NFD_LABEL: "true"} if is_amd(pool) else {NVIDIA_PCI: "true"}
        for host in pool.hosts:
            out[host.name] = ({**pool_labels(pool), **found}, pool_taints(pool))
    return out


def tolerates(tolerations: list[dict], taint: dict) -> bool:
    for t in tolerations or []:
        if t.get("effect") not in (None, "", taint["effect"]):
            continue
        if t.get("operator") == "Exists" and (not t.get("key") or t["key"] == taint["key"]):
            return True
        if t.get("key") == taint["key"] and t.get("value", "") == taint["value"]:
            return True
    return False


def placed(tolerations: list[dict], selector: dict, cluster: dict) -> set[str]:
    """Nodes a DaemonSet pod with these tolerations and nodeSelector can run on."""
    return {
        name for name, (node_labels, taints) in cluster.items()
        if all(node_labels.get(k) == v for k, v in (selector or {}).items())
        and all(tolerates(tolerations, t) for t in taints if t["effect"] in ("NoSchedule", "NoExecute"))
    }


@pytest.fixture(scope="module")
def rendered():
    lab = planned("amd-lab")
    (release,) = [r for r in by_type(lab, RELEASE) if r.inputs["chart"] == "gpu-operator"]
    return lab, template(CHART, release.revealed["values"], "gpu-operator", release="gpu-operator")


def test_one_nfd_labels_every_gpu_node(rendered):
    lab, objs = rendered
    workers = [o for o in objs if o["kind"] == "DaemonSet" and "worker" in o["metadata"]["name"]]
    assert len(workers) == 1
    pod = workers[0]["spec"]["template"]["spec"]
    assert placed(pod.get("tolerations"), pod.get("nodeSelector"), nodes()) == {"mi300x-cpx-1", "mi300x-1", "mi300x-2", "l4-1"}
    (amd_release,) = [r for r in by_type(lab, RELEASE) if r.inputs["name"] == "gpu-operator-charts"]
    assert amd_release.revealed["values"]["node-feature-discovery"] == {"enabled": False}


def test_nvidia_operands_only_on_the_nvidia_host(rendered):
    _, objs = rendered
    (policy,) = [o for o in objs if o["kind"] == "ClusterPolicy"]
    tol = policy["spec"]["daemonsets"]["tolerations"]
    cluster = nodes()
    # Even without the operator's deploy labels (which need an NVIDIA PCI device) the tolerations keep them off AMD nodes.
    assert placed(tol, {}, cluster) == {"l4-1"}
    assert placed(tol, {NVIDIA_PCI: "true"}, cluster) == {"l4-1"}


def test_each_device_config_places_amd_operands_on_its_pool_only(rendered):
    lab, _ = rendered
    cluster = nodes()
    want = {"gpufleet-mi300x-cpx": {"mi300x-cpx-1"}, "gpufleet-mi300x-train": {"mi300x-1", "mi300x-2"}}
    got = {}
    for r in by_type(lab, DEVICE_CONFIG):
        spec = r.revealed["spec"]
        name = r.revealed["metadata"]["name"]
        got[name] = placed(spec["devicePlugin"]["devicePluginTolerations"], spec["selector"], cluster)
        for operand in (spec["devicePlugin"]["nodeLabellerTolerations"], spec["metricsExporter"]["tolerations"]):
            assert placed(operand, spec["selector"], cluster) == got[name]
        # Never the NVIDIA host, whatever the selector: nothing AMD tolerates nvidia.com/gpu.
        assert "l4-1" not in placed(spec["devicePlugin"]["devicePluginTolerations"], {}, cluster)
    assert got == want
