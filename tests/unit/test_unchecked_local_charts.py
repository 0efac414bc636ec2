"""Charts installed from a `gpufleet:registry.charts` directory whose pin records no sha256 (issue 48): the plan warns
per chart, naming it, since the program hands that file to Helm as it finds it. The reference charts' packages are
rebuilds (`helm package` of the tag, ../shared/reference/charts/SOURCES.md), not the files their publishers serve,
so their sha256 cannot stand in for the publisher's digest."""

from __future__ import annotations

from gpufleet.base import versions
from tests.helpers import example_config, planned, plan_config

UNCHECKED = ("gpu-operator", "jobset", "kueue")


def _unchecked(plan) -> list[str]:
    return [w.message for w in plan.warnings if w.path == "gpufleet:registry.charts"]


def test_each_chart_without_a_recorded_digest_is_named_in_the_airgap_k3s_plan():
    messages = _unchecked(planned("airgap-k3s"))
    pins = {"gpu-operator": ("GPU_OPERATOR", versions.GPU_OPERATOR), "jobset": ("JOBSET", versions.JOBSET),
            "kueue": ("KUEUE", versions.KUEUE)}
    assert messages == [
        f"chart {chart.name} {chart.version} (versions.{constant}): no sha256 is recorded for this version, so its "
        "archive in /srv/gpufleet/charts is installed as found, unchecked: compare it with what its publisher lists "
        "before `pulumi up`"
        for constant, chart in (pins[name] for name in UNCHECKED)]
    assert all(not pin.digest for _, pin in pins.values())


def test_charts_from_an_oci_source_or_the_public_repositories_are_not_listed():
    assert _unchecked(planned("airgap-eks")) == []
    config = example_config("airgap-k3s")
    del config["gpufleet:registry"]["charts"]
    assert _unchecked(plan_config(config, policies=False)) == []
