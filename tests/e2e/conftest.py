"""Fixtures of the e2e tier: built tools (or a skip saying how to build them), the local chart repository,
an API server per stack. Only `make e2e` collects this folder (tests/conftest.py)."""

from __future__ import annotations

import pytest

from tests.e2e import harness
from tests.e2e.chartrepo import ChartRepository
from tests.e2e.cluster import tools_present
from tests.helpers import REFERENCE


@pytest.fixture(scope="session")
def tools():
    missing = harness.missing_tools() + tools_present(harness.BIN)
    if missing:
        pytest.skip(f"e2e tools not built: {', '.join(sorted(set(missing)))} missing in {harness.TOOLS}; "
                    f"{harness.BUILD_HINT}")
    return harness.versions()


@pytest.fixture(scope="session")
def chart_repo(tmp_path_factory):
    charts = REFERENCE / "charts"
    if not charts.is_dir():
        pytest.skip(f"pinned Helm charts not found at {charts} (shared/ is not beside this checkout)")
    repo = ChartRepository(charts, tmp_path_factory.mktemp("charts"))
    yield repo
    repo.stop()


def pytest_terminal_summary(terminalreporter):
    if harness.TIMINGS.steps:
        terminalreporter.write_sep("-", "e2e: where the time went")
        terminalreporter.write_line(harness.TIMINGS.report())
