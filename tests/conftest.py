import pytest

from tests.helpers import REFERENCE


@pytest.fixture
def reference():
    """../shared/reference, or a skip with the reason when this checkout has no shared/ beside it."""
    if not REFERENCE.is_dir():
        pytest.skip(f"upstream reference data not found at {REFERENCE} (shared/ is not beside this checkout)")
    return REFERENCE
