import gc
import os
import shutil
import sys
import tempfile

import pytest

from gpufleet.app.plan.chart_archives import CHARTS_DIR_ENV
from tests import run_cache, schedule
from tests.helpers import CHARTS, REFERENCE, changed_shared_plans

# Plans judge support calendars and the catalog's age on this date, never the wall clock (issue 32): a plan's warnings
# must not change overnight under a test. Tests about dates pass their own (catalog_warnings(..., today), plan --today).
os.environ["GPUFLEET_TODAY"] = "2026-12-04"
# Plans validate custom resources against the CRDs in the pinned chart archives (docs/validation.md): the reference's,
# never a developer's own cache, so every run judges the same charts. Without ../shared the plans warn that they could
# not validate, and the tests that need the check skip (the `charts` fixture).
os.environ[CHARTS_DIR_ENV] = str(CHARTS)

# tests/e2e drives the real Pulumi CLI and API server: only `make e2e` runs it (docs/e2e.md).
collect_ignore = [] if os.environ.get("GPUFLEET_E2E") else ["e2e"]


def pytest_configure(config):
    """The run's shared directory (tests/run_cache.py), made by the process that starts the run, before it starts
    its workers (they inherit the environment); a run inside another (a test running pytest) uses its parent's."""
    if not hasattr(config, "workerinput") and not os.environ.get(run_cache.ENV):
        os.environ[run_cache.ENV] = config._gpufleet_run_cache = tempfile.mkdtemp(prefix="gpufleet-test-run-")


def pytest_unconfigure(config):
    made = getattr(config, "_gpufleet_run_cache", None)
    if made:
        shutil.rmtree(made, ignore_errors=True)
        del os.environ[run_cache.ENV]


def pytest_collection_modifyitems(items):
    """The heaviest files first, the spread ones last (tests/schedule.py); otherwise as collected. Every worker sorts
    alike, so they still collect the same list."""
    items.sort(key=lambda item: schedule.rank(item.nodeid))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """`--dist loadfile` (make test) with tests/schedule.py's queue; any other mode as xdist does it."""
    if config.getoption("dist") == "loadfile":
        return schedule.scheduler(config, log)
    return None


# How many modules were loaded when the collector last froze what was alive (see below).
_frozen_at_modules = 0


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """After a test that loaded a hundred modules or more (a cloud SDK, the policy pack, hypothesis), collect once
    and freeze what is alive (gc.freeze): the SDKs' hundreds of thousands of objects live until the worker exits,
    and every automatic full collection walked them again to find nothing, about a fifth of a worker's CPU time
    (engine.collector_paused says the same of one plan). A few collections a run instead; a test's own garbage is
    collected as before. No test depends on the collector (none calls gc or holds weak references)."""
    global _frozen_at_modules
    yield
    if len(sys.modules) - _frozen_at_modules >= 100:
        gc.collect()
        gc.freeze()
        _frozen_at_modules = len(sys.modules)


@pytest.fixture
def reference():
    """../shared/reference, or a skip with the reason when this checkout has no shared/ beside it."""
    if not REFERENCE.is_dir():
        pytest.skip(f"upstream reference data not found at {REFERENCE} (shared/ is not beside this checkout)")
    return REFERENCE


@pytest.fixture
def charts():
    """../shared/reference/charts (the pinned chart archives), or a skip with the reason when it is absent."""
    if not CHARTS.is_dir():
        pytest.skip(f"pinned chart archives not found at {CHARTS} (shared/ is not beside this checkout): "
                    "custom resources are not validated against their CRDs")
    return CHARTS


@pytest.fixture(scope="session", autouse=True)
def shared_plans_stay_unchanged():
    """Tests share each example stack's plan (tests.helpers.planned): none may change it for the tests after it."""
    yield
    changed = changed_shared_plans()
    assert not changed, f"a test changed the shared plan of {', '.join(changed)}: copy what you change (copy.deepcopy)"
