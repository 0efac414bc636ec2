"""Every Helm chart gpufleet installs comes from the pin table (gpufleet/base/versions.py) at an exact version, from a
repository or archive URL that does not move: no index on a branch, GitHub Pages included (issue 31, "Every download at
deploy time is verified")."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from gpufleet.base import catalog, versions
from gpufleet.base.versions import HelmChart
from gpufleet.components.helm_chart import chart_args
from tests.helpers import STACKS, by_type, planned

PINS: dict[str, HelmChart] = {v.name: v for v in vars(versions).values() if isinstance(v, HelmChart)}
RELEASE = "kubernetes:helm.sh/v3:Release"
# An exact SemVer 2 version, with or without the leading v some charts publish: no range, no `latest`.
EXACT = re.compile(r"v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?")
COMMIT = re.compile(r"[0-9a-f]{40}")
# A GitHub release asset: https://github.com/<owner>/<repo>/releases/download/<tag>/<file>. Its bytes are fixed by the
# project not replacing the asset of a published release (docs/security.md), not by a commit.
RELEASE_ASSET = re.compile(r"https://github\.com/[\w.-]+/[\w.-]+/releases/download/[^/]+/[^/]+\.tgz")
# Chart repositories served by GitHub Pages (an index.yaml regenerated on a branch) that a pin may still name, each with
# the exact reason it could not be pinned to an archive. None today (issue 31): every chart that was served from one now
# names the archive at a commit or the release asset that index points to. A new github.io repository fails here.
GITHUB_PAGES_INDEXES: dict[str, str] = {}
# Pins with an archive but no recorded digest, each with the reason none could be read.
NO_DIGEST = {
    "volcano": "chart 1.15.1 (tag v1.15.1, 2026-07-30) is newer than the newest volcano-sh/helm-charts index we could "
               "read (main be34e957, 2026-06-01, snapshot 2026-06-14), which lists 1.15.0 at most",
}


def _allowed_args() -> list[dict]:
    """Release arguments every pinned chart may produce: the GPU Operator at any release the catalog knows (a stack
    picks one with gpufleet:gpuOperator.version), every other chart at its one pin."""
    out = [chart_args(chart) for chart in PINS.values()]
    out += [chart_args(replace(versions.GPU_OPERATOR, version=v)) for v in catalog.operator_releases()]
    return out


@pytest.mark.parametrize("chart", list(PINS.values()), ids=list(PINS))
def test_every_pin_is_an_exact_version_from_a_repository_that_does_not_move(chart):
    assert EXACT.fullmatch(chart.version), chart.version
    url = chart.archive or chart.repo
    assert url.startswith(("https://", "oci://")), url
    for u in filter(None, (chart.repo, chart.archive)):
        if "raw.githubusercontent.com" in u:
            # owner/repo/<ref>/...: the ref must be a commit, never a branch or tag name that can be moved.
            ref = u.split("raw.githubusercontent.com/", 1)[1].split("/")[2]
            assert COMMIT.fullmatch(ref), f"{chart.name}: {u} is not pinned to a commit"
    if ".github.io" in chart.repo:
        assert chart.repo in GITHUB_PAGES_INDEXES, f"{chart.name}: {chart.repo} is a GitHub Pages index (a moving branch)"
    if chart.archive:
        assert chart.archive.endswith(f"/{chart.name}-{chart.version}.tgz")
        assert "raw.githubusercontent.com" in chart.archive or RELEASE_ASSET.fullmatch(chart.archive), chart.archive
        # Helm reads no index for an archive: `repo` only names where the digest was read, an index at a commit.
        assert "raw.githubusercontent.com" in chart.repo, f"{chart.name}: {chart.repo} is not an index at a commit"
        assert chart.digest or chart.name in NO_DIGEST, f"{chart.name}: an archive without a digest needs a reason"
    if chart.digest:
        assert re.fullmatch(r"[0-9a-f]{64}", chart.digest)


def test_no_pin_is_exempted_without_need():
    assert set(NO_DIGEST) == {c.name for c in PINS.values() if c.archive and not c.digest}
    assert set(GITHUB_PAGES_INDEXES) == {c.repo for c in PINS.values() if ".github.io" in c.repo}


def test_every_catalog_operator_release_is_an_exact_version():
    for version in catalog.operator_releases():
        assert EXACT.fullmatch(version), version


@pytest.fixture(scope="module", params=STACKS)
def releases(request):
    return request.param, by_type(planned(request.param), RELEASE)


def test_every_release_a_stack_emits_is_a_pinned_chart(releases):
    """Every release is a pin's chart and version, from the pin's repository or, with gpufleet:registry.charts (the
    air-gapped examples), from the stack's own chart source (components/helm_chart.py chart_args)."""
    stack, found = releases
    source = planned(stack).spec.registry.charts
    allowed = _allowed_args() if source is None else [chart_args(chart, source) for chart in PINS.values()]
    for r in found:
        args = {"chart": r.inputs["chart"], "version": r.inputs["version"]}
        if "repositoryOpts" in r.inputs:
            args["repository_opts"] = dict(r.inputs["repositoryOpts"])
        assert args in allowed, (stack, r.name, args)
        assert EXACT.fullmatch(args["version"]), (stack, r.name, args["version"])
        assert not r.inputs.get("devel"), (stack, r.name, "devel lets Helm pick a pre-release")
