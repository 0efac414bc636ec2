"""The cluster autoscaler's cluster-wide scale-down flags render with the pinned chart (../shared/reference/charts,
a real helm: DESIGN.md section 6, layer 6) as the command-line flags the autoscaler reads (issue 51,
docs/upgrades.md). The GPU node groups' own settings are their autoscaling-options tags, not chart values
(tests/unit/test_autoscaler_scale_down.py)."""

from __future__ import annotations

import pytest

from gpufleet.base import versions
from tests.helpers import REFERENCE, by_type, planned

RELEASE = "kubernetes:helm.sh/v3:Release"


def test_scale_down_flags_reach_the_autoscaler_container():
    chart = versions.CLUSTER_AUTOSCALER
    archive = REFERENCE / "charts" / f"{chart.name}-{chart.version}.tgz"
    if not archive.exists():
        pytest.skip(f"{archive} absent (../shared/reference/charts)")
    from tests.helm import template

    (release,) = [r for r in by_type(planned("prod-eks"), RELEASE) if r.inputs["name"] == chart.name]
    objs = template(archive, release.revealed["values"], "kube-system", release="cluster-autoscaler", kube_version="1.35")
    (deployment,) = [o for o in objs if o.get("kind") == "Deployment"]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    flags = {a for a in container["command"] if a.startswith("--scale-down-")}
    assert flags == {"--scale-down-unneeded-time=10m", "--scale-down-delay-after-add=10m",
                     "--scale-down-utilization-threshold=0.5"}
