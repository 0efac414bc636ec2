"""Helm values and chart references of the charts with no copy in ../shared/reference.

The key paths below were read from each chart's values.yaml (or Chart.yaml conditions) at the pinned
version; only the list of verified paths is kept here, never the upstream file. A new value in a
component fails `test_every_value_we_set_was_verified_upstream` until someone checks it upstream and
adds it with its source.
"""

from __future__ import annotations

import pytest

from gpufleet.components.helm_chart import chart_args
from gpufleet.base import versions
from tests.helm_values import key_paths
from tests.helpers import by_type, example_config, plan_config, planned

RELEASE = "kubernetes:helm.sh/v3:Release"

VERIFIED: dict[str, set[str]] = {
    # kubeflow/trainer charts/kubeflow-trainer/Chart.yaml @ 03925b07b14181466dc8dc5e4313acb07b4895f5
    # (version 2.3.0): dependency jobset `condition: jobset.install`; values.yaml (same path,
    # @ 008666ed09f7745e27995f8be1f5eef74c4552c4) has `jobset.install: true`.
    "kubeflow-trainer": {"jobset.install", "runtimes.defaultEnabled"},
    # kubernetes-csi/csi-driver-nfs charts/v4.13.4/csi-driver-nfs-4.13.4.tgz values.yaml
    # @ eb052a9a6723a6eb217ff1141944717d8da6d276 (was 4.12.1 @ 7c4b727e): `storageClass.create: false`.
    "csi-driver-nfs": {"storageClass.create"},
    # kubernetes-sigs/kueue charts/kueue/values.yaml @ v0.19.2 (8eab6877): `managerConfig.controllerManagerConfigYaml`,
    # the Configuration file (set only on stacks with DRA pools: its resources.deviceClassMappings).
    "kueue": {"managerConfig.controllerManagerConfigYaml"},
    # gpufleet sets no values on these (chart defaults).
    "jobset": set(),
    "volcano": set(),
    "keda": set(),
}


@pytest.fixture(scope="module")
def releases():
    """Every workload release gpufleet can create: teams (Kueue, JobSet, trainer without its JobSet, KEDA),
    teams with Volcano and the trainer's bundled JobSet, and lab (NFS CSI driver)."""
    vol = example_config("teams")
    vol["gpufleet:addons"]["volcano"] = {"enabled": True, "pools": ["l4-infer"]}
    vol["gpufleet:addons"]["jobset"] = {"enabled": False}
    plans = [
        planned("teams"),
        plan_config(vol, stack="vol", policies=False),
        planned("lab"),
        planned("nvl72-k3s"),
    ]
    return [r for p in plans for r in by_type(p, RELEASE) if r.inputs["name"] in VERIFIED]


def test_every_workload_chart_is_planned(releases):
    assert {r.inputs["name"] for r in releases} == set(VERIFIED)


def test_every_value_we_set_was_verified_upstream(releases):
    for r in releases:
        values = r.inputs.get("values") or {}
        paths = set(key_paths(values)) if values else set()
        assert paths <= VERIFIED[r.inputs["name"]], (r.name, sorted(paths - VERIFIED[r.inputs["name"]]))


@pytest.mark.parametrize("chart", [versions.KUEUE, versions.JOBSET, versions.KUBEFLOW_TRAINER])
def test_oci_charts_are_one_reference_without_repository_opts(chart):
    # Helm (and Pulumi's helm.v3.Release, which embeds it) pulls an OCI chart from `oci://<registry>/<path>/<name>`
    # with --version; repositoryOpts.repo is for index.yaml repositories only.
    args = chart_args(chart)
    assert args == {"chart": f"{chart.repo}/{chart.name}", "version": chart.version}
    assert args["chart"].startswith("oci://") and not chart.version.startswith("v")


def test_branch_indexed_charts_name_their_archive(releases):
    # Volcano, KEDA and csi-driver-nfs publish their index on a branch (GitHub Pages or master): the release names the
    # archive at a commit or the release asset instead, and reads no index.
    by_name = {r.inputs["name"]: r for r in releases}
    for chart in (versions.VOLCANO, versions.KEDA, versions.CSI_DRIVER_NFS):
        r = by_name[chart.name]
        assert (r.inputs["chart"], r.inputs["version"]) == (chart.archive, chart.version)
        assert "repositoryOpts" not in r.inputs
