"""The chart digests in the pin table (gpufleet/base/versions.py `HelmChart.digest`) match the archives in
../shared/reference/charts where the reference holds the very file a repository publishes (its SOURCES.md says "the
published package itself"): its sha256 is the digest that repository's index.yaml gives, which is what the pin records
(issue 31). The other reference archives are `helm package` builds of the upstream tag, whose bytes differ from the
published file (a tar's timestamps), so they cannot vouch for a digest."""

from __future__ import annotations

import hashlib

import pytest

from gpufleet.base import versions
from gpufleet.base.versions import HelmChart
from tests.helpers import REFERENCE

CHARTS = REFERENCE / "charts"
WITH_DIGEST = [v for v in vars(versions).values() if isinstance(v, HelmChart) and v.digest]


def _published_in_reference() -> set[str]:
    """Reference archives that are the published file itself, by the `how packaged` column of charts/SOURCES.md."""
    rows = [line.split("|") for line in (CHARTS / "SOURCES.md").read_text().splitlines() if line.startswith("| ")]
    return {row[1].strip() for row in rows if row[-2].strip().startswith("the published package itself")}


def test_every_archive_pin_carries_a_digest_but_volcanos():
    archived = {v.name for v in vars(versions).values() if isinstance(v, HelmChart) and v.archive}
    assert {c.name for c in WITH_DIGEST} >= archived - {"volcano"}
    assert {c.name for c in WITH_DIGEST} >= {"csi-driver-nfs", "gpu-operator-charts", "keda", "kube-prometheus-stack",
                                             "kube-state-metrics", "prometheus-node-exporter", "cluster-autoscaler",
                                             "aws-efa-k8s-device-plugin"}


@pytest.mark.parametrize("chart", WITH_DIGEST, ids=[c.name for c in WITH_DIGEST])
def test_recorded_digest_is_the_reference_archive(chart):
    archive = CHARTS / f"{chart.name}-{chart.version}.tgz"
    if not archive.exists():
        pytest.skip(f"{archive} absent: ../shared/reference/charts is not beside this checkout, or has no copy")
    if archive.name not in _published_in_reference():
        pytest.skip(f"{archive.name} is a `helm package` build of the tag (charts/SOURCES.md), not the published file")
    assert hashlib.sha256(archive.read_bytes()).hexdigest() == chart.digest


def test_the_published_reference_archives_are_the_ones_known():
    """csi-driver-nfs (4.12.1, and 4.13.4 added in the fifth wave) and the AMD GPU Operator are kept as published; if
    a row changes, the skips above change too."""
    if not (CHARTS / "SOURCES.md").exists():
        pytest.skip("../shared/reference/charts is not beside this checkout")
    assert _published_in_reference() == {"csi-driver-nfs-4.12.1.tgz", "csi-driver-nfs-4.13.4.tgz",
                                         "gpu-operator-charts-v1.5.1.tgz"}
