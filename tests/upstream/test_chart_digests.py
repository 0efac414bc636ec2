"""The chart digests in the pin table (gpufleet/base/versions.py `HelmChart.digest`) match the archives in
../shared/reference/charts: where the reference holds the file a repository publishes, its sha256 is the digest that
repository's index.yaml gives, which is what the pin records (issue 31)."""

from __future__ import annotations

import hashlib

import pytest

from gpufleet.base import versions
from gpufleet.base.versions import HelmChart
from tests.helpers import REFERENCE

CHARTS = REFERENCE / "charts"
WITH_DIGEST = [v for v in vars(versions).values() if isinstance(v, HelmChart) and v.digest]


def test_some_pins_carry_a_digest():
    assert {c.name for c in WITH_DIGEST} >= {"csi-driver-nfs", "gpu-operator-charts"}


@pytest.mark.parametrize("chart", WITH_DIGEST, ids=[c.name for c in WITH_DIGEST])
def test_recorded_digest_is_the_reference_archive(chart):
    archive = CHARTS / f"{chart.name}-{chart.version}.tgz"
    if not archive.exists():
        pytest.skip(f"{archive} absent: ../shared/reference/charts is not beside this checkout")
    assert hashlib.sha256(archive.read_bytes()).hexdigest() == chart.digest
