import pytest


@pytest.mark.parametrize("text, label", [
    ("always-on: keeps p99 latency low", "always-on-keeps-p99-latency-low"),
    ("  -- lab box --  ", "lab-box"),
    ("x" * 80, "x" * 63),
    ("a" * 62 + " !b", "a" * 62),
    ("!!!", "exempt"),
])
def test_label_safe_is_a_valid_label_value(text, label):
    from gpufleet.base.labels import label_safe
    from gpufleet.base.spec.k8s_syntax import label_value

    assert label_safe(text) == label
    assert label_value(label_safe(text)) is None
