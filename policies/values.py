"""How the rules see a resource's properties: read-only, unknown-checking proxies, converted lazily.

pulumi_policy hands a rule `unknown_checking_proxy(deserialize_properties(MessageToDict(properties)))`:
numbers as floats, maps and lists as proxies that raise `UnknownValueError` when a preview-time unknown
is read, secrets unwrapped, assets and archives as pulumi objects. The proxies here give exactly that,
converting a value only when a rule reads it (rules read a few fields of a few resource types), from
one of two sources:

- a protobuf Struct, as the engine sends it over gRPC (`struct_props`: `_StructDict`, `_StructList`);
- plain values, as the offline plan holds them (`plain_props`: `_PlainDict`, `_PlainList`): the same
  JSON types the plan writes into that Struct, read as the Struct would read back (an int as a float,
  a tuple as a list), so the plan judges without building protobuf messages.

One thing differs, and a rule must not depend on it: the order of a map's keys. A Struct is a hash map
(parsed off the wire, its keys come in neither the program's order nor that of a Struct built here); a
dict keeps the program's. Rules sort what they list from a map.

tests/policy/test_servicer.py compares both with pulumi_policy's own servicer, verdict by verdict;
tests/policy/test_values.py compares the two sets of proxies read by read.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from pulumi_policy.deserialize import SPECIAL_SIG_KEY, deserialize_properties
from pulumi_policy.proxy import (
    UNKNOWN_ARCHIVE_VALUE,
    UNKNOWN_ARRAY_VALUE,
    UNKNOWN_ASSET_VALUE,
    UNKNOWN_BOOLEAN_VALUE,
    UNKNOWN_NUMBER_VALUE,
    UNKNOWN_OBJECT_VALUE,
    UNKNOWN_STRING_VALUE,
    _DictProxy,
    _is_unknown,
    _ListProxy,
)
from pulumi_policy.proxy import UnknownValueError as _Unknown



class _Remembers:
    """What policies/inputs.py `memo` keeps of a resource (its GPU pool, its exemption labels), kept on
    the resource's own props object: shared by every rule that reads the same props, gone with them."""

    _facts = None  # made on the first fact: most proxies are never asked

    def remember(self, what: str, compute) -> Any:
        facts = self._facts
        if facts is None:
            facts = self._facts = {}
        if what not in facts:
            facts[what] = compute(self)  # an unknown raises, and nothing is kept: it raises again next time
        return facts[what]


class _KeyedDict(_Remembers, _DictProxy):
    """What the Struct and plain dict proxies share: string keys only (a Struct has no others), and a
    membership test that reads the value, as Mapping's own does (so an unknown value raises)."""

    def __contains__(self, key) -> bool:
        if (type(key) is not str and not isinstance(key, str)) or key not in self._DictProxy__target:
            return False
        self[key]  # an unknown value raises, as Mapping's own __contains__ does
        return True

def _value(value) -> Any:
    """One google.protobuf.Value as json_format.MessageToDict gives it (numbers as floats)."""
    kind = value.WhichOneof("kind")
    if kind == "struct_value":
        return {k: _value(v) for k, v in value.struct_value.fields.items()}
    if kind == "list_value":
        return [_value(v) for v in value.list_value.values]
    if kind == "null_value" or kind is None:
        return None
    return getattr(value, kind)


def _wrap(value: Any, path: list) -> Any:
    if isinstance(value, dict):
        return _LazyDict(value, path)
    if isinstance(value, list):
        return _LazyList(value, path)
    return value


class _LazyDict(_Remembers, _DictProxy):
    """pulumi_policy's unknown-checking dict proxy, wrapping each nested value when it is first read
    instead of the whole tree up front (same errors, same paths, same types for isinstance)."""

    def __init__(self, target: dict, path: list):
        super().__init__(target, path)
        self._path = path
        self._seen: dict = {}

    def __contains__(self, key) -> bool:
        # Mapping's own __contains__ reads the value (raising on an unknown one): so does this.
        if key not in self._DictProxy__target:
            return False
        self[key]
        return True

    def __getitem__(self, key):
        if key in self._seen:
            return self._seen[key]
        value = self._DictProxy__target[key]
        if _is_unknown(value):
            raise _Unknown(value, [*self._path, str(key)])
        value = self._seen[key] = _wrap(value, [*self._path, str(key)])
        return value


class _LazyList(_ListProxy):
    def __init__(self, target: list, path: list):
        super().__init__(target, path)
        self._path = path

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        value = self._ListProxy__target[index]
        if _is_unknown(value):
            raise _Unknown(value, [*self._path, str(index)])
        return _wrap(value, [*self._path, str(index if index >= 0 else len(self) + index)])


_SCALARS = {"string_value", "number_value", "bool_value"}
_UNKNOWNS = frozenset((UNKNOWN_BOOLEAN_VALUE, UNKNOWN_NUMBER_VALUE, UNKNOWN_STRING_VALUE, UNKNOWN_ARRAY_VALUE,
                       UNKNOWN_ASSET_VALUE, UNKNOWN_ARCHIVE_VALUE, UNKNOWN_OBJECT_VALUE))  # proxy._is_unknown's set
_UNKNOWN_BYTES = tuple(sentinel.encode() for sentinel in sorted(_UNKNOWNS))


def _from_value(value, parent: tuple, key, asked=None) -> Any:
    """A protobuf Value as the rules see it: a proxy for a struct or list, else the scalar; an unknown
    raises UnknownValueError with the path upstream reports (built only then)."""
    kind = value.WhichOneof("kind")
    if kind in _SCALARS:
        scalar = getattr(value, kind)
        if kind == "string_value" and scalar in _UNKNOWNS:
            raise _Unknown(scalar, [*parent, str(key if asked is None else asked)])
        return scalar
    if kind == "struct_value":
        return _StructDict(value.struct_value.fields, (*parent, str(key)))
    if kind == "list_value":
        return _StructList(value.list_value.values, (*parent, str(key)))
    return None


class _KeptList(_ListProxy):
    """What the Struct and plain list proxies share: an element is converted (`convert`, a proxy for a
    container, the scalar otherwise; an unknown raises) the first time it is read, then kept."""

    convert: Callable[..., Any]

    def __init__(self, target, path: tuple):
        # _ListProxy.__init__ only stores these two; its path list is never read (__getitem__ is ours).
        self._ListProxy__target = target
        self._path = path
        self._seen: dict = {}  # position -> the element as read (lists are read whole: inputs.items)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        values = self._ListProxy__target
        if not -len(values) <= index < len(values):
            raise IndexError(index)
        own = index if index >= 0 else len(values) + index
        seen = self._seen
        if own not in seen:
            # A container is keyed by its own position; an unknown element is reported at the index asked.
            seen[own] = self.convert(values[own], self._path, own, index)
        return seen[own]

    def elements(self) -> list:
        """[self[i] for i in range(len(self))] in one pass (inputs.items() reads every element of a list)."""
        seen, values, path, convert = self._seen, self._ListProxy__target, self._path, self.convert
        out = []
        for i in range(len(values)):
            if i not in seen:
                seen[i] = convert(values[i], path, i, i)
            out.append(seen[i])
        return out


class _StructDict(_KeyedDict):
    """The unknown-checking dict proxy read straight from a protobuf Struct: a field is converted (and
    checked for an unknown value) only when a rule reads it; what rules never read is never converted.
    The key path (for the unknown-value message) is a tuple built only for nested containers."""

    def __init__(self, fields, path: tuple):
        # _DictProxy.__init__ only stores these two; its path list is never read (__getitem__ is ours).
        self._DictProxy__target = fields
        self._path = path
        self._seen: dict = {}

    def __getitem__(self, key):
        seen = self._seen
        if key in seen:
            return seen[key]
        fields = self._DictProxy__target
        if (type(key) is not str and not isinstance(key, str)) or key not in fields:  # fields[key] would insert a default
            raise KeyError(key)
        field = fields[key]
        kind = field.WhichOneof("kind")
        if kind == "string_value":  # the common case inline; _from_value does the same
            value = field.string_value
            if value in _UNKNOWNS:
                raise _Unknown(value, [*self._path, key])
        elif kind == "number_value" or kind == "bool_value":
            value = getattr(field, kind)
        else:
            value = _from_value(field, self._path, key)
        seen[key] = value
        return value

    def may_hold_key(self, prefix: str, paths) -> bool:
        """False only when no map at `paths` can hold a key starting with `prefix`, and reading them can
        raise nothing: a resource's root carries its Struct's serialization (`struct_props`), where every
        key and string is stored verbatim (UTF-8), so without the prefix in those bytes no key starts with
        it, and without an unknown's sentinel no read raises (a map on the way may be unknown)."""
        serialized = getattr(self, "serialized", None)
        if not isinstance(serialized, bytes) or prefix.encode() in serialized:
            return True
        return any(sentinel in serialized for sentinel in _UNKNOWN_BYTES)


class _StructList(_KeptList):
    """The unknown-checking list proxy read straight from a protobuf ListValue's values."""

    convert = staticmethod(_from_value)

    def column(self, key: str) -> list:
        """[get(element, key) for each element], read straight from the protobuf values (no proxy per
        element): None where an element is not a map, lacks the key or holds null there; an unknown
        element or value raises as reading it through the proxies would."""
        target = self._ListProxy__target
        # items() reads every element before any field: an unknown element (or a secret whose value is unknown)
        # raises before an unknown field of an earlier element does, so the column meets them in that order too.
        for i, value in enumerate(target):
            kind = value.WhichOneof("kind")
            if kind == "string_value" and value.string_value in _UNKNOWNS:
                raise _Unknown(value.string_value, [*self._path, str(i)])
            if kind == "struct_value" and SPECIAL_SIG_KEY in value.struct_value.fields:
                self[i]  # a secret or asset: deserializing it raises where its value is unknown
        out = []
        for i, value in enumerate(target):
            kind = value.WhichOneof("kind")
            if kind != "struct_value":
                out.append(None)
                continue
            fields = value.struct_value.fields
            if key not in fields:
                out.append(None)
                continue
            field = fields[key]
            if field.WhichOneof("kind") == "string_value" and field.string_value not in _UNKNOWNS:
                out.append(field.string_value)  # the common case, without building the key path
            else:
                out.append(_from_value(field, (*self._path, str(i)), key))
        return out



def struct_props(properties, raw: bytes = b"") -> Any:
    """A resource's properties as the rules read them: what pulumi_policy's own
    `unknown_checking_proxy(deserialize_properties(MessageToDict(properties)))` gives, read lazily from
    the Struct. Properties with a special value (secret, asset, archive) take upstream's eager path:
    deserializing them needs the whole tree (tests/policy/test_servicer.py compares the two)."""
    if not raw or SPECIAL_SIG_KEY.encode() in raw:
        return _LazyDict(deserialize_properties({k: _value(v) for k, v in properties.fields.items()}), [])
    root = _StructDict(properties.fields, ())
    root.serialized = raw  # lets a reader skip a search the bytes show cannot match (may_hold_key)
    return root


def plain_props(values: dict) -> Any:
    """A resource's properties given as plain values, as the rules read them: what `struct_props` gives
    for the Struct the same values would be written into (gpufleet.app.plan.policy_runner.analyze_request)."""
    return _PlainDict(values, ())


def _from_plain(value, parent: tuple, key, asked=None) -> Any:
    """One plain value as `_from_value` gives it from a Struct holding it: a number as a float (a Struct
    has no integers), a map or list as a proxy, a secret, asset or archive deserialized (`_special`); an
    unknown raises UnknownValueError with the path upstream reports (built only then)."""
    kind = type(value)
    if kind is str:
        if value in _UNKNOWNS:
            raise _Unknown(value, [*parent, str(key if asked is None else asked)])
        return value
    if kind is float or kind is bool:
        return value
    if kind is int:
        return float(value)
    if kind is dict:
        if SPECIAL_SIG_KEY in value:
            return _special(value, parent, key, asked)
        return _PlainDict(value, (*parent, str(key)))
    if kind is list:
        return _PlainList(value, (*parent, str(key)))
    if value is None:
        return None
    return _from_plain(_json(value), parent, key, asked)


def _json(value) -> Any:
    """A subclass or tuple as protobuf's Struct setter stores it (well_known_types._SetStructValue, whose
    order of checks this follows); any other type is refused, as that setter refuses it."""
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, (list, tuple)):
        return list(value)
    raise ValueError("Unexpected type")


def _floats(value) -> Any:
    """A plain value as json_format gives it back from a Struct (`_value`): every number a float."""
    kind = type(value)
    if kind is str or kind is float or kind is bool or value is None:
        return value
    if kind is int:
        return float(value)
    if kind is dict:
        return {k: _floats(v) for k, v in value.items()}
    if kind is list:
        return [_floats(v) for v in value]
    return _floats(_json(value))


def _special(value: dict, parent: tuple, key, asked=None) -> Any:
    """A secret, asset or archive (a map carrying Pulumi's signature key): deserialized as upstream's
    deserialize_properties does, then read through upstream-shaped proxies (`_LazyDict`), as the Struct
    path reads a resource holding one (`struct_props`): an unknown secret is reported at the index asked,
    a container keyed by its own position (`_LazyList`)."""
    value = deserialize_properties({"": _floats(value)})[""]
    if _is_unknown(value):
        raise _Unknown(value, [*parent, str(key if asked is None else asked)])
    return _wrap(value, [*parent, str(key)])


class _PlainDict(_KeyedDict):
    """The unknown-checking dict proxy over a plain dict: `_StructDict` for values the plan holds. A
    value is checked (and wrapped) only when a rule reads it; a container is wrapped once, so reading it
    twice gives the same proxy."""

    _seen: Optional[dict] = None  # the containers read so far, made on the first: most hold scalars only

    def __init__(self, target: dict, path: tuple):
        # _DictProxy.__init__ only stores these two; its path list is never read (__getitem__ is ours).
        self._DictProxy__target = target
        self._path = path

    def __getitem__(self, key):
        if type(key) is not str and not isinstance(key, str):  # a Struct has string keys only
            raise KeyError(key)
        value = self._DictProxy__target[key]
        kind = type(value)
        if kind is str:  # the common cases inline; _from_plain does the same
            if value in _UNKNOWNS:
                raise _Unknown(value, [*self._path, key])
            return value
        if kind is float or kind is bool:
            return value
        seen = self._seen
        if seen is None:
            seen = self._seen = {}
        elif key in seen:
            return seen[key]
        value = seen[key] = _from_plain(value, self._path, key)
        return value

    def may_hold_key(self, prefix: str, paths) -> bool:
        """False only when none of the maps at `paths` (key paths from here) holds a key starting with
        `prefix`, looked up in the plain values without wrapping them. True as soon as reading a path
        through the proxies could do more than find a map or nothing (an unknown raises, a secret is
        deserialized): the caller then reads it that way."""
        for path in paths:
            value = self._DictProxy__target
            for step in path:
                value = value.get(step)
                kind = type(value)
                if kind is dict:
                    if SPECIAL_SIG_KEY in value:
                        return True
                    continue
                if kind is str and value in _UNKNOWNS:
                    return True
                if value is not None and kind not in (str, float, int, bool, list):
                    return True  # a subclass or tuple: read it as the proxies do
                value = None  # absent, or not a map: nothing below it
                break
            if value is not None and any(type(key) is str and key.startswith(prefix) for key in value):
                return True
        return False


class _PlainList(_KeptList):
    """`_StructList` for a plain list."""

    convert = staticmethod(_from_plain)

    def column(self, key: str) -> list:
        """[get(element, key) for each element] (policies/inputs.py `column`), as `_StructList.column`: None
        where an element is not a map, lacks the key or holds null there; an unknown element or value
        raises as reading it through the proxies would."""
        target = self._ListProxy__target
        for i, value in enumerate(target):  # as _StructList.column: unknown elements first, as items() meets them
            if (type(value) is str and value in _UNKNOWNS) or (type(value) is dict and SPECIAL_SIG_KEY in value):
                self[i]  # raises where the element (or a secret's value) is unknown
        out = []
        path = self._path
        for i, value in enumerate(target):
            if type(value) is dict and SPECIAL_SIG_KEY not in value:
                field = value.get(key)
                if field is None or (type(field) is str and field not in _UNKNOWNS):
                    out.append(field)  # the common cases, without building the key path
                else:
                    field = _from_plain(field, (*path, str(i)), key)
                    out.append(field)
                continue
            element = self[i]  # an unknown element raises; a secret or asset is deserialized
            if isinstance(element, _DictProxy):
                out.append(element[key] if key in element else None)
            else:
                out.append(None)
        return out
