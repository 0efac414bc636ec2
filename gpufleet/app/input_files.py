"""Reading the files the `gpufleet` command is handed: stack files, kubeconfigs, plan and preview JSON.

Each reader gives the document or raises `InputFileError` with one line naming the file and what is wrong
with it (the command prints it and exits 2): unreadable, not UTF-8, not YAML/JSON (with the line and column),
nested deeper than gpufleet.base.limits allows, or (YAML) expanding its aliases to more values than a stack
file holds. Nothing here raises anything else on any content: the limits stop the parsers before Python's
recursion limit or memory does.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Union

import yaml

from gpufleet.base import limits


class InputFileError(Exception):
    """A file the command reads is missing, unreadable or not a document it can read; str() is one line."""


class NotParsable(InputFileError):
    """The text is not YAML (or JSON) at all, as opposed to a document over a limit."""


def read_text(path: Union[str, Path], what: str) -> str:
    """The file's text, which must be UTF-8 (what Pulumi and every YAML/JSON tool here write)."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InputFileError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputFileError(
            f"{what} {path} is not UTF-8 text: byte 0x{data[exc.start]:02x} at offset {exc.start} (line {line})"
        ) from None


class _LimitedLoader(yaml.SafeLoader):
    """PyYAML's safe loader (plain data only), composing at most `max_depth` nested maps and lists and at most
    `max_values` values once aliases are expanded, and refusing an alias to a node that contains it.

    The limits are checked while the document is composed, before PyYAML's composer (one Python call per
    level) reaches the recursion limit and before a value is constructed: a "billion laughs" document is
    refused after reading its few lines."""

    max_depth = limits.STACK_FILE_MAX_DEPTH
    max_values = limits.STACK_FILE_MAX_VALUES

    def __init__(self, stream):
        super().__init__(stream)
        self._depth = 0
        self._values = 0
        self._weight: dict[int, int] = {}  # id(node) -> values in it, aliases expanded (set once it is composed)

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            node = super().compose_node(parent, index)
            weight = self._weight.get(id(node))
            if weight is None:  # its anchor's node is still being composed: the alias is inside it
                raise _Refused(f"the alias *{event.anchor} at {_where(event.start_mark)} refers to a map or list "
                               "that contains it (a recursive structure)")
            self._count(weight, event.start_mark)
            return node
        event = self.peek_event()
        nests = isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent))
        if nests and self._depth >= self.max_depth:
            raise _Refused(f"maps and lists nest deeper than {self.max_depth} levels at {_where(event.start_mark)}")
        self._depth += nests
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= nests
        if isinstance(node, yaml.SequenceNode):
            weight = 1 + sum(self._weight.get(id(child), 1) for child in node.value)
        elif isinstance(node, yaml.MappingNode):
            weight = 1 + sum(self._weight.get(id(k), 1) + self._weight.get(id(v), 1) for k, v in node.value)
        else:
            weight = 1
        self._weight[id(node)] = weight
        self._count(1, event.start_mark)
        return node

    def _count(self, values: int, mark) -> None:
        self._values += values
        if self._values > self.max_values:
            raise _Refused(f"holds more than {self.max_values:,} values once its aliases are expanded "
                           f"(at {_where(mark)})")


class _Refused(Exception):
    """A limit of `_LimitedLoader` (a message without the file's name)."""


def _where(mark) -> str:
    return f"line {mark.line + 1}, column {mark.column + 1}"


def parse_yaml(text: str, where: str, *, max_depth: int = limits.STACK_FILE_MAX_DEPTH) -> Any:
    """The one YAML document in `text` (None when empty), read as plain data within the limits; `where` names
    the file in the error."""
    loader = None
    try:
        loader = _LimitedLoader(text)  # its reader refuses control characters here already
        loader.max_depth = max_depth
        return loader.get_single_data()
    except _Refused as exc:
        raise InputFileError(f"{where}: {exc}") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        at = f" at {_where(mark)}" if mark is not None else ""
        raise NotParsable(f"{where} is not valid YAML{at}: {exc.problem or exc.context}") from None
    except yaml.reader.ReaderError as exc:
        raise NotParsable(f"{where} is not valid YAML: character #x{exc.character:04x} at offset {exc.position} "
                          "(control characters are not allowed)") from None
    except yaml.YAMLError as exc:
        raise NotParsable(f"{where} is not valid YAML: {' '.join(str(exc).split())}") from None
    finally:
        if loader is not None:
            loader.dispose()


def load_yaml(path: Union[str, Path], what: str) -> Any:
    """A UTF-8 YAML file within the stack-file limits (see `parse_yaml`)."""
    return parse_yaml(read_text(path, what), f"{what} {path}")


def parse_json(text: str, where: str, *, max_depth: int = limits.JSON_MAX_DEPTH) -> Any:
    """One JSON value, nested at most `max_depth` deep."""
    try:
        value = json.loads(text)
    except RecursionError:  # json's C decoder counts its levels against the recursion limit, and unwinds
        raise InputFileError(f"{where}: maps and lists nest deeper than {max_depth} levels") from None
    except json.JSONDecodeError as exc:
        raise NotParsable(f"{where} is not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    check_depth(value, where, max_depth)
    return value


def check_depth(value: Any, where: str, max_depth: int = limits.JSON_MAX_DEPTH) -> None:
    if limits.depth(value) > max_depth:
        raise InputFileError(f"{where}: maps and lists nest deeper than {max_depth} levels")
