"""k3s pins: every pinned release is at or above its minor's recorded security floor (runc >= 1.3.3)."""

import pytest

from gpufleet.base import versions


def test_every_pinned_minor_has_a_security_floor():
    assert set(versions.K3S_RELEASES) == set(versions.K3S_SECURITY_FLOORS)


@pytest.mark.parametrize("minor", sorted(versions.K3S_RELEASES))
def test_pin_is_of_its_minor_and_not_older_than_its_floor(minor):
    pin, floor = versions.K3S_RELEASES[minor], versions.K3S_SECURITY_FLOORS[minor]
    assert pin.startswith(f"v{minor}.") and floor.startswith(f"v{minor}.")
    assert versions.k3s_version_key(pin) >= versions.k3s_version_key(floor), (
        f"k3s {pin} is older than {floor}, the first {minor} release with runc >= 1.3.3 "
        "(CVE-2025-31133, CVE-2025-52565, CVE-2025-52881)")


def test_a_pin_older_than_its_floor_would_be_refused(monkeypatch):
    # The 1.33 pin before issue 32 (runc v1.3.1) is below the floor: the check above must catch it.
    monkeypatch.setitem(versions.K3S_RELEASES, "1.33", "v1.33.5+k3s1")
    with pytest.raises(AssertionError, match="older than v1.33.6"):
        test_pin_is_of_its_minor_and_not_older_than_its_floor("1.33")


@pytest.mark.parametrize(
    "older,newer",
    [("v1.33.5+k3s1", "v1.33.6+k3s1"), ("v1.33.13+k3s1", "v1.33.13+k3s2"), ("v1.34.9+k3s1", "v1.34.10+k3s1"),
     ("v1.34.12+k3s1", "v1.35.0+k3s1")],
)
def test_k3s_versions_order_by_kubernetes_version_then_revision(older, newer):
    assert versions.k3s_version_key(older) < versions.k3s_version_key(newer)


@pytest.mark.parametrize("minor", sorted(versions.K3S_RELEASES))
def test_each_pin_is_the_newest_patch_with_recorded_checksums(minor):
    """Issue 49: a pin is the newest patch of its minor whose release checksums ../shared/reference/k3s/checksums.yaml
    records (with their tier), so no pin lags a checksummed release and none moves to one without checksums."""
    from tests.helpers import REFERENCE, load_yaml

    path = REFERENCE / "k3s" / "checksums.yaml"
    if not path.exists():
        pytest.skip(f"{path} absent: ../shared/reference is not beside this checkout")
    entries = load_yaml(path.read_text())["entries"]
    tagged = sorted({e["version"] for e in entries if e["version"].startswith(f"v{minor}.")}, key=versions.k3s_version_key)
    assert tagged and versions.K3S_RELEASES[minor] == tagged[-1]
    assert {e["tier"] for e in entries if e["version"] == tagged[-1]} <= {"nixpkgs", "third-party"}
