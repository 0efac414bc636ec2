"""The rules read plain inputs (gpufleet plan) exactly as they read the engine's Struct (pulumi preview).

policies/values.py gives the rules a resource's properties through two sets of proxies: over the
protobuf Struct the engine sends, and over the plain values the offline plan holds. For any value the
plan could hold, reading it through either must give the same answers and raise the same errors: numbers
as floats, secrets unwrapped, assets as objects, preview-time unknowns raising with the same path. The
servicer-level comparison (test_servicer.py) covers the rules on real plans; this one covers every way a
rule can read a value, on generated values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from pulumi_policy.proxy import UNKNOWN_NUMBER_VALUE, UNKNOWN_OBJECT_VALUE, UNKNOWN_STRING_VALUE, UnknownValueError

from gpufleet.app.plan.policy_runner import to_struct
from gpufleet.policies import inputs as I
from gpufleet.policies.values import plain_props, struct_props

SIG = "4dabf18193072939515e22adb298388d"
SECRET = "1b47061264138c4ac30d75fd1eb44270"
ASSET = "c44067f5952c0a294b673a41bacd8c17"
KEYS = ["a", "b", "tags", "labels", "metadata", "nodeConfig", "gpufleet.io/exempt-x", "gpufleet.io/exempt-y"]

scalars = st.one_of(
    st.sampled_from(["", "v", "true", "ml", "gpufleet.io/exempt-x", UNKNOWN_STRING_VALUE, UNKNOWN_NUMBER_VALUE]),
    st.integers(-3, 3),
    st.floats(-10, 10, allow_nan=False).map(lambda f: round(f, 2)),
    st.booleans(),
    st.none(),
)


def _special(value):
    return st.one_of(st.just({SIG: SECRET, "value": value}), st.just({SIG: ASSET, "path": "file.txt"}))


values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.sampled_from(KEYS), inner, max_size=4),
        inner.flatmap(_special),
        st.just(UNKNOWN_OBJECT_VALUE),
    ),
    max_leaves=20,
)
resources = st.dictionaries(st.sampled_from(KEYS), values, max_size=6)


def both(properties: dict):
    struct = to_struct(properties)
    return struct_props(struct, struct.SerializeToString(deterministic=True)), plain_props(properties)


def outcome(read):
    """read()'s value as a comparable tree, or the unknown-value error it raised (with its message and path)."""
    try:
        return tree(read())
    except UnknownValueError as e:
        return ("unknown", e.message)


def tree(value):
    """Every way a rule reads a value, recorded: a map's keys, length, membership and each value; a list's
    length, each element (also from the end), slices and the inputs helpers' one-pass reads."""
    if type(value) is list:  # what a slice or a one-pass read returns: the elements as read
        return ("elements", [tree(element) for element in value])
    if isinstance(value, Mapping):
        keys = sorted(value)
        return ("map", keys, len(value), [outcome(lambda k=k: k in value) for k in [*keys, "absent"]],
                {k: outcome(lambda k=k: value[k]) for k in keys}, outcome(lambda: value.get("absent", "default")))
    if isinstance(value, Sequence) and not isinstance(value, str):
        n = len(value)
        return ("list", n, [outcome(lambda i=i: value[i]) for i in range(-n, n)], outcome(lambda: value[1:3]),
                outcome(lambda: I.items(value)), outcome(lambda: I.column(value, "a")), outcome(lambda: list(value)))
    return (type(value).__name__, getattr(value, "path", value))


@settings(max_examples=300, deadline=None)
@given(resources)
# An unknown element after an element whose field is an unknown secret: I.column meets the element first, as items()
# does (found by this test; plain and Struct lists disagreed).
@example({"a": [{"a": {SIG: SECRET, "value": UNKNOWN_STRING_VALUE}}, UNKNOWN_OBJECT_VALUE]})
@example({"a": [{SIG: SECRET, "value": UNKNOWN_OBJECT_VALUE}, UNKNOWN_OBJECT_VALUE]})
def test_plain_inputs_read_as_their_struct_reads(properties):
    struct, plain = both(properties)
    assert outcome(lambda: plain) == outcome(lambda: struct)


@settings(max_examples=300, deadline=None)
@given(resources)
def test_exemption_labels_and_the_shortcut_agree(properties):
    """`may_hold_key` may skip the search only where the search would find nothing and raise nothing."""
    struct, plain = both(properties)
    found = outcome(lambda: I._find_exemption_labels(plain))
    assert found == outcome(lambda: I._find_exemption_labels(struct))
    if not plain.may_hold_key(I._EXEMPT_PREFIX, I._CARRIERS):
        plain_without_shortcut = plain_props(properties)
        plain_without_shortcut.may_hold_key = None  # the full search, as for props that cannot tell
        assert found == outcome(lambda: I._find_exemption_labels(plain_without_shortcut)) == tree({})


def test_numbers_are_floats_secrets_unwrapped_unknowns_raise_with_their_path():
    plain = plain_props({"n": 3, "s": {SIG: SECRET, "value": {"k": [1, UNKNOWN_STRING_VALUE]}}, "t": (1, 2)})
    assert type(plain["n"]) is float and plain["n"] == 3.0
    assert plain["s"]["k"][0] == 1.0 and list(plain["t"]) == [1.0, 2.0]
    with pytest.raises(UnknownValueError) as raised:
        plain["s"]["k"][1]
    assert raised.value.message == "string value at .s.k.1 can't be known during preview"


def test_facts_live_on_the_props_not_in_a_module_cache():
    """A resource's memoized facts go with its props: evaluating plan after plan keeps nothing."""
    plain = plain_props({"tags": {"a": "b"}})
    before = len(I._MEMO)
    assert I.memo(plain, "fact", lambda props: ["computed"]) is I.memo(plain, "fact", lambda props: ["again"])
    assert len(I._MEMO) == before
