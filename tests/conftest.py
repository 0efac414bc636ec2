import os

import pytest

from tests.helpers import REFERENCE

# tests/e2e drives the real Pulumi CLI and API server: only `make e2e` runs it (docs/e2e.md).
collect_ignore = [] if os.environ.get("GPUFLEET_E2E") else ["e2e"]


@pytest.fixture
def reference():
    """../shared/reference, or a skip with the reason when this checkout has no shared/ beside it."""
    if not REFERENCE.is_dir():
        pytest.skip(f"upstream reference data not found at {REFERENCE} (shared/ is not beside this checkout)")
    return REFERENCE
