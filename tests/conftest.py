import os

import pytest

from tests.helpers import REFERENCE, changed_shared_plans

# tests/e2e drives the real Pulumi CLI and API server: only `make e2e` runs it (docs/e2e.md).
collect_ignore = [] if os.environ.get("GPUFLEET_E2E") else ["e2e"]


@pytest.fixture
def reference():
    """../shared/reference, or a skip with the reason when this checkout has no shared/ beside it."""
    if not REFERENCE.is_dir():
        pytest.skip(f"upstream reference data not found at {REFERENCE} (shared/ is not beside this checkout)")
    return REFERENCE


@pytest.fixture(scope="session", autouse=True)
def shared_plans_stay_unchanged():
    """Tests share each example stack's plan (tests.helpers.planned): none may change it for the tests after it."""
    yield
    changed = changed_shared_plans()
    assert not changed, f"a test changed the shared plan of {', '.join(changed)}: copy what you change (copy.deepcopy)"
